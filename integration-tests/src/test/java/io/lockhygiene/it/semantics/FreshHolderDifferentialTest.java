package io.lockhygiene.it.semantics;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.lockhygiene.it.bed.Holders;

/**
 * The differential tester with a holder made by this class's first connection, with its own settings (the
 * process's holder is made once per database, by whichever connection comes first), and forgotten after it.
 */
abstract class FreshHolderDifferentialTest extends DifferentialTest {
    @BeforeAll
    static void freshHolder() {
        Holders.reset();
    }

    @AfterAll
    static void forgetHolder() {
        Holders.reset();
    }
}
