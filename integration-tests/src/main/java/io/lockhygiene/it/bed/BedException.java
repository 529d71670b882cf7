package io.lockhygiene.it.bed;

/** The bed could not be provisioned; the message says what is missing and how to install it. */
public final class BedException extends RuntimeException {
    public BedException(String message) {
        super(message);
    }

    public BedException(String message, Throwable cause) {
        super(message, cause);
    }
}
