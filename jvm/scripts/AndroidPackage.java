// Writes the Android AAR and a Maven repository folder (AAR, JVM jar, POMs, SHA-256 files), byte for byte reproducible.
//
// Run by `jvm/build android` with the JDK's source launcher: java scripts/AndroidPackage.java POM CLASSES JAR RULES OUT.
// Written here rather than with Maven's install plugin or the jar tool because both write the time
// of the build (install's maven-metadata-local.xml, _remote.repositories, archive entry times) and
// neither checks what goes into an AAR; java.util.zip does the archive format.
//
// Output, all under OUT (files written to a temporary folder first and moved into place only when
// every check passed, so a refusal leaves the previous output untouched):
//   pinion-android-VERSION.aar: AndroidManifest.xml (package, minSdk, INTERNET permission),
//     R.txt (empty), classes.jar (the classes of CLASSES: only org/pinion/, never the CLI, never a
//     stub of an Android or React Native class), proguard.txt (RULES: the consumer R8 rules);
//   maven-repo/GROUP/pinion-android/VERSION/pinion-android-VERSION.{aar,pom} and
//   maven-repo/GROUP/ARTIFACT/VERSION/ARTIFACT-VERSION.{jar,pom}, each with a .sha256 file (hex), and
//     maven-metadata.xml per artifact.
// Every archive has its entries sorted by name, each dated 2000-01-01 00:00 (DOS time, no time zone).
// Refused, with exit status 1 and a message naming what is wrong: a class in CLASSES outside
// org/pinion/ or in org/pinion/cli/, a file in CLASSES that is not a class, a class in JAR outside
// org/pinion/, a POM without description, licenses or developers, a placeholder host (example.org and
// the other RFC 2606 / RFC 6761 names) anywhere in that metadata or in url or scm, a non-test
// dependency without a pinion.publish.GROUP.ARTIFACT property. url and scm are copied when the POM
// has them; without them the published POMs say in a comment that there is no public repository.
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

public final class AndroidPackage {
    static final LocalDateTime ENTRY_TIME = LocalDateTime.of(2000, 1, 1, 0, 0, 0);
    static final String ANDROID_ARTIFACT = "pinion-android";

