/** The Spring Boot starter: lockhygiene.* properties, every DataSource bean wrapped once, Micrometer meters. */
package io.lockhygiene.spring;
