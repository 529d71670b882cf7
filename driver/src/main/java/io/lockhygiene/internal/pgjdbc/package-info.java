/** What LockHygiene reads from pgjdbc beyond JDBC (transaction status, backend pid, driver result sets), through unwrap. */
package io.lockhygiene.internal.pgjdbc;
