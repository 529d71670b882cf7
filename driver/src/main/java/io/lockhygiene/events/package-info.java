/** Public events LockHygiene publishes (leaks, refusals, lost locks, waits), their listener and JMX counters. */
package io.lockhygiene.events;
