/** The one decision: LockPolicy.plan maps what a statement calls, where the connection stands and the settings to the whole plan. */
package io.lockhygiene.internal.policy;
