/** Leak reporting: reading held locks, where each was taken, and the log lines and events that say so. */
package io.lockhygiene.internal.leak;
