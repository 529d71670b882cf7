/**
 * Where the process's lock holder connects: what an application connection tells of its route
 * ({@link io.lockhygiene.internal.placement.HolderRoute}), what a wrapped pool says of how it connects
 * ({@link io.lockhygiene.internal.placement.PoolConfig}), and the placement itself
 * ({@link io.lockhygiene.internal.placement.EndpointResolver}), made once per endpoint under no lock of ours.
 */
package io.lockhygiene.internal.placement;
