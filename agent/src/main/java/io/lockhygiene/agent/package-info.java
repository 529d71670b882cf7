/**
 * The javaagent door onto the driver's core. Nothing is instrumented yet: the agent (ByteBuddy
 * advice on pgjdbc and pool return) is issue 5. The module exists so that the build layout is final.
 */
package io.lockhygiene.agent;
