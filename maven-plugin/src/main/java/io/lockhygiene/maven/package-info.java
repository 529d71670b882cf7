/** The Maven plugin: {@code lockhygiene:scan} (static findings) and {@code lockhygiene:verify} (the test JVMs' report). */
package io.lockhygiene.maven;
