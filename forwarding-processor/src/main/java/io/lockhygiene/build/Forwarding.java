package io.lockhygiene.build;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a hand-written abstract class that implements a JDBC interface: {@link ForwardingProcessor} writes
 * a final subclass, {@link #leaf()}, in the same package, with the same type parameters and
 * constructors, implementing every interface method the class and its superclasses leave open
 * (abstract, or an interface's default): forwarded to the field {@code delegate} (java.sql.Wrapper's two
 * methods answer for this object first, then ask the delegate), or, with
 * {@link #noop()}, doing nothing and returning the type's default value (for benchmarks). Source
 * retention: nothing of this reaches the class files.
 */
@Retention(RetentionPolicy.SOURCE)
@Target(ElementType.TYPE)
public @interface Forwarding {
    /** The simple name of the generated final class. */
    String leaf();

    /** Do nothing instead of forwarding to {@code delegate}. */
    boolean noop() default false;

    /** Leave the leaf open to subclassing (the agent subclasses the connection's leaf at run time). */
    boolean extensible() default false;

    /**
     * An expression of the class (a field, or a call) that gives the bind recorder to use now, or null while
     * none is wanted: each forwarded {@code PreparedStatement.setXxx(int index, ...)} evaluates it once and
     * then also records its call there, as
     * {@code recorder.set(index, "setXxx", (target, i) -> target.setXxx(i, ...), args...)}.
     */
    String bindsField() default "";
}
