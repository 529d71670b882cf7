/** The public advisory-wait monitor: waits longer than a threshold, from pg_locks and from emulate's own table. */
package io.lockhygiene.monitor;
