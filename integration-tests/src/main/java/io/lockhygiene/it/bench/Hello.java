package io.lockhygiene.it.bench;

/** A "service" with no pgjdbc at all, for the agent's do-no-harm test. */
public final class Hello {
    public static void main(String[] args) {
        System.out.println("hello from a service without pgjdbc");
    }
}
