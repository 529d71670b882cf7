package io.lockhygiene.internal.lint;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class SkipLockedAnalysisTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "SELECT * FROM jobs WHERE job_key = 'report-daily' FOR UPDATE SKIP LOCKED | CANDIDATE | jobs | [job_key]",
            "SELECT * FROM jobs j WHERE j.id = ? FOR UPDATE SKIP LOCKED | CANDIDATE | jobs | [id]",
            "SELECT * FROM app.jobs WHERE tenant = ? AND Slot = 3 AND state <> 'done' FOR NO KEY UPDATE SKIP LOCKED | CANDIDATE | app.jobs | [tenant, slot]",
            "SELECT * FROM jobs WHERE 7 = id FOR SHARE SKIP LOCKED | CANDIDATE | jobs | [id]",
            "SELECT * FROM jobs WHERE id = ?::bigint FOR KEY SHARE SKIP LOCKED | CANDIDATE | jobs | [id]",
            "SELECT * FROM jobs WHERE status = 'new' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED | CANDIDATE | jobs | [status]",
            "SELECT * FROM jobs WHERE id = 1 OR id = 2 FOR UPDATE SKIP LOCKED | NOT_APPLICABLE | | []",
            "SELECT * FROM jobs WHERE id > 5 FOR UPDATE SKIP LOCKED | NOT_APPLICABLE | | []",
            "SELECT * FROM jobs j JOIN t ON t.id = j.t WHERE j.id = 1 FOR UPDATE SKIP LOCKED | NOT_APPLICABLE | | []",
            "SELECT * FROM jobs WHERE id = 1 FOR UPDATE | NOT_APPLICABLE | | []",
            "SELECT * FROM jobs WHERE other.id = 1 FOR UPDATE SKIP LOCKED | NOT_APPLICABLE | | []",
    })
    void findsPinnedColumns(String sql, SkipLockedAnalysis.Kind kind, String table, String columns) {
        SkipLockedAnalysis a = SkipLockedAnalysis.analyze(sql);
        assertEquals(kind, a.kind(), a.detail());
        if (kind == SkipLockedAnalysis.Kind.CANDIDATE) {
            assertEquals(table, a.table());
            assertEquals(columns, a.pinnedColumns().toString());
        }
    }

    @Test
    void unparseableIsSaidNotGuessed() {
        assertEquals(SkipLockedAnalysis.Kind.UNPARSEABLE,
                SkipLockedAnalysis.analyze("SELECT * FROM jobs WHERE k = E'x' FOR UPDATE SKIP LOCKED ((").kind());
    }

    @Test
    void keyCoverage() {
        List<Set<String>> keys = List.of(Set.of("id"), Set.of("tenant", "slot"));
        assertEquals(Set.of("id"), KeyCatalog.coveredKey(keys, Set.of("id", "status")));
        assertEquals(Set.of("tenant", "slot"), KeyCatalog.coveredKey(keys, Set.of("tenant", "slot")));
        assertNull(KeyCatalog.coveredKey(keys, Set.of("tenant")));
        assertNull(KeyCatalog.coveredKey(keys, Set.of("status")));
    }
}
