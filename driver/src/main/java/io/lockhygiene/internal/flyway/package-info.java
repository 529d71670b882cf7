/** Flyway's database-type plugin for jdbc:lockhygiene: URLs. */
package io.lockhygiene.internal.flyway;
