/** emulate's pure model, free of JDBC: the lock table that decides advisory calls per owner as PostgreSQL does per session, its keys, owners and messages. */
package io.lockhygiene.internal.emulate;
