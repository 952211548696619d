// Compiles the Java and Kotlin blocks of README.md and docs/*.md marked `<!-- javac: GROUP... -->` or
// `<!-- kotlinc: GROUP... -->` against the SDK and the Android stubs, group by group, and refuses an unmarked one.
package org.pinion.docs;

import static org.junit.Assert.assertEquals;
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
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.Test;

/**
 * Every {@code ```java} and {@code ```kotlin} block of README.md and docs/*.md carries, on the line
 * before its fence, a compile marker or {@code <!-- not-run: REASON -->} (a Gradle build script, for
 * example); an unmarked one fails {@link #everyJavaAndKotlinBlockIsMarked}, naming its file and line,
 * so no snippet is left out of the compile by accident.
 *
 * <p>A block marked {@code <!-- javac: debug release -->} is a whole Java file of an app; the blocks
 * sharing a group name, in every document, are the sources of one build (for example the debug and
 * the release source sets with the main one), compiled together with javac (in-process, {@code
 * -Xlint:all -Werror}) against the test class path (the SDK's classes and the stubs of the Android
 * classes, jvm/src/android-stubs) and the doc-only stubs of jvm/src/doc-stubs. The file name is the
 * declared class's, in its package's folder. A fragment says how it is wrapped, after the groups:
 * {@code <!-- javac: app; in void name(PinningClient client) throws IOException; import a.B c.D -->}
 * makes the block the body of that method (its parameters are the fragment's given variables) in a
 * class of its own that imports the named classes. Nothing is run.
 *
 * <p>A block marked {@code <!-- kotlinc: app -->} is a whole Kotlin file of an app; each group is
 * compiled with Debian's {@code kotlinc} (Kotlin 1.3, JVM target 1.8, warnings as errors) against the
 * same class path and doc stubs (Retrofit's builder, WorkManager's worker types, {@code
 * android.util.Log}, {@code android.app.Application}: not packaged in Debian, compiled here only and
 * never packaged).
 */
public class AndroidDocSnippetsTest {
    private static final Pattern MARKER = Pattern.compile("^\\s*<!-- javac: ([a-z0-9 -]+)((?:; [^;]+?)*) -->\\s*$");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([\\w.]+);");
    private static final Pattern CLASS = Pattern.compile("(?m)^(?:public )?(?:final |abstract )?(?:class|interface|enum) (\\w+)");

    private static final Pattern KOTLIN_MARKER = Pattern.compile("^\\s*<!-- kotlinc: ([a-z0-9 -]+) -->\\s*$");
    private static final Pattern KOTLIN_FILE = Pattern.compile("\\A// \\S*?(\\w+\\.kt)\\s*\\n");
    private static final Pattern NOT_RUN = Pattern.compile("^\\s*<!-- not-run: \\S.* -->\\s*$");
    private static final Pattern FENCE = Pattern.compile("^\\s*```(\\w*)\\s*$");

    /** One marked block: where it is, its text (fence indentation removed) and how it is wrapped. */
    static final class Snippet {
        final String file;
        final int line;
        final String body;
        /** The method signature a fragment is the body of, or null for a whole file. */
        final String method;
        /** The classes a fragment's wrapper imports. */
        final List<String> imports;

        Snippet(String file, int line, String body, String method, List<String> imports) {
            this.file = file;
            this.line = line;
            this.body = body;
            this.method = method;
            this.imports = imports;
        }
    }

    /** The documents whose blocks are checked: README.md and docs/*.md, relative to the repository, sorted. */
    static List<String> documents(Path repository) throws IOException {
        List<String> documents = new ArrayList<>();
        documents.add("README.md");
        try (Stream<Path> docs = Files.list(repository.resolve("docs"))) {
            docs.map(p -> "docs/" + p.getFileName()).filter(n -> n.endsWith(".md")).sorted().forEach(documents::add);
        }
        return documents;
    }

    static Path repository() {
        return Paths.get(System.getProperty("basedir", ".")).resolve("..");
    }

    static List<String> read(Path repository, String document) throws IOException {
        return Files.readAllLines(repository.resolve(document), StandardCharsets.UTF_8);
    }