    /** A refusal: the message names what is wrong. */
    static final class Refused extends Exception {
        Refused(String message) { super(message); }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: java AndroidPackage.java POM CLASSES_DIR JVM_JAR CONSUMER_RULES OUT_DIR");
            System.exit(2);
        }
        try {
            run(Paths.get(args[0]), Paths.get(args[1]), Paths.get(args[2]), Paths.get(args[3]), Paths.get(args[4]));
        } catch (Refused e) {
            System.err.println("AndroidPackage: " + e.getMessage());
            System.exit(1);
        }
    }

    static void run(Path pomFile, Path classes, Path jvmJar, Path rules, Path out) throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pomFile.toFile());
        Element project = pom.getDocumentElement();
        String group = text(project, "groupId");
        String artifact = text(project, "artifactId");
        String version = text(project, "version");
        Map<String, String> properties = new TreeMap<>();
        Element props = child(project, "properties");
        if (props != null) {
            for (Element p : children(props)) properties.put(p.getTagName(), p.getTextContent().trim());
        }
        List<Element> metadata = new ArrayList<>();
        for (String name : new String[] {"description", "url", "licenses", "developers", "scm"}) {
            Element e = child(project, name);
            boolean optional = name.equals("url") || name.equals("scm");
            if (e == null || e.getTextContent().trim().isEmpty()) {
                if (optional) continue;
                throw new Refused(pomFile + " has no <" + name + ">, which a published POM needs");
            }
            String placeholder = placeholderHost(e.getTextContent());
            if (placeholder != null) {
                throw new Refused(pomFile + " <" + name + "> names the placeholder host " + placeholder
                        + " (RFC 2606 / RFC 6761): give the true value or remove it");
            }
            metadata.add(e);
        }
        List<String[]> dependencies = publishedDependencies(project, properties, pomFile);
        String androidPackage = required(properties, "pinion.android.package", pomFile);
        String minSdk = required(properties, "pinion.android.minSdk", pomFile);
        if (!minSdk.matches("[1-9][0-9]?")) throw new Refused("pinion.android.minSdk is not an API level: " + minSdk);

        byte[] classesJar = zip(classEntries(classes));
        Map<String, byte[]> aar = new TreeMap<>();
        aar.put("AndroidManifest.xml", manifest(androidPackage, minSdk));
        aar.put("R.txt", new byte[0]);
        aar.put("classes.jar", classesJar);
        aar.put("proguard.txt", Files.readAllBytes(rules));
        byte[] aarBytes = zip(aar);
        Map<String, byte[]> jarEntries = entriesOf(jvmJar);
        for (String name : jarEntries.keySet()) {
            if (name.endsWith(".class") && !name.startsWith("org/pinion/")) {
                throw new Refused(jvmJar + " holds " + name + ", outside org/pinion/ (a stub of a platform class must never be packaged)");
            }
        }
        byte[] jarBytes = zip(jarEntries);

        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("pinion-android-" + version + ".aar", aarBytes);
        String groupPath = "maven-repo/" + group.replace('.', '/') + "/";
        addArtifact(files, groupPath, ANDROID_ARTIFACT, version, "aar", aarBytes,
                pom(group, ANDROID_ARTIFACT, version, "aar", "Pinion Android SDK", metadata, dependencies));
        addArtifact(files, groupPath, artifact, version, "jar", jarBytes,
                pom(group, artifact, version, "jar", text(project, "name"), metadata, dependencies));

        Path staging = Files.createTempDirectory(out.toAbsolutePath().getParent() == null ? Paths.get(".") : out.toAbsolutePath().getParent(), ".android-package");
        try {
            for (Map.Entry<String, byte[]> f : files.entrySet()) {
                Path target = staging.resolve(f.getKey());
                Files.createDirectories(target.getParent());
                Files.write(target, f.getValue());
            }
            Files.createDirectories(out);
            deleteTree(out.resolve("maven-repo"));
            Files.move(staging.resolve("maven-repo"), out.resolve("maven-repo"), StandardCopyOption.ATOMIC_MOVE);
            String aarName = "pinion-android-" + version + ".aar";
            Files.move(staging.resolve(aarName), out.resolve(aarName), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            deleteTree(staging);
        }
    }

    /** The non-test dependencies under their published names, each {group, artifact, version, scope}. */
    static List<String[]> publishedDependencies(Element project, Map<String, String> properties, Path pomFile) throws Refused {
        List<String[]> result = new ArrayList<>();
        Element deps = child(project, "dependencies");
        if (deps == null) return result;
        for (Element d : children(deps)) {
            String scope = child(d, "scope") == null ? "compile" : text(d, "scope");
            if (scope.equals("test")) continue;
            String key = "pinion.publish." + text(d, "groupId") + "." + text(d, "artifactId");
            String published = properties.get(key);
            if (published == null) {
                throw new Refused(pomFile + ": dependency " + text(d, "groupId") + ":" + text(d, "artifactId")
                        + " has no <" + key + "> property (group:artifact:version:scope as published)");
            }
            String[] parts = published.split(":", -1);
            if (parts.length != 4 || !parts[3].matches("compile|runtime|provided")) {
                throw new Refused(pomFile + ": <" + key + "> is not group:artifact:version:scope with scope compile, runtime or provided: " + published);
            }
            for (String part : parts) {
                if (part.isEmpty()) throw new Refused(pomFile + ": <" + key + "> has an empty part: " + published);
            }
            result.add(parts);
        }
        return result;
    }

    /** The classes of {@code dir}, by path; refuses anything that is not an SDK class for Android. */
    static Map<String, byte[]> classEntries(Path dir) throws IOException, Refused {
        if (!Files.isDirectory(dir)) throw new Refused("no classes folder " + dir);
        Map<String, byte[]> entries = new TreeMap<>();
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(dir)) {
            paths = walk.filter(Files::isRegularFile).sorted().collect(java.util.stream.Collectors.toList());
        }
        for (Path p : paths) {
            String name = dir.relativize(p).toString().replace('\\', '/');
            if (!name.endsWith(".class")) throw new Refused(name + " in " + dir + " is not a class");
            if (!name.startsWith("org/pinion/")) {
                throw new Refused(name + " is outside org/pinion/ (a stub of a platform class must never be packaged)");
            }
            if (name.startsWith("org/pinion/cli/")) throw new Refused(name + " is the command-line tool, which the AAR does not ship");
            entries.put(name, Files.readAllBytes(p));
        }
        if (entries.isEmpty()) throw new Refused("no classes in " + dir);
        return entries;
    }

    /** The file entries of an existing archive (directories dropped), to write them again in a fixed form. */
    static Map<String, byte[]> entriesOf(Path archive) throws IOException {
        Map<String, byte[]> entries = new TreeMap<>();
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(archive))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null;) {
                if (!e.isDirectory()) entries.put(e.getName(), readAll(in));
            }
        }
        return entries;
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        for (int n; (n = in.read(chunk)) > 0;) buffer.write(chunk, 0, n);
        return buffer.toByteArray();
    }

    /** A zip archive of {@code entries}, sorted by name, every entry dated {@link #ENTRY_TIME}. */
    static byte[] zip(Map<String, byte[]> entries) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> e : new TreeMap<>(entries).entrySet()) {
                ZipEntry entry = new ZipEntry(e.getKey());
                entry.setTimeLocal(ENTRY_TIME);
                zip.putNextEntry(entry);
                zip.write(e.getValue());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    /** Host names reserved for examples and tests (RFC 2606, RFC 6761), never a real project's. */
    static final Pattern PLACEHOLDER = Pattern.compile(
            "(?i)(?<![A-Za-z0-9-])((?:[A-Za-z0-9-]+\\.)*(?:example\\.(?:org|com|net)|[A-Za-z0-9-]+\\.(?:example|invalid|test|localhost)))(?![A-Za-z0-9-])");

    /** @return the first placeholder host in {@code text}, or null */
    static String placeholderHost(String text) {
        Matcher m = PLACEHOLDER.matcher(text);
        return m.find() ? m.group(1) : null;
    }

    static byte[] manifest(String androidPackage, String minSdk) {
        String xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                + "<manifest xmlns:android=\"http://schemas.android.com/apk/res/android\" package=\"" + escape(androidPackage) + "\">\n"
                + "    <uses-sdk android:minSdkVersion=\"" + minSdk + "\" />\n"
                + "    <!-- The update channel fetches signed roots and manifests. -->\n"
                + "    <uses-permission android:name=\"android.permission.INTERNET\" />\n"
                + "</manifest>\n";
        return xml.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] pom(String group, String artifact, String version, String packaging, String name, List<Element> metadata,
            List<String[]> dependencies) {
        StringBuilder x = new StringBuilder();
        x.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x.append("<project xmlns=\"http://maven.apache.org/POM/4.0.0\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n");
        x.append("         xsi:schemaLocation=\"http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd\">\n");
        x.append("  <modelVersion>4.0.0</modelVersion>\n");
        leaf(x, "  ", "groupId", group);
        leaf(x, "  ", "artifactId", artifact);
        leaf(x, "  ", "version", version);
        leaf(x, "  ", "packaging", packaging);
        leaf(x, "  ", "name", name);
        for (Element e : metadata) copy(x, "  ", e);
        boolean hasUrl = false;
        boolean hasScm = false;
        for (Element e : metadata) {
            hasUrl |= e.getTagName().equals("url");
            hasScm |= e.getTagName().equals("scm");
        }
        if (!hasUrl || !hasScm) {
            x.append("  <!-- No ").append(!hasUrl && !hasScm ? "<url> or <scm>" : !hasUrl ? "<url>" : "<scm>")
                    .append(": Pinion has no public repository or home page yet. -->\n");
        }
        x.append("  <dependencies>\n");
        for (String[] d : dependencies) {
            x.append("    <dependency>\n");
            leaf(x, "      ", "groupId", d[0]);
            leaf(x, "      ", "artifactId", d[1]);
            leaf(x, "      ", "version", d[2]);
            leaf(x, "      ", "scope", d[3]);
            x.append("    </dependency>\n");
        }
        x.append("  </dependencies>\n");
        x.append("</project>\n");
        return x.toString().getBytes(StandardCharsets.UTF_8);
    }

    static void addArtifact(Map<String, byte[]> files, String groupPath, String artifact, String version, String extension,
            byte[] bytes, byte[] pom) throws Exception {
        String base = groupPath + artifact + "/" + version + "/" + artifact + "-" + version;
        withChecksum(files, base + "." + extension, bytes);
        withChecksum(files, base + ".pom", pom);
        String metadata = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metadata>\n"
                + "  <groupId>" + escape(groupPath.substring("maven-repo/".length(), groupPath.length() - 1).replace('/', '.')) + "</groupId>\n"
                + "  <artifactId>" + escape(artifact) + "</artifactId>\n"
                + "  <versioning>\n    <latest>" + escape(version) + "</latest>\n    <release>" + escape(version) + "</release>\n"
                + "    <versions>\n      <version>" + escape(version) + "</version>\n    </versions>\n"
                + "    <lastUpdated>20000101000000</lastUpdated>\n  </versioning>\n</metadata>\n";
        withChecksum(files, groupPath + artifact + "/maven-metadata.xml", metadata.getBytes(StandardCharsets.UTF_8));
    }

    static void withChecksum(Map<String, byte[]> files, String path, byte[] bytes) throws Exception {
        files.put(path, bytes);
        StringBuilder hex = new StringBuilder();
        for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) hex.append(String.format("%02x", b & 0xff));
        files.put(path + ".sha256", hex.toString().getBytes(StandardCharsets.US_ASCII));
    }

    static void copy(StringBuilder x, String indent, Element e) {
        List<Element> kids = children(e);
        if (kids.isEmpty()) {
            leaf(x, indent, e.getTagName(), e.getTextContent().trim());
            return;
        }
        x.append(indent).append('<').append(e.getTagName()).append(">\n");
        for (Element k : kids) copy(x, indent + "  ", k);
        x.append(indent).append("</").append(e.getTagName()).append(">\n");
    }

    static void leaf(StringBuilder x, String indent, String tag, String value) {
        x.append(indent).append('<').append(tag).append('>').append(escape(value)).append("</").append(tag).append(">\n");
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    static String required(Map<String, String> properties, String key, Path pomFile) throws Refused {
        String value = properties.get(key);
        if (value == null || value.isEmpty()) throw new Refused(pomFile + " has no <" + key + "> property");
        return value;
    }

    static String text(Element parent, String name) throws Refused {
        Element e = child(parent, name);
        if (e == null || e.getTextContent().trim().isEmpty()) throw new Refused("<" + parent.getTagName() + "> has no <" + name + ">");
        return e.getTextContent().trim();
    }

    static Element child(Element parent, String name) {
        for (Element e : children(parent)) {
            if (e.getTagName().equals(name)) return e;
        }
        return null;
    }

    static List<Element> children(Element parent) {
        List<Element> result = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element) result.add((Element) n);
        }
        return result;
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toArray(Path[]::new)) Files.delete(p);
        }
    }
}
