/**
 * emulate's process side: one lock holder per process and database, where it connects, its sessions (its keys
 * spread over {@code lockhygiene.holderSessions} main sessions, one lock table for all), waits in PostgreSQL's
 * queue, and the watchdog that notices a lost holder.
 *
 * <h2>Lock order (the whole of emulate)</h2>
 * Outermost first; a thread that holds one may take only those below it. No user callback (listener, log
 * sink) runs under any of them: events are queued and published after they are let go. None is a
 * {@code synchronized} monitor, so a virtual thread that waits on one never pins its carrier. <b>None is
 * held while a connection is opened or borrowed</b> (a connect, or a borrow from the application's pool,
 * may wait long, and a thread that keeps a pooled connection may be waiting for that very lock): the
 * holder's main session is opened by {@code MainLink.open} before {@code io} is taken, one opener at a time
 * with the others waiting on its future; waiting sessions by {@code WaitingSessions.borrow} outside {@code lists};
 * placements ({@code EndpointResolver}) under no lock at all.
 * <table>
 * <caption>Locks of emulate, outermost first</caption>
 * <tr><th>lock</th><th>guards</th><th>held across a round trip</th></tr>
 * <tr><td>{@code MainLink.io}</td><td>one main session of the holder: one round trip at a time, the batch it
 * sends ({@link io.lockhygiene.internal.holder.SessionTurn}: a thread whose request another's round trip
 * carried leaves without taking it). A thread holds one main session's at a time; only the last user's close
 * tries them all ({@code tryLock}, never waiting), in order</td><td>yes (that is its job); never across its
 * opening</td></tr>
 * <tr><td>{@code WaitingSession.io}</td><td>one waiting session of the holder: its wait or its releases</td><td>yes</td></tr>
 * <tr><td>{@code Arbiter.state}</td><td>the lock table and its condition (local waiters sleep on it)</td><td>never</td></tr>
 * <tr><td>{@code WaitingSessions.lists}</td><td>the idle and all lists of waiting sessions</td><td>never (a session
 * is opened outside it)</td></tr>
 * <tr><td>{@code HolderWatchdog.LIFECYCLE}</td><td>starting and stopping the watchdog thread</td><td>never,
 * and never while a holder is called</td></tr>
 * </table>
 * Beside emulate, each taken alone: {@code AdvisoryWaitMonitor.lock} (its episodes and start/close; the
 * poll's borrow and query run before it), {@code ProcessReports.reportLock} (the report file's writes), and the short monitors of
 * {@code KeyCache}, {@code LockOwner} and {@code ReportLog} (map and counter updates, no I/O).
 */
package io.lockhygiene.internal.holder;
