/** The -javaagent: ByteBuddy edits that make every pgjdbc connection of an unchanged service a guarded one, and the attach command. */
package io.lockhygiene.agent;
