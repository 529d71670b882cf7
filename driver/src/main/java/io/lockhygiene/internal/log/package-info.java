/** Logging through the application's SLF4J when it has one, else stderr. */
package io.lockhygiene.internal.log;
