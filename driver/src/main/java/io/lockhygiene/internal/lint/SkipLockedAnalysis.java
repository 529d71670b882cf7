package io.lockhygiene.internal.lint;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import net.sf.jsqlparser.expression.CastExpression;
import net.sf.jsqlparser.expression.DoubleValue;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.JdbcNamedParameter;
import net.sf.jsqlparser.expression.JdbcParameter;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.expression.Parenthesis;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.parser.CCJSqlParser;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;

/**
 * The structural half of the SKIP LOCKED lint, with JSqlParser (slow, so only for text that has SKIP
 * LOCKED outside strings and comments): a single-table {@code SELECT ... FOR UPDATE/SHARE ... SKIP LOCKED}
 * and the columns its WHERE clause pins by equality to a literal or a bind parameter. Only top-level AND
 * conjuncts count (an OR can match more rows; other conjuncts only narrow). Whether those columns cover a
 * unique key is the catalog's half ({@link KeyCatalog}).
 */
public final class SkipLockedAnalysis {

    /** What the text is, structurally. */
    public enum Kind { NOT_APPLICABLE, UNPARSEABLE, CANDIDATE }

    private final Kind kind;
    private final String table;
    private final Set<String> pinnedColumns;
    private final String detail;
    private boolean claimsFromASet;

    private SkipLockedAnalysis(Kind kind, String table, Set<String> pinnedColumns, String detail) {
        this.kind = kind;
        this.table = table;
        this.pinnedColumns = pinnedColumns;
        this.detail = detail;
    }

    public Kind kind() {
        return kind;
    }

    /** The table as written ("jobs", "app.jobs", "\"Jobs\""), for to_regclass. */
    public String table() {
        return table;
    }

    /** Columns bound by equality, folded as PostgreSQL folds them (unquoted: lower case). */
    public Set<String> pinnedColumns() {
        return pinnedColumns;
    }

    /**
     * True when the statement orders or limits to more than one row: the shape of a claim-pool query
     * (used by the static scan, which cannot ask the catalog).
     */
    public boolean claimsFromASet() {
        return claimsFromASet;
    }

    /** Why it is not a candidate, or the parser's complaint. */
    public String detail() {
        return detail;
    }

    public static SkipLockedAnalysis analyze(String sql) {
        Statement statement;
        try {
            CCJSqlParser parser = CCJSqlParserUtil.newParser(sql);
            statement = parser.Statement(); // on this thread: no executor, no thread of ours
        } catch (Exception | StackOverflowError e) {
            return new SkipLockedAnalysis(Kind.UNPARSEABLE, null, Collections.emptySet(), String.valueOf(e.getMessage()));
        }
        if (!(statement instanceof Select)) {
            return notApplicable("not a SELECT");
        }
        PlainSelect select;
        try {
            select = ((Select) statement).getPlainSelect();
        } catch (ClassCastException | NullPointerException e) {
            return notApplicable("not a plain SELECT (set operation or VALUES)");
        }
        if (select == null || !select.isSkipLocked() || select.getForMode() == null) {
            return notApplicable("no FOR ... SKIP LOCKED on the top-level SELECT");
        }
        if (!(select.getFromItem() instanceof Table) || (select.getJoins() != null && !select.getJoins().isEmpty())) {
            return notApplicable("not a single-table SELECT");
        }
        Table from = (Table) select.getFromItem();
        String alias = from.getAlias() == null ? null : from.getAlias().getName();
        Set<String> pinned = new LinkedHashSet<>();
        for (Expression conjunct : conjuncts(select.getWhere())) {
            String column = pinnedColumn(conjunct, from.getName(), alias);
            if (column != null) {
                pinned.add(column);
            }
        }
        if (pinned.isEmpty()) {
            return notApplicable("no column pinned by equality");
        }
        SkipLockedAnalysis candidate = new SkipLockedAnalysis(Kind.CANDIDATE, from.getFullyQualifiedName(), pinned, null);
        boolean ordered = select.getOrderByElements() != null && !select.getOrderByElements().isEmpty();
        boolean limitAboveOne = select.getLimit() != null && select.getLimit().getRowCount() != null
                && !"1".equals(String.valueOf(select.getLimit().getRowCount()));
        candidate.claimsFromASet = ordered || limitAboveOne;
        return candidate;
    }

    private static SkipLockedAnalysis notApplicable(String why) {
        return new SkipLockedAnalysis(Kind.NOT_APPLICABLE, null, Collections.emptySet(), why);
    }

    private static List<Expression> conjuncts(Expression where) {
        List<Expression> out = new ArrayList<>();
        collect(where, out);
        return out;
    }

    private static void collect(Expression e, List<Expression> out) {
        if (e == null) {
            return;
        }
        if (e instanceof Parenthesis) {
            collect(((Parenthesis) e).getExpression(), out);
        } else if (e instanceof AndExpression) {
            collect(((AndExpression) e).getLeftExpression(), out);
            collect(((AndExpression) e).getRightExpression(), out);
        } else {
            out.add(e);
        }
    }

    /** {@code col = value} or {@code value = col} for a column of our table: its folded name. */
    private static String pinnedColumn(Expression e, String table, String alias) {
        if (!(e instanceof EqualsTo)) {
            return null;
        }
        Expression left = ((EqualsTo) e).getLeftExpression();
        Expression right = ((EqualsTo) e).getRightExpression();
        if (left instanceof Column && isValue(right)) {
            return ofTable((Column) left, table, alias);
        }
        if (right instanceof Column && isValue(left)) {
            return ofTable((Column) right, table, alias);
        }
        return null;
    }

    private static boolean isValue(Expression e) {
        if (e instanceof CastExpression) {
            return isValue(((CastExpression) e).getLeftExpression());
        }
        if (e instanceof SignedExpression) {
            return isValue(((SignedExpression) e).getExpression());
        }
        if (e instanceof Parenthesis) {
            return isValue(((Parenthesis) e).getExpression());
        }
        return e instanceof LongValue || e instanceof StringValue || e instanceof DoubleValue
                || e instanceof JdbcParameter || e instanceof JdbcNamedParameter;
    }

    private static String ofTable(Column c, String table, String alias) {
        Table qualifier = c.getTable();
        if (qualifier != null && qualifier.getName() != null) {
            String q = qualifier.getName();
            if (!q.equals(table) && !q.equals(alias)) {
                return null;
            }
        }
        return fold(c.getColumnName());
    }

    /** PostgreSQL's identifier folding: "Quoted" stays, unquoted goes to lower case. */
    static String fold(String identifier) {
        if (identifier.length() >= 2 && identifier.startsWith("\"") && identifier.endsWith("\"")) {
            return identifier.substring(1, identifier.length() - 1).replace("\"\"", "\"");
        }
        return identifier.toLowerCase(java.util.Locale.ROOT);
    }
}
