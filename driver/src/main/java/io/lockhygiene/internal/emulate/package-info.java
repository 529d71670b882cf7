/**
 * emulate on one application connection: where its transaction's calls run, one statement's execution
 * through the lock table, the keys it computes, and every sentence emulate says.
 */
package io.lockhygiene.internal.emulate;
