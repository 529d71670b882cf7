package io.lockhygiene.internal.lint;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The unique keys of a table from the catalog: its primary key, unique constraints and unique indexes
 * (without a predicate or expressions), each as the set of its column names. The table text is resolved
 * by the server ({@code to_regclass}), with the connection's search_path; each front end sends {@link #SQL}
 * its own way ({@code SkipLockedCheck}).
 */
public final class KeyCatalog {
    /** One row per unique key: its column names as {@code text[]}; {@code ?} is the table's name as text. */
    public static final String SQL = "SELECT array_agg(a.attname::text ORDER BY k.ord)"
            + " FROM pg_catalog.pg_index i"
            + " CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)"
            + " JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
            + " WHERE i.indrelid = pg_catalog.to_regclass(?) AND i.indisunique AND i.indpred IS NULL"
            + " AND i.indexprs IS NULL GROUP BY i.indexrelid";
    /** {@link #SQL} with its parameter numbered ({@code $1}), for a driver that sends PostgreSQL's own form. */
    public static final String NUMBERED_SQL = SQL.replace("?", "$1");

    private KeyCatalog() {
    }

    /** One row's key: its column names, in the key's order. */
    public static Set<String> key(String[] columns) {
        return new LinkedHashSet<>(Arrays.asList(columns));
    }

    /** The first key all of whose columns are pinned, or null. */
    public static Set<String> coveredKey(List<Set<String>> keys, Set<String> pinned) {
        for (Set<String> key : keys) {
            if (!key.isEmpty() && pinned.containsAll(key)) {
                return key;
            }
        }
        return null;
    }
}
