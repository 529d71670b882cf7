package io.lockhygiene.r2dbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.r2dbc.spi.Result;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** An answer made locally reads as r2dbc-postgresql shows PostgreSQL's (the reference: R2dbcEmulateTest's script). */
class LocalResultTest {
    private static LocalRows rows(String[] labels, int[] types, byte[][] values, SQLWarning warnings) throws Exception {
        Constructor<LocalRows> c = LocalRows.class.getDeclaredConstructor(String[].class, int[].class, List.class,
                SQLWarning.class, Object.class);
        c.setAccessible(true);
        List<byte[][]> list = new ArrayList<>();
        list.add(values);
        return c.newInstance(labels, types, list, warnings, null);
    }

    @Test
    void booleansAndVoidReadAsTheDriverReadsThem() throws Exception {
        LocalResult r = LocalResult.of(rows(new String[] {"lock_result", "pg_advisory_lock", "n"},
                new int[] {LocalRows.BOOL, LocalRows.VOID, LocalRows.BOOL}, new byte[][] {{'t'}, {}, null}, null));
        List<String> out = Flux.from(r.map((row, meta) -> row.get(0) + "/" + row.get("LOCK_RESULT", String.class) + "/"
                + row.get(1) + "/" + row.get(1, String.class) + "/" + row.get(2) + "/" + meta.getColumnMetadata(0).getJavaType()
                + "/" + meta.getColumnMetadata(1).getJavaType() + "/" + meta.getColumnMetadata("n").getNativeTypeMetadata()
                + "/" + meta.contains("Pg_Advisory_Lock"))).collectList().block();
        assertEquals(List.of("true/t//" + "/null/class java.lang.Boolean/null/16/true"), out);
        assertEquals(List.of(1L), Flux.from(r.getRowsUpdated()).collectList().block(), "a SELECT's row count");
    }

    @Test
    void noticesComeFirstAsMessageSegments() throws Exception {
        SQLWarning w = new SQLWarning("you don't own a lock of type ExclusiveLock", "01000");
        LocalResult r = LocalResult.of(rows(new String[] {"pg_advisory_unlock"}, new int[] {LocalRows.BOOL},
                new byte[][] {{'f'}}, w));
        List<String> segments = Flux.from(r.flatMap(s -> Flux.just(s instanceof Result.Message
                ? "notice " + ((Result.Message) s).message() + " " + ((Result.Message) s).sqlState()
                : s instanceof Result.RowSegment ? "row" : "count " + ((Result.UpdateCount) s).value()))).collectList().block();
        assertEquals(List.of("notice you don't own a lock of type ExclusiveLock 01000", "row", "count 1"), segments);
        Result onlyRows = r.filter(s -> s instanceof Result.RowSegment);
        assertEquals(List.of(), Flux.from(onlyRows.getRowsUpdated()).collectList().block());
        assertEquals(List.of(false), Flux.from(onlyRows.map((row, meta) -> row.get(0, Boolean.class))).collectList().block());
    }

    @Test
    void whatTheDriverCannotDecodeIsRefusedAsItWould() throws Exception {
        LocalResult r = LocalResult.of(rows(new String[] {"got"}, new int[] {LocalRows.BOOL}, new byte[][] {{'t'}}, null));
        assertThrows(IllegalArgumentException.class,
                () -> Flux.from(r.map((row, meta) -> row.get(0, Integer.class))).blockLast());
        assertThrows(java.util.NoSuchElementException.class,
                () -> Flux.from(r.map((row, meta) -> row.get("nope"))).blockLast());
        assertThrows(IndexOutOfBoundsException.class,
                () -> Flux.from(r.map((row, meta) -> row.get(3))).blockLast());
        assertFalse(Flux.from(r.map((row, meta) -> meta.contains("nope"))).blockLast());
        assertTrue(Flux.from(r.map((row, meta) -> meta.contains("GOT"))).blockLast());
        assertNull(null);
    }
}
