/**
 * The per-connection core every front end shares (JDBC's driver, DataSource wrapper and agent; R2DBC): one
 * {@link io.lockhygiene.internal.session.OwnerSession} per application connection keeps its identity, settings,
 * leak reporter, recent calls and emulation, and decides everything about one execution that does not depend on
 * how statements are sent. It never sends: each front end carries out what it decides, in its own way; a reactive
 * front end's own statements are sequenced once by {@link io.lockhygiene.internal.session.ReactiveSession} over
 * the port it implements ({@link io.lockhygiene.internal.session.ReactiveConnection}).
 */
package io.lockhygiene.internal.session;
