package io.lockhygiene.it.semantics;

/**
 * The differential tester's fixed base (and its hand-written programs and control) with the lock holder's keys
 * spread over three main sessions ({@code lockhygiene.holderSessions=3}): a program's keys live on different
 * server sessions, its owners still decided in one table, its sessions ended by the program all at once.
 */
class ShardedHolderDifferentialTest extends FreshHolderDifferentialTest {



    @Override
    int holderSessions() {
        return 3;
    }
}
