package io.lockhygiene.internal.jdbc;

import io.lockhygiene.internal.emulate.AdvisoryKey;
import io.lockhygiene.internal.sql.LockStatement;

/**
 * The key of one call of a lock statement, from its literals and the prepared statement's bind values,
 * exactly as PostgreSQL would take it. A bind value PostgreSQL would read otherwise (a bigint for one of
 * two int keys, a numeric, a string, NULL) gives no key: the statement then runs as it is, and the server
 * answers (an error, or NULL for a NULL key).
 */
final class LockKeys {
    private LockKeys() {
    }

    /** Key of {@code item}, or null. {@code binds} holds setter values by parameter index - 1 (null: none set). */
    static AdvisoryKey resolve(LockStatement.Item item, Object[] binds) {
        java.util.List<LockStatement.Argument> args = item.arguments();
        if (args.size() == 1) {
            Long k = value(args.get(0), binds, false);
            return k == null ? null : AdvisoryKey.bigint(k);
        }
        Long a = value(args.get(0), binds, true);
        Long b = value(args.get(1), binds, true);
        return a == null || b == null ? null : AdvisoryKey.pair(a.intValue(), b.intValue());
    }

    private static Long value(LockStatement.Argument arg, Object[] binds, boolean intOnly) {
        if (arg.parameter() == 0) {
            return arg.literal();
        }
        Object v = binds == null || arg.parameter() > binds.length ? null : binds[arg.parameter() - 1];
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Long && !intOnly) {
            return (Long) v;
        }
        return null;
    }
}
