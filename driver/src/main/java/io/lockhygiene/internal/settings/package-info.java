/** Reading settings from URLs, Properties, system properties and the environment. */
package io.lockhygiene.internal.settings;
