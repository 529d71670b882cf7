/** The per-connection guard: plans each statement with the policy, carries the plan out, and checks for leaks at transaction ends and returns. */
package io.lockhygiene.internal.guard;
