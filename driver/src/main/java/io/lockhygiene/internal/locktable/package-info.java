/**
 * emulate's pure model, free of JDBC: the lock table that decides advisory calls per owner as PostgreSQL
 * does per session, its keys and owners.
 */
package io.lockhygiene.internal.locktable;
