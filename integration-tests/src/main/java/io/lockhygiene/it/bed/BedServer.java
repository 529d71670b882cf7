package io.lockhygiene.it.bed;

/**
 * Starts the test bed and keeps it up until stdin closes (or Ctrl-C), printing where it answers: for
 * trying the driver, the agent and the command-line tools by hand.
 */
public final class BedServer {
    public static void main(String[] args) throws Exception {
        try (TestBed bed = TestBed.start()) {
            System.out.println("user=" + bed.endpoints().user() + " password=" + bed.endpoints().password());
            System.out.println("Up until stdin closes.");
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait
            }
        }
    }
}
