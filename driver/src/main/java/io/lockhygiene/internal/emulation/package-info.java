/** emulate on one application connection: where its transaction's calls run, and one statement's execution through the lock table. */
package io.lockhygiene.internal.emulation;
