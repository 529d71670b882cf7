/** The fast SQL scanner: advisory calls, transaction control and SKIP LOCKED found without parsing, and the rewrite to transaction-level forms. */
package io.lockhygiene.internal.sql;