    /** The {@code ```language} blocks after a {@code marker} line, by group name, for a document named {@code file}. */
    static Map<String, List<Snippet>> groups(String file, List<String> lines, Pattern markerPattern, String language) {
        Map<String, List<Snippet>> groups = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher marker = markerPattern.matcher(lines.get(i));
            if (!marker.matches()) continue;
            String fence = i + 1 < lines.size() ? lines.get(i + 1) : "";
            assertTrue(file + ":" + (i + 2) + ": a marker must be followed by a ```" + language + " fence", fence.trim().equals("```" + language));
            String method = null;
            List<String> imports = new ArrayList<>();
            if (marker.groupCount() >= 2 && marker.group(2) != null && !marker.group(2).isEmpty()) {
                for (String option : marker.group(2).substring(2).split("; ")) {
                    if (option.startsWith("in ")) method = option.substring(3).trim();
                    else if (option.startsWith("import ")) imports.addAll(Arrays.asList(option.substring(7).trim().split(" +")));
                    else throw new AssertionError(file + ":" + (i + 1) + ": unknown marker option '" + option + "' (known: 'in SIGNATURE', 'import NAMES')");
                }
                assertTrue(file + ":" + (i + 1) + ": a fragment's marker names the method it is the body of ('in SIGNATURE')", method != null);
            }
            int indent = fence.indexOf('`');
            StringBuilder body = new StringBuilder();
            int j = i + 2;
            for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) {
                String line = lines.get(j);
                body.append(line.length() >= indent ? line.substring(indent) : line.trim()).append('\n');
            }
            assertTrue(file + ":" + (i + 2) + ": the " + language + " block is not closed", j < lines.size());
            Snippet snippet = new Snippet(file, i + 2, body.toString(), method, imports);
            for (String group : marker.group(1).trim().split(" +")) groups.computeIfAbsent(group, g -> new ArrayList<>()).add(snippet);
            i = j;
        }
        return groups;
    }

    /** The marked blocks of every document, by group name. */
    static Map<String, List<Snippet>> allGroups(Pattern markerPattern, String language) throws IOException {
        Path repository = repository();
        Map<String, List<Snippet>> all = new LinkedHashMap<>();
        for (String document : documents(repository)) {
            groups(document, read(repository, document), markerPattern, language)
                    .forEach((group, snippets) -> all.computeIfAbsent(group, g -> new ArrayList<>()).addAll(snippets));
        }
        return all;
    }

    /**
     * The {@code ```java} and {@code ```kotlin} fences of a document with neither their compile
     * marker ({@code javac} or {@code kotlinc}) nor a not-run marker on the line before, as
     * {@code file:line (language)}.
     */
    static List<String> unmarkedBlocks(String file, List<String> lines) {
        List<String> unmarked = new ArrayList<>();
        boolean inBlock = false;
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (!lines.get(i).trim().startsWith("```")) continue;
            if (!inBlock && fence.matches()) {
                String language = fence.group(1);
                String before = i > 0 ? lines.get(i - 1) : "";
                boolean marked = NOT_RUN.matcher(before).matches()
                        || (language.equals("java") && MARKER.matcher(before).matches())
                        || (language.equals("kotlin") && KOTLIN_MARKER.matcher(before).matches());
                if ((language.equals("java") || language.equals("kotlin")) && !marked) unmarked.add(file + ":" + (i + 1) + " (```" + language + ")");
            }
            inBlock = !inBlock;
        }
        return unmarked;
    }

    @Test
    public void everyJavaAndKotlinBlockIsMarked() throws IOException {
        Path repository = repository();
        List<String> unmarked = new ArrayList<>();
        for (String document : documents(repository)) unmarked.addAll(unmarkedBlocks(document, read(repository, document)));
        assertEquals("blocks with no <!-- javac: GROUP --> / <!-- kotlinc: GROUP --> or <!-- not-run: REASON --> marker on the line"
                + " before their fence (mark each, so that it is compiled): " + unmarked, new ArrayList<String>(), unmarked);
    }

    @Test
    public void anUnmarkedBlockIsNamedByFileAndLine() {
        List<String> lines = Arrays.asList("text", "```java", "int x;", "```", "<!-- javac: app -->", "```java", "class A {}", "```",
                "```kotlin", "val x = 1", "```", "```sh", "echo", "```");
        assertEquals(Arrays.asList("docs/X.md:2 (```java)", "docs/X.md:9 (```kotlin)"), unmarkedBlocks("docs/X.md", lines));
    }

    /** Compiles jvm/src/doc-stubs into {@code out}, against the test class path and the Android stubs. */
    static void compileDocStubs(Path out, String classPath) throws IOException {
        Path jvm = Paths.get(System.getProperty("basedir", "."));
        List<String> javacArguments = new ArrayList<>(Arrays.asList("-d", out.toString(), "-classpath", classPath,
                "-sourcepath", jvm.resolve("src/android-stubs/java").toString(), "-Xlint:all,-path", "-Werror", "-implicit:class"));
        try (Stream<Path> walk = Files.walk(jvm.resolve("src/doc-stubs/java"))) {
            walk.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> javacArguments.add(p.toString()));
        }
        ByteArrayOutputStream stubErrors = new ByteArrayOutputStream();
        int stubStatus = ToolProvider.getSystemJavaCompiler().run(null, stubErrors, stubErrors, javacArguments.toArray(new String[0]));
        assertTrue("jvm/src/doc-stubs does not compile:\n" + stubErrors.toString("UTF-8"), stubStatus == 0);
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** The Java source of a snippet: a whole file as written, or a fragment inside its method. */
    static String javaSource(Snippet snippet, String className) {
        if (snippet.method == null) return snippet.body;
        StringBuilder source = new StringBuilder("package docsnippets;\n\n");
        for (String name : snippet.imports) source.append("import ").append(name).append(";\n");
        source.append("\n/** ").append(snippet.file).append(" line ").append(snippet.line).append(". */\nfinal class ").append(className)
                .append(" {\n    ").append(snippet.method).append(" {\n").append(snippet.body).append("    }\n}\n");
        return source.toString();
    }

    @Test
    public void theJavaSnippetsCompileWithJavac() throws IOException {
        Map<String, List<Snippet>> groups = allGroups(MARKER, "java");
        assertTrue("the docs have their app, debug and release Java groups: " + groups.keySet(),
                groups.keySet().containsAll(Arrays.asList("app", "debug", "release")));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String testClassPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path dir = Files.createTempDirectory("pinion-doc-java");
        try {
            compileDocStubs(dir.resolve("stubs"), testClassPath);
            String classPath = testClassPath + File.pathSeparator + dir.resolve("stubs");
            for (Map.Entry<String, List<Snippet>> group : groups.entrySet()) {
                Path groupDir = dir.resolve("group-" + group.getKey());
                List<String> arguments = new ArrayList<>(Arrays.asList("-d", groupDir.resolve("classes").toString(), "-classpath", classPath,
                        "-Xlint:all,-path", "-Werror", "-implicit:none"));
                for (Snippet snippet : group.getValue()) {
                    String wrapper = snippet.file.replaceAll("\\W", "_") + "_line" + snippet.line;
                    String source = javaSource(snippet, wrapper);
                    Matcher pkg = PACKAGE.matcher(source);
                    Matcher cls = CLASS.matcher(source);
                    assertTrue(snippet.file + ":" + snippet.line + ": a whole-file java block declares no class (a fragment needs '; in SIGNATURE')",
                            cls.find());
                    Path file = groupDir.resolve("src").resolve((pkg.find() ? pkg.group(1).replace('.', '/') + "/" : "") + cls.group(1) + ".java");
                    Files.createDirectories(file.getParent());
                    Files.write(file, source.getBytes(StandardCharsets.UTF_8));
                    arguments.add(file.toString());
                }
                ByteArrayOutputStream errors = new ByteArrayOutputStream();
                int status = javac.run(null, errors, errors, arguments.toArray(new String[0]));
                String where = group.getValue().stream().map(s -> s.file + ":" + s.line).collect(Collectors.joining(", "));
                assertTrue("Java group " + group.getKey() + " (" + where + ") does not compile:\n" + errors.toString("UTF-8"), status == 0);
            }
        } finally {
            deleteTree(dir);
        }
    }

    @Test
    public void theKotlinSnippetsCompileWithKotlinc() throws IOException, InterruptedException {
        Map<String, List<Snippet>> groups = allGroups(KOTLIN_MARKER, "kotlin");
        assertTrue("the docs have their Kotlin app group: " + groups.keySet(), groups.containsKey("app"));
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path dir = Files.createTempDirectory("pinion-doc-kotlin");
        try {
            // The doc-only stubs (Retrofit, WorkManager, Log, Application), against the Android stubs they extend.
            compileDocStubs(dir.resolve("stubs"), classPath);
            for (Map.Entry<String, List<Snippet>> group : groups.entrySet()) {
                List<String> command = new ArrayList<>(Arrays.asList("kotlinc", "-Werror", "-jvm-target", "1.8", "-d",
                        dir.resolve("kotlin-" + group.getKey()).toString(), "-cp", classPath + File.pathSeparator + dir.resolve("stubs")));
                int n = 0;
                for (Snippet snippet : group.getValue()) {
                    String source = snippet.body;
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
                assertTrue("Kotlin group " + group.getKey() + " (" + group.getValue().stream().map(s -> s.file + ":" + s.line).collect(Collectors.joining(", ")) + ") does not compile:\n" + new String(output, StandardCharsets.UTF_8),
                        kotlinc.exitValue() == 0);
            }
        } finally {
            deleteTree(dir);
        }
    }
}
