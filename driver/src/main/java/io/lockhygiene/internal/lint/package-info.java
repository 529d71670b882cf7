/** The SKIP LOCKED single-key lint (JSqlParser, optional). */
package io.lockhygiene.internal.lint;
