/** The public settings model: every lockhygiene.* key, its values and its default. */
package io.lockhygiene.settings;
