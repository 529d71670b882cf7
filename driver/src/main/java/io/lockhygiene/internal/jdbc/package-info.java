/** The JDBC faces the application holds (connection, statements, result sets): thin, each call handed to the guard. */
package io.lockhygiene.internal.jdbc;
