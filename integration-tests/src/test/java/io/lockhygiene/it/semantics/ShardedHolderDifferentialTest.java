package io.lockhygiene.it.semantics;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.lockhygiene.it.bed.Holders;

/**
 * The differential tester's fixed base (and its hand-written programs and control) with the lock holder's keys
 * spread over three main sessions ({@code lockhygiene.holderSessions=3}): a program's keys live on different
 * server sessions, its owners still decided in one table, its sessions ended by the program all at once.
 */
class ShardedHolderDifferentialTest extends DifferentialTest {
    @BeforeAll
    static void freshHolder() {
        Holders.reset(); // the holder is made by the first connection, with its setting
    }

    @AfterAll
    static void forgetHolder() {
        Holders.reset();
    }

    @Override
    int holderSessions() {
        return 3;
    }
}
