package io.lockhygiene.internal.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class NumberedParametersTest {
    @Test
    void eachDollarParameterBecomesAQuestionMarkInOrder() {
        NumberedParameters t = NumberedParameters.of("select pg_try_advisory_lock($2, $1) as got, $2");
        assertEquals("select pg_try_advisory_lock(?, ?) as got, ?", t.jdbcText);
        assertEquals(2, t.dollarOf(1));
        assertEquals(1, t.dollarOf(2));
        assertEquals(2, t.dollarOf(3));
        assertEquals(0, t.dollarOf(4), "no such parameter");
        assertEquals(0, t.dollarOf(0));
    }

    @Test
    void dollarsInStringsCommentsAndDollarQuotesStayText() {
        String sql = "select '$1', \"$2\", $$ $3 $$, $tag$ $4 $tag$ /* $5 */ -- $6\n, $7";
        NumberedParameters t = NumberedParameters.of(sql);
        assertEquals("select '$1', \"$2\", $$ $3 $$, $tag$ $4 $tag$ /* $5 */ -- $6\n, ?", t.jdbcText);
        assertEquals(7, t.dollarOf(1));
    }

    @Test
    void aTextWithoutParametersIsTheSameString() {
        String sql = "select pg_advisory_lock(42)";
        assertSame(sql, NumberedParameters.of(sql).jdbcText);
    }

    @Test
    void manyParameters() {
        StringBuilder sql = new StringBuilder("select 1");
        for (int i = 1; i <= 20; i++) {
            sql.append(", $").append(i);
        }
        NumberedParameters t = NumberedParameters.of(sql.toString());
        assertEquals(20, t.dollarOf(20));
        assertEquals(11, t.dollarOf(11));
    }
}
