package io.lockhygiene.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Where SQL sits in a source file: a whole .sql file; the string literals (text blocks and raw strings
 * too) of .java and .kt files; the text of MyBatis-style .xml files with tags and XML comments blanked
 * out (positions kept). Each fragment keeps its offset in the file so findings point at the call itself.
 */
final class SqlInSource {
    static final class Fragment {
        final int offset;
        final String text;

        Fragment(int offset, String text) {
            this.offset = offset;
            this.text = text;
        }
    }

    private SqlInSource() {
    }

    static List<Fragment> fragments(String fileName, String content) {
        String lower = fileName.toLowerCase(java.util.Locale.ROOT);
        List<Fragment> out = new ArrayList<>();
        if (lower.endsWith(".sql")) {
            out.add(new Fragment(0, content));
        } else if (lower.endsWith(".java") || lower.endsWith(".kt")) {
            literals(content, out);
        } else if (lower.endsWith(".xml")) {
            out.add(new Fragment(0, xmlText(content)));
        }
        return out;
    }

    /** String literals of Java or Kotlin source, skipping comments and char literals. */
    static void literals(String s, List<Fragment> out) {
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                int nl = s.indexOf('\n', i);
                i = nl < 0 ? n : nl + 1;
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (c == '"' && s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                int stop = end < 0 ? n : end;
                out.add(new Fragment(i + 3, s.substring(i + 3, stop)));
                i = end < 0 ? n : end + 3;
            } else if (c == '"') {
                int j = i + 1;
                while (j < n && s.charAt(j) != '"' && s.charAt(j) != '\n') {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                j = Math.min(j, n);
                out.add(new Fragment(i + 1, s.substring(i + 1, j)));
                i = j + 1;
            } else if (c == '\'') {
                int j = i + 1;
                while (j < n && s.charAt(j) != '\'' && s.charAt(j) != '\n') {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                i = j + 1;
            } else {
                i++;
            }
        }
    }

    /** The XML with comments and tags replaced by spaces (newlines kept), CDATA markers too. */
    static String xmlText(String s) {
        StringBuilder b = new StringBuilder(s);
        blank(b, "<!--", "-->");
        blank(b, "<![CDATA[", null);
        blank(b, "]]>", null);
        int i = 0;
        while ((i = b.indexOf("<", i)) >= 0) {
            int end = b.indexOf(">", i);
            if (end < 0) {
                break;
            }
            fill(b, i, end + 1);
            i = end + 1;
        }
        return b.toString();
    }

    private static void blank(StringBuilder b, String open, String close) {
        int i = 0;
        while ((i = b.indexOf(open, i)) >= 0) {
            int end = close == null ? i + open.length() : b.indexOf(close, i + open.length());
            end = end < 0 ? b.length() : (close == null ? end : end + close.length());
            fill(b, i, end);
            i = end;
        }
    }

    private static void fill(StringBuilder b, int from, int to) {
        for (int k = from; k < to; k++) {
            if (b.charAt(k) != '\n') {
                b.setCharAt(k, ' ');
            }
        }
    }
}
