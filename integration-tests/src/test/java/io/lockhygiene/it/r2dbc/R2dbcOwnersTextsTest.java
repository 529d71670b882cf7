package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.plain;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * R2DBC's side of the texts of several statements whose commits emulate fences (the owner holds an emulated lock):
 * the fences go into the one text, and what the application reads of it is what plain r2dbc-postgresql reads on
 * PostgreSQL, step by step (each result's rows or count, in order, the error's SQLState, and what the table holds).
 */
@ExtendWith(TestBedExtension.class)
class R2dbcOwnersTextsTest {
    private final TestBed bed = TestBed.shared();

    private static final String[] STEPS = {
            "insert into {t} values (1); insert into {t} values (2)",
            "insert into {t} values (1)",
            "begin; insert into {t} values (3); commit; select 1",
            "insert into {t} values (4); commit; select 2",
            "begin; insert into {t} values (5); rollback; insert into {t} values (6)",
            "select 1; select 2",
            "insert into {t} values (9); select 1/0; insert into {t} values (10)",
            "begin; insert into {t} values (11); commit; select 1/0",
            "begin; insert into {t} values (12); commit; begin; insert into {t} values (13); commit",
            "begin",
            "insert into {t} values (14); commit; insert into {t} values (15)",
            "begin",
            "insert into {t} values (16); commit and chain; insert into {t} values (17)",
            "commit",
            "insert into {t} values (20); insert into {t} values (20)",
    };

    @Test
    void anOwnersFencedTextsReadAsPlainR2dbcReadsThemOnPostgres() {
        List<String> reference = run(plain(bed, Route.DIRECT), "r2dbc_owners_texts_direct", 1_993_101);
        List<String> ours = run(guarded(bed, Route.TRANSACTION_POOL), "r2dbc_owners_texts_ours", 1_993_102);
        for (int i = 0; i < Math.max(reference.size(), ours.size()); i++) {
            String want = i < reference.size() ? reference.get(i) : "(nothing)";
            String got = i < ours.size() ? ours.get(i) : "(nothing)";
            assertEquals(want, got, "step " + i + " differs from PostgreSQL's; all steps:\n" + String.join("\n", ours));
        }
        System.out.println("[owners texts] R2DBC: " + ours.size() + " steps as on PostgreSQL");
    }

    private static List<String> run(ConnectionFactory factory, String table, long key) {
        Connection c = open(factory);
        List<String> out = new ArrayList<>();
        try {
            read(c, "drop table if exists " + table);
            read(c, "create table " + table + " (v int unique)");
            read(c, "select pg_advisory_lock(" + key + ")");
            for (String step : STEPS) {
                String seen;
                try {
                    seen = step + " -> " + read(c, step.replace("{t}", table));
                } catch (R2dbcException e) {
                    seen = step + " -> error " + e.getSqlState();
                }
                seen += c.isAutoCommit() ? " | no transaction" : " | in a transaction";
                String contents;
                try {
                    contents = read(c, "select coalesce(string_agg(v::text, ',' order by v), '') from " + table);
                } catch (R2dbcException e) {
                    contents = "error " + e.getSqlState();
                    Mono.from(c.rollbackTransaction()).block(Duration.ofSeconds(60)); // the next step starts clean
                }
                out.add(seen + " | table " + contents);
            }
            read(c, "select pg_advisory_unlock(" + key + ")");
            read(c, "drop table " + table);
        } finally {
            close(c);
        }
        return out;
    }

    /** Every result of one execution, in order: rows (first column) or a count. */
    private static String read(Connection c, String sql) {
        return Flux.from(c.createStatement(sql).execute())
                .concatMap(R2dbcOwnersTextsTest::describe)
                .collectList()
                .map(parts -> String.join(" ", parts))
                .block(Duration.ofSeconds(60));
    }

    private static Mono<String> describe(Result r) {
        return Flux.from(r.flatMap(segment -> {
            if (segment instanceof Result.RowSegment) {
                Object v = ((Result.RowSegment) segment).row().get(0);
                return Mono.just("row " + v);
            }
            if (segment instanceof Result.UpdateCount) {
                return Mono.just("count " + ((Result.UpdateCount) segment).value());
            }
            if (segment instanceof Result.Message) {
                Result.Message m = (Result.Message) segment;
                String state = m.sqlState() == null ? "" : m.sqlState();
                return state.startsWith("00") || state.startsWith("01") ? Mono.<String>empty() : Mono.error(m.exception());
            }
            return Mono.<String>empty();
        })).collectList().map(parts -> "[" + String.join(" ", parts) + "]");
    }
}
