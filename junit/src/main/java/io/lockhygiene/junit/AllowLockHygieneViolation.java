package io.lockhygiene.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.lockhygiene.events.EventType;

/**
 * A known, intended violation the extension lets pass, on a test method or a test class: events of these
 * types (and, when given, with this key) do not fail the test. Say why.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Repeatable(AllowLockHygieneViolations.class)
public @interface AllowLockHygieneViolation {
    /** The event types allowed; all violation types when empty. */
    EventType[] value() default {};

    /** Only this lock key ("42", "(7742, 5)"); any key when empty. */
    String key() default "";

    /** Why this is intended (shown nowhere but your code review). */
    String reason();
}
