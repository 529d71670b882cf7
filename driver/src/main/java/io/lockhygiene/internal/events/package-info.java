/** The process's event bus, counters and the JSON-lines report file (lockhygiene.report). */
package io.lockhygiene.internal.events;
