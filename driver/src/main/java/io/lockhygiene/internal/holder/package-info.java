/**
 * emulate's process side: one lock holder per process and database, where it connects, its sessions (its keys
 * spread over {@code lockhygiene.holderSessions} main sessions, one lock table for all), waits in PostgreSQL's
 * queue, and the watchdog that notices a lost holder.
 *
 * <p>The locks taken here (a main session's turn, a waiting session's, the waiting-session lists, the watchdog's
 * life cycle, the key cache) are places of the one lock-order table,
 * {@link io.lockhygiene.internal.util.LockOrder}, which says their order and is checked at run time in tests.
 * <b>None is held while a connection is opened or borrowed</b> (a connect, or a borrow from the application's
 * pool, may wait long, and a thread that keeps a pooled connection may be waiting for that very lock): the
 * holder's main session is opened by {@code HolderSession.open} before its turn is taken, one opener at a time with
 * the others waiting on its future; waiting sessions by {@code WaitingSessions.borrow} outside their lists;
 * placements ({@code EndpointResolver}) under no lock at all. A session's lock is private to it and taken only
 * as a turn that its taker closes ({@code try (SessionTurn turn = session.turn())}, as pgjdbc's
 * {@code ResourceLock}); a look that must not wait asks {@code tryTurn()}. A holder has one connection type,
 * {@code HolderSession}, in two roles (main, waiting), each role's turn a place of its own in the lock order.
 *
 * <p>No timer stands in for a missed signal: a thread waiting for a main session's turn is woken by the unlock
 * that lets it go on or by the round trip that answered it ({@code SessionTurn}), and an owner waiting for
 * another owner of the process by the lock table's change (a release, a grant, a loss, a close, a cancel). The
 * one timed look left is a real poll: through a transaction pooler another process's lock sends no signal and
 * no session may wait in PostgreSQL's queue, so the server is asked again after a back-off (2 to 50 ms).
 *
 * <h2>Life cycle of a holder's sessions</h2>
 * Closed until a key needs the server: the first lock opens a main session (a connect and its checks, its
 * seal), a wait for another process a waiting session. While anything is held or waited for they stay, watched.
 * Once nothing is held and nothing waited for, they linger ({@code lockhygiene.holderLinger}, from the last
 * lock or release), then {@code HolderLife.closeIdle} closes the main sessions (taking every main session's
 * turn without waiting, so one in use is never closed) and the idle waiting sessions, and the watchdog stops
 * watching the holder. A request that meets the close waits for its turn and finds the session closed by the
 * holder: it decides again and opens a fresh one (no loss is told: nothing was held). The same close runs when
 * the last connection using the holder goes; a loss closes everything too, and tells every owner that held.
 */
package io.lockhygiene.internal.holder;
