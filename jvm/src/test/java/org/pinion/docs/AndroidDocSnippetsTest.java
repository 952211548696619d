// Compiles the Java and Kotlin blocks of docs/ANDROID.md marked `<!-- javac: GROUP... -->` or `<!-- kotlinc: GROUP... -->`
// against the SDK and the Android stubs, group by group.
package org.pinion.docs;

import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>A block marked {@code <!-- kotlinc: app -->} is a whole Kotlin file of an app; each group is
 * compiled with Debian's {@code kotlinc} (Kotlin 1.3, JVM target 1.8, warnings as errors) against the
 * same class path plus the stubs in jvm/src/doc-stubs (Retrofit's builder and WorkManager's worker
 * types, which Debian does not package; compiled here only). Every {@code ```kotlin} block carries
 * either that marker or {@code <!-- not-run: REASON -->} (a Gradle build script, for example), so no
 * Kotlin snippet is left out of the compile by accident.
 */
public class AndroidDocSnippetsTest {
    private static final Pattern MARKER = Pattern.compile("^\\s*<!-- javac: ([a-z0-9 -]+) -->\\s*$");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([\\w.]+);");
    private static final Pattern CLASS = Pattern.compile("(?m)^(?:public )?(?:final |abstract )?(?:class|interface|enum) (\\w+)");

    private static final Pattern KOTLIN_MARKER = Pattern.compile("^\\s*<!-- kotlinc: ([a-z0-9 -]+) -->\\s*$");
    private static final Pattern KOTLIN_FILE = Pattern.compile("\\A// \\S*?(\\w+\\.kt)\\s*\\n");
    private static final Pattern NOT_RUN = Pattern.compile("^\\s*<!-- not-run: \\S.* -->\\s*$");

    static Map<String, List<String>> groups(List<String> lines) {
        return groups(lines, MARKER, "java");
    }

    /** The bodies of the {@code ```language} blocks after a {@code marker} line, by group name. */
    static Map<String, List<String>> groups(List<String> lines, Pattern markerPattern, String language) {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher marker = markerPattern.matcher(lines.get(i));
            if (!marker.matches()) continue;
            String fence = i + 1 < lines.size() ? lines.get(i + 1) : "";
            assertTrue("line " + (i + 2) + ": a marker must be followed by a ```" + language + " fence", fence.trim().equals("```" + language));
            int indent = fence.indexOf('`');
            StringBuilder body = new StringBuilder();
            int j = i + 2;
            for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) {
                String line = lines.get(j);
                body.append(line.length() >= indent ? line.substring(indent) : line.trim()).append('\n');
            }
            assertTrue("line " + (i + 2) + ": the " + language + " block is not closed", j < lines.size());
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
    /** Lines (1-based) of the {@code ```kotlin} fences with neither a kotlinc nor a not-run marker on the line before. */
    static List<Integer> unmarkedKotlinBlocks(List<String> lines) {
        List<Integer> unmarked = new ArrayList<>();
        boolean inBlock = false;
        for (int i = 0; i < lines.size(); i++) {
            String trimmed = lines.get(i).trim();
            if (!trimmed.startsWith("```")) continue;
            if (!inBlock && trimmed.equals("```kotlin")) {
                String before = i > 0 ? lines.get(i - 1) : "";
                if (!KOTLIN_MARKER.matcher(before).matches() && !NOT_RUN.matcher(before).matches()) unmarked.add(i + 1);
            }
            inBlock = !inBlock;
        }
        return unmarked;
    }

    @Test
    public void theKotlinSnippetsCompileWithKotlinc() throws IOException, InterruptedException {
        Path jvm = Paths.get(System.getProperty("basedir", "."));
        List<String> lines = Files.readAllLines(jvm.resolve("..").resolve("docs").resolve("ANDROID.md"), StandardCharsets.UTF_8);
        assertTrue("docs/ANDROID.md: ```kotlin blocks at these lines have no <!-- kotlinc: GROUP --> or <!-- not-run: REASON --> marker: "
                + unmarkedKotlinBlocks(lines), unmarkedKotlinBlocks(lines).isEmpty());
        Map<String, List<String>> groups = groups(lines, KOTLIN_MARKER, "kotlin");
        assertTrue("docs/ANDROID.md has its Kotlin app group: " + groups.keySet(), groups.containsKey("app"));
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path dir = Files.createTempDirectory("pinion-doc-kotlin");
        try {
            // The doc-only stubs (Retrofit, WorkManager), against the Android stubs they extend.
            List<String> javacArguments = new ArrayList<>(Arrays.asList("-d", dir.resolve("stubs").toString(), "-classpath", classPath,
                    "-sourcepath", jvm.resolve("src/android-stubs/java").toString(), "-Xlint:all,-path", "-Werror", "-implicit:class"));
            try (var walk = Files.walk(jvm.resolve("src/doc-stubs/java"))) {
                walk.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> javacArguments.add(p.toString()));
            }
            ByteArrayOutputStream stubErrors = new ByteArrayOutputStream();
            int stubStatus = ToolProvider.getSystemJavaCompiler().run(null, stubErrors, stubErrors, javacArguments.toArray(new String[0]));
            assertTrue("jvm/src/doc-stubs does not compile:\n" + stubErrors.toString("UTF-8"), stubStatus == 0);
            for (Map.Entry<String, List<String>> group : groups.entrySet()) {
                List<String> command = new ArrayList<>(Arrays.asList("kotlinc", "-Werror", "-jvm-target", "1.8", "-d",
                        dir.resolve("kotlin-" + group.getKey()).toString(), "-cp", classPath + File.pathSeparator + dir.resolve("stubs")));
                int n = 0;
                for (String source : group.getValue()) {
                    // Named as its first line says (`// src/main/java/.../Pinion.kt`), so that errors name the snippet.
                    Matcher named = KOTLIN_FILE.matcher(source);
                    String name = named.find() ? named.group(1) : "Snippet" + n + ".kt";
                    Path file = dir.resolve("src-" + group.getKey()).resolve(n++ + "-" + name);
                    Files.createDirectories(file.getParent());
                    Files.write(file, source.getBytes(StandardCharsets.UTF_8));
                    command.add(file.toString());
                }
                Process kotlinc;
                try {
                    kotlinc = new ProcessBuilder(command).redirectErrorStream(true).start();
                } catch (IOException e) {
                    throw new AssertionError("kotlinc cannot be run (install the Debian package kotlin: scripts/install-deps): " + e.getMessage(), e);
                }
                byte[] output;
                try (InputStream in = kotlinc.getInputStream()) {
                    output = in.readAllBytes();
                }
                // A bound against a hung compiler, not a timing assertion: kotlinc takes seconds.
                assertTrue("kotlinc did not finish", kotlinc.waitFor(10, TimeUnit.MINUTES));
                assertTrue("Kotlin group " + group.getKey() + " of docs/ANDROID.md does not compile:\n" + new String(output, StandardCharsets.UTF_8),
                        kotlinc.exitValue() == 0);
            }
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
