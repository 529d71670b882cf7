package io.lockhygiene.it.semantics;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.lockhygiene.it.bed.Holders;

/**
 * The differential tester's fixed base with a zero linger ({@code lockhygiene.holderLinger=0}, issue 44): the
 * lock holder closes its sessions whenever it holds nothing and waits for nothing, so every idle gap of a program
 * closes it and its next lock opens it again; the answers are still PostgreSQL's.
 */
class ShortLingerDifferentialTest extends DifferentialTest {
    @BeforeAll
    static void freshHolder() {
        Holders.reset(); // the holder is made by the first connection, with its setting
    }

    @AfterAll
    static void forgetHolder() {
        Holders.reset();
    }

    @Override
    String holderLinger() {
        return "0";
    }
}
