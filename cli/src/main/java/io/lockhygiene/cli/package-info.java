/** The lockhygiene command line: scan, doctor, monitor, attach. */
package io.lockhygiene.cli;
