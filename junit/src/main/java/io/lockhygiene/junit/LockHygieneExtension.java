package io.lockhygiene.junit;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.AnnotatedElement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test whose code, through the driver or the agent, leaked or inherited an advisory lock or had a
 * statement rejected in strict mode, and (with the JUnit configuration parameter
 * {@code lockhygiene-junit.failOnSkipLocked=true}) one that hit the SKIP LOCKED single-key trap. The
 * message names each violation: type, key, mode, SQL (as cut by logSql) and the stack where the lock was
 * taken. {@link AllowLockHygieneViolation} lets an intended one pass.
 *
 * <p>Use {@code @ExtendWith(LockHygieneExtension.class)}, or enable JUnit's extension auto-detection
 * ({@code junit.jupiter.extensions.autodetection.enabled=true}): the jar registers it.
 *
 * <p>Events belong to the test running on the thread that caused them, and to threads that thread
 * starts (an inheritable thread-local), so parallel tests do not see each other's events. Work done on
 * threads created before the test (a shared executor, a pool's housekeeping) counts for no test.
 */
public final class LockHygieneExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback,
        AfterAllCallback {
    static final String FAIL_ON_SKIP_LOCKED = "lockhygiene-junit.failOnSkipLocked";
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LockHygieneExtension.class);
    private static final Set<EventType> VIOLATIONS = EnumSet.of(EventType.LEAK_RELEASED, EventType.INHERITED_RELEASED,
            EventType.REJECTED);
    private static final InheritableThreadLocal<Recorder> CURRENT = new InheritableThreadLocal<>();
    private static final Router ROUTER = new Router();

    static {
        LockHygiene.addListener(ROUTER);
    }

    /** Sends each event to the recorder of the test running on its thread. */
    private static final class Router implements LockHygieneListener {
        @Override
        public void onEvent(LockHygieneEvent event) {
            Recorder r = CURRENT.get();
            if (r != null) {
                r.add(event);
            }
        }
    }

    private static final class Recorder {
        final List<LockHygieneEvent> events = Collections.synchronizedList(new ArrayList<>());

        void add(LockHygieneEvent e) {
            events.add(e);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Recorder r = new Recorder();
        context.getStore(NS).put("class", r);
        CURRENT.set(r);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Recorder r = new Recorder();
        context.getStore(NS).put("test", r);
        CURRENT.set(r);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Recorder r = context.getStore(NS).get("test", Recorder.class);
        Recorder parent = context.getParent().map(p -> p.getStore(NS).get("class", Recorder.class)).orElse(null);
        CURRENT.set(parent);
        if (r != null) {
            failOn(r, context);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Recorder r = context.getStore(NS).get("class", Recorder.class);
        CURRENT.remove();
        if (r != null) {
            failOn(r, context);
        }
    }

    private static void failOn(Recorder recorder, ExtensionContext context) {
        boolean skipLocked = context.getConfigurationParameter(FAIL_ON_SKIP_LOCKED).map(Boolean::parseBoolean).orElse(false);
        List<AllowLockHygieneViolation> allowed = allowances(context);
        List<LockHygieneEvent> violations = new ArrayList<>();
        synchronized (recorder.events) {
            for (LockHygieneEvent e : recorder.events) {
                boolean counts = VIOLATIONS.contains(e.type()) || (skipLocked && e.type() == EventType.SKIP_LOCKED_SINGLE_KEY);
                if (skipLocked && e.type() == EventType.REJECTED && e.message() != null && e.message().contains("SKIP LOCKED")) {
                    counts = false; // the SKIP_LOCKED_SINGLE_KEY event of the same statement says it
                }
                if (counts && !isAllowed(e, allowed)) {
                    violations.add(e);
                }
            }
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(message(context, violations));
        }
    }

    private static List<AllowLockHygieneViolation> allowances(ExtensionContext context) {
        List<AllowLockHygieneViolation> all = new ArrayList<>();
        for (Optional<? extends AnnotatedElement> element : List.of(context.getElement(),
                context.getTestClass().map(c -> (AnnotatedElement) c))) {
            element.ifPresent(el -> Collections.addAll(all, el.getAnnotationsByType(AllowLockHygieneViolation.class)));
        }
        return all;
    }

    private static boolean isAllowed(LockHygieneEvent e, List<AllowLockHygieneViolation> allowed) {
        for (AllowLockHygieneViolation a : allowed) {
            boolean type = a.value().length == 0 || List.of(a.value()).contains(e.type());
            boolean key = a.key().isEmpty() || a.key().equals(e.key());
            if (type && key) {
                return true;
            }
        }
        return false;
    }

    static String message(ExtensionContext context, List<LockHygieneEvent> violations) {
        StringBuilder sb = new StringBuilder();
        sb.append("LockHygiene: ").append(context.getDisplayName()).append(" caused ").append(violations.size())
                .append(violations.size() == 1 ? " violation" : " violations")
                .append(" (allow an intended one with @AllowLockHygieneViolation):");
        int n = 1;
        for (LockHygieneEvent e : violations) {
            sb.append("\n ").append(n++).append(". ").append(e.type());
            if (e.key() != null) {
                sb.append(" key ").append(e.key());
            }
            if (e.lockMode() != null) {
                sb.append(" mode ").append(e.lockMode());
            }
            if (e.function() != null) {
                sb.append(" via ").append(e.function());
            }
            if (e.sql() != null) {
                sb.append("\n    SQL: ").append(e.sql());
            }
            sb.append("\n    ").append(e.message());
            if (e.takenAt() != null) {
                StringWriter stack = new StringWriter();
                e.takenAt().printStackTrace(new PrintWriter(stack));
                sb.append("\n    taken at:\n    ").append(stack.toString().trim().replace("\n", "\n    "));
            }
        }
        return sb.toString();
    }
}
