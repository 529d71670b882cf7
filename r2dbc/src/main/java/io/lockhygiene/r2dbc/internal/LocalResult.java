package io.lockhygiene.r2dbc.internal;

import java.nio.charset.StandardCharsets;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.r2dbc.spi.ColumnMetadata;
import io.r2dbc.spi.Nullability;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Type;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * An answer emulate made itself, as r2dbc-postgresql shows PostgreSQL's: PostgreSQL's notices first
 * ({@code you don't own a lock of type ExclusiveLock}) as message segments, then the rows (boolean columns
 * read as {@code Boolean}, or {@code "t"}/{@code "f"} as text; void columns as {@code ""}), then the update
 * count a SELECT reports (its row count). Nothing of it waits: it is made before it is emitted.
 */
final class LocalResult implements Result {
    private final List<Segment> segments;

    private LocalResult(List<Segment> segments) {
        this.segments = segments;
    }

    /** The answer of a command with nothing to show (COMMIT, ROLLBACK), as r2dbc-postgresql gives it. */
    static LocalResult none() {
        return new LocalResult(Collections.emptyList());
    }

    static LocalResult of(LocalRows answer) {
        List<Segment> segments = new ArrayList<>();
        Columns columns = new Columns(answer.labels(), answer.types());
        SQLWarning w = answer.warnings();
        int shown = 0;
        List<byte[][]> rows = answer.rows();
        for (int i = 0; i <= rows.size(); i++) {
            // each row's notices before it, as PostgreSQL sends them while it computes the row (the rest at the end)
            for (int before = answer.noticesBefore(i); w != null && shown < before; w = w.getNextWarning(), shown++) {
                segments.add(new Notice(w));
            }
            if (i < rows.size()) {
                LocalRow row = new LocalRow(columns, rows.get(i));
                segments.add((RowSegment) () -> row);
            }
        }
        long count = answer.rows().size();
        segments.add((UpdateCount) () -> count);
        return new LocalResult(Collections.unmodifiableList(segments));
    }

    @Override
    public Publisher<Long> getRowsUpdated() {
        return Flux.fromIterable(segments).filter(UpdateCount.class::isInstance).map(s -> ((UpdateCount) s).value());
    }

    @Override
    public <T> Publisher<T> map(BiFunction<Row, RowMetadata, ? extends T> mappingFunction) {
        return Flux.fromIterable(segments).filter(RowSegment.class::isInstance)
                .map(s -> {
                    Row row = ((RowSegment) s).row();
                    return mappingFunction.apply(row, row.getMetadata());
                });
    }

    @Override
    public <T> Publisher<T> map(Function<? super io.r2dbc.spi.Readable, ? extends T> mappingFunction) {
        return Flux.fromIterable(segments).filter(RowSegment.class::isInstance)
                .map(s -> mappingFunction.apply(((RowSegment) s).row()));
    }

    @Override
    public Result filter(Predicate<Segment> filter) {
        List<Segment> kept = new ArrayList<>(segments.size());
        for (Segment s : segments) {
            if (filter.test(s)) {
                kept.add(s);
            }
        }
        return new LocalResult(Collections.unmodifiableList(kept));
    }

    @Override
    public <T> Publisher<T> flatMap(Function<Segment, ? extends Publisher<? extends T>> mappingFunction) {
        return Flux.fromIterable(segments).concatMap(mappingFunction);
    }

    /** A NoticeResponse as r2dbc-postgresql shows one. */
    private static final class Notice implements Message {
        private final SQLWarning warning;

        Notice(SQLWarning warning) {
            this.warning = warning;
        }

        @Override
        public R2dbcException exception() {
            return R2dbcErrors.of(warning);
        }

        @Override
        public int errorCode() {
            return warning.getErrorCode();
        }

        @Override
        public String sqlState() {
            return warning.getSQLState();
        }

        @Override
        public String message() {
            return warning.getMessage();
        }
    }

    /** The columns of a local answer: boolean or void, named as PostgreSQL names them. */
    private static final class Columns implements RowMetadata {
        private final List<Column> columns;

        Columns(String[] labels, int[] types) {
            List<Column> list = new ArrayList<>(labels.length);
            for (int i = 0; i < labels.length; i++) {
                list.add(new Column(labels[i], types[i]));
            }
            this.columns = Collections.unmodifiableList(list);
        }

        @Override
        public ColumnMetadata getColumnMetadata(int index) {
            if (index < 0 || index >= columns.size()) {
                throw new IndexOutOfBoundsException("Column index " + index + " is larger than the number of columns "
                        + columns.size());
            }
            return columns.get(index);
        }

        @Override
        public ColumnMetadata getColumnMetadata(String name) {
            return columns.get(indexOf(name));
        }

        @Override
        public List<? extends ColumnMetadata> getColumnMetadatas() {
            return columns;
        }

        @Override
        public boolean contains(String name) {
            return find(name) >= 0;
        }

        /** The first column of that name, its letter case ignored (as r2dbc-postgresql finds one). */
        int indexOf(String name) {
            int i = find(name);
            if (i < 0) {
                throw new NoSuchElementException("Column name '" + name + "' does not exist in column names "
                        + names());
            }
            return i;
        }

        private int find(String name) {
            for (int i = 0; i < columns.size(); i++) {
                if (columns.get(i).getName().equalsIgnoreCase(name)) {
                    return i;
                }
            }
            return -1;
        }

        private List<String> names() {
            List<String> n = new ArrayList<>();
            for (Column c : columns) {
                n.add(c.getName());
            }
            return n;
        }
    }

    private static final class Column implements ColumnMetadata {
        private final String name;
        private final int oid;

        Column(String name, int oid) {
            this.name = name;
            this.oid = oid;
        }

        @Override
        public Type getType() {
            return oid == LocalRows.BOOL ? PostgresType.BOOL : PostgresType.VOID;
        }

        @Override
        public Class<?> getJavaType() {
            return oid == LocalRows.BOOL ? Boolean.class : null; // r2dbc-postgresql has no Java type for void
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public Object getNativeTypeMetadata() {
            return oid;
        }

        @Override
        public Nullability getNullability() {
            return Nullability.UNKNOWN;
        }
    }

    private enum PostgresType implements Type {
        BOOL(Boolean.class), VOID(Object.class);

        private final Class<?> javaType;

        PostgresType(Class<?> javaType) {
            this.javaType = javaType;
        }

        @Override
        public Class<?> getJavaType() {
            return javaType;
        }

        @Override
        public String getName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final class LocalRow implements Row {
        private final Columns columns;
        private final byte[][] values;

        LocalRow(Columns columns, byte[][] values) {
            this.columns = columns;
            this.values = values;
        }

        @Override
        public RowMetadata getMetadata() {
            return columns;
        }

        @Override
        public <T> T get(int index, Class<T> type) {
            columns.getColumnMetadata(index);
            return decode(index, type);
        }

        @Override
        public <T> T get(String name, Class<T> type) {
            return decode(columns.indexOf(name), type);
        }

        private <T> T decode(int index, Class<T> type) {
            byte[] v = values[index];
            if (v == null) {
                return null;
            }
            String text = new String(v, StandardCharsets.UTF_8);
            boolean bool = columns.columns.get(index).oid == LocalRows.BOOL;
            if (type == String.class || (!bool && (type == Object.class || type == CharSequence.class))) {
                return type.cast(text);
            }
            if (bool && (type == Boolean.class || type == Object.class)) {
                return type.cast("t".equals(text));
            }
            throw new IllegalArgumentException("Cannot decode value of type " + type.getName() + " with OID "
                    + columns.columns.get(index).oid);
        }
    }
}
