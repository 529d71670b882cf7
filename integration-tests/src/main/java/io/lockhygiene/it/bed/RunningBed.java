package io.lockhygiene.it.bed;

/** One provisioned bed, whatever it came from. */
interface RunningBed extends AutoCloseable {
    BedEndpoints endpoints();

    @Override
    void close();
}
