/** Small helpers without a better home: durations and JSON text. */
package io.lockhygiene.internal.util;
