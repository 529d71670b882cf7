package io.lockhygiene.internal.shape;

/** Thrown inside the shape parser for any shape it does not follow; its message is the reason given. */
final class UnsupportedShape extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnsupportedShape(String why) {
        super(why, null, false, false);
    }
}
