package io.lockhygiene.it.bed;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * {@code @ExtendWith(TestBedExtension.class)} gives a test the run's {@link TestBed} as a parameter.
 * The bed starts once per run and is closed when the run ends (JUnit's root store), also after a
 * failure. After each test the process's lock holders are shut down and forgotten, so that no test sees
 * another's holder (its placement, its connections, its waits).
 */
public final class TestBedExtension implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(TestBedExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
        return p.getParameter().getType() == TestBed.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext c) {
        return c.getRoot().getStore(NS).getOrComputeIfAbsent("bed", k -> new Closing(TestBed.shared()), Closing.class).bed;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        io.lockhygiene.it.bed.Holders.reset();
    }

    /** Closes the bed when the root context closes. */
    private static final class Closing implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final TestBed bed;

        Closing(TestBed bed) {
            this.bed = bed;
        }

        @Override
        public void close() {
            bed.close();
        }
    }
}
