package io.lockhygiene.it.semantics;

/**
 * The differential tester's fixed base with a zero linger ({@code lockhygiene.holderLinger=0}, issue 44): the
 * lock holder closes its sessions whenever it holds nothing and waits for nothing, so every idle gap of a program
 * closes it and its next lock opens it again; the answers are still PostgreSQL's.
 */
class ShortLingerDifferentialTest extends FreshHolderDifferentialTest {
    @Override
    String holderLinger() {
        return "0";
    }
}
