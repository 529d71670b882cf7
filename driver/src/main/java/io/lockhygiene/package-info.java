/** The public entry points: the wrapping {@code java.sql.Driver}, the {@code DataSource} wrapper and process-wide controls. */
package io.lockhygiene;
