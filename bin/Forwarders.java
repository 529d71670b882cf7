import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Lists the forwarders of the given source trees: methods whose whole body is one call of a method of the same
 * name on a field or a class ({@code return table.keysOf(owner);}). Methods an interface or a superclass asks for
 * ({@code @Override}: the JDBC wrappers' delegation, Flyway's) and Object's are left out: they cannot go. A
 * heuristic over the text, for a figure; run by bin/forwarders.
 */
public class Forwarders {
    private static final Pattern METHOD = Pattern.compile(
            "(@Override\\s+)?(?:(?:public|protected|private|static|final|synchronized)\\s+)*[\\w<>\\[\\],.? ]+?\\s+(\\w+)\\s*"
                    + "\\(([^)]*)\\)\\s*(?:throws [\\w., ]+)?\\{\\s*(?:return\\s+)?(?:this\\.)?(\\w+)(?:\\(\\))?\\.(\\w+)\\s*"
                    + "\\(([^;]*)\\);\\s*\\}");
    private static final List<String> OBJECT = List.of("toString", "hashCode", "equals");

    public static void main(String[] args) throws IOException {
        int n = 0;
        for (String root : args) {
            List<Path> files;
            try (Stream<Path> s = Files.walk(Path.of(root))) {
                files = s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
            }
            for (Path p : files) {
                Matcher m = METHOD.matcher(Files.readString(p));
                while (m.find()) {
                    if (m.group(1) != null || !m.group(2).equals(m.group(5)) || OBJECT.contains(m.group(2))) {
                        continue;
                    }
                    n++;
                    System.out.println(Path.of(root).relativize(p) + "  " + m.group(2) + " -> " + m.group(4) + "."
                            + m.group(5));
                }
            }
        }
        System.out.println(n + " forwarders");
    }
}
