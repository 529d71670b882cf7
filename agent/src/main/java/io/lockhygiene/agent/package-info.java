/**
 * The -javaagent: the edits that make every pgjdbc connection of an unchanged service a guarded one
 * ({@link io.lockhygiene.agent.PgjdbcTransformer}: {@link io.lockhygiene.agent.MethodWrap} as classes load,
 * {@link io.lockhygiene.agent.InsertHooks} with ASM when attached), and the forwarding PGConnection subclass
 * (these class files come from the build when the service's class files are the build's: {@link
 * io.lockhygiene.agent.Pregenerated}). Two classes here run at build time only and are left out of the jar:
 * {@code Pregenerate} and {@code StoreOwnClasses}.
 *
 * <h2>Lock order</h2>
 * One lock, never held with another: the transformer's {@code wrapped} map (its own monitor), held for a
 * set lookup or insert inside a class load, never around I/O or a call out of this package. The
 * PGConnection subclass per interface is a {@code ClassValue} (no lock of ours).
 */
package io.lockhygiene.agent;
