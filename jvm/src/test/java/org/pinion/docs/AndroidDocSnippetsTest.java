// Compiles the Java blocks of docs/ANDROID.md marked `<!-- javac: GROUP... -->` against the SDK and the Android stubs, group by group.
package org.pinion.docs;

import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.Test;

/**
 * A block marked {@code <!-- javac: debug release -->} (the line before its fence) is a whole Java
 * file of an app; the blocks sharing a group name are the sources of one build (for example the
 * debug and the release source sets with the main one), compiled together with javac against the
 * test class path: the SDK's classes and the stubs of the Android classes (jvm/src/android-stubs).
 * Nothing is run. The file name is the declared class's, in its package's folder.
 */
public class AndroidDocSnippetsTest {
    private static final Pattern MARKER = Pattern.compile("^\\s*<!-- javac: ([a-z0-9 -]+) -->\\s*$");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([\\w.]+);");
    private static final Pattern CLASS = Pattern.compile("(?m)^(?:public )?(?:final |abstract )?(?:class|interface|enum) (\\w+)");

    static Map<String, List<String>> groups(List<String> lines) {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher marker = MARKER.matcher(lines.get(i));
            if (!marker.matches()) continue;
            String fence = lines.get(i + 1);
            assertTrue("line " + (i + 2) + ": a javac marker must be followed by a ```java fence", fence.trim().equals("```java"));
            int indent = fence.indexOf('`');
            StringBuilder body = new StringBuilder();
            int j = i + 2;
            for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) {
                String line = lines.get(j);
                body.append(line.length() >= indent ? line.substring(indent) : line.trim()).append('\n');
            }
            assertTrue("line " + (i + 2) + ": the java block is not closed", j < lines.size());
            for (String group : marker.group(1).trim().split(" +")) groups.computeIfAbsent(group, g -> new ArrayList<>()).add(body.toString());
            i = j;
        }
        return groups;
    }

    @Test
    public void theDebugProxyFilesCompileForTheDebugAndTheReleaseBuild() throws IOException {
        Path doc = Paths.get(System.getProperty("basedir", "."), "..", "docs", "ANDROID.md");
        Map<String, List<String>> groups = groups(Files.readAllLines(doc, StandardCharsets.UTF_8));
        assertTrue("docs/ANDROID.md has its debug and release groups: " + groups.keySet(),
                groups.keySet().containsAll(Arrays.asList("debug", "release")));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (Map.Entry<String, List<String>> group : groups.entrySet()) {
            Path dir = Files.createTempDirectory("pinion-doc-" + group.getKey());
            try {
                List<String> arguments = new ArrayList<>(Arrays.asList("-d", dir.resolve("classes").toString(), "-classpath", classPath,
                        "-Xlint:all,-path", "-Werror", "-implicit:none"));
                for (String source : group.getValue()) {
                    Matcher pkg = PACKAGE.matcher(source);
                    Matcher cls = CLASS.matcher(source);
                    assertTrue("a java block declares no class:\n" + source, cls.find());
                    Path file = dir.resolve("src").resolve((pkg.find() ? pkg.group(1).replace('.', '/') + "/" : "") + cls.group(1) + ".java");
                    Files.createDirectories(file.getParent());
                    Files.write(file, source.getBytes(StandardCharsets.UTF_8));
                    arguments.add(file.toString());
                }
                ByteArrayOutputStream errors = new ByteArrayOutputStream();
                int status = javac.run(null, errors, errors, arguments.toArray(new String[0]));
                assertTrue("group " + group.getKey() + " of docs/ANDROID.md does not compile:\n" + errors.toString("UTF-8"), status == 0);
            } finally {
                try (var walk = Files.walk(dir)) {
                    walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }
}
