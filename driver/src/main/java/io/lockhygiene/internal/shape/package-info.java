/** Pure reading of lock statements for emulate: the shapes real code sends, their keys, PostgreSQL's evaluation order, and the SQL that asks the server for what the JVM cannot know. */
package io.lockhygiene.internal.shape;
