// `pinion-jvm client refresh|connect`: usage errors, outputs, --json member names and exit codes 0/1/2/3 as `pinion client`.
package org.pinion.cli;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.crypto.Sha256;
import org.pinion.tls.OpenSslServer;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.tls.TestPki;
import org.pinion.trust.JsonValue;
import org.pinion.trust.Limits;
import org.pinion.trust.Pin;
import org.pinion.trust.StrictJsonParser;

public class CliTest {
    static Path work;
    static TestPki pki;
    static final String AT = "2026-06-02T12:00:00Z";

    @BeforeClass
    public static void setUp() throws Exception {
        work = Files.createTempDirectory("pinion-cli");
        pki = new TestPki(Files.createDirectories(work.resolve("pki")));
        for (String name : List.of("root-1.json", "manifest-1.json", "manifest-1-unknown-key.json", "root-2-new-keys.json")) {
            Files.write(work.resolve(name), fixture(name));
        }
    }

    @AfterClass
    public static void tearDown() throws IOException {
        try (var walk = Files.walk(work)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = CliTest.class.getResourceAsStream("/fixtures/" + name)) {
            return in.readAllBytes();
        }
    }

    static final class Run {
        int code;
        String out;
        String err;
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Run r = new Run();
        r.code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)).run(List.of(args));
        r.out = out.toString(StandardCharsets.UTF_8);
        r.err = err.toString(StandardCharsets.UTF_8);
        return r;
    }

    static Path tree(String manifest) throws IOException {
        Path tree = Files.createTempDirectory(work, "tree");
        Path scope = Files.createDirectories(tree.resolve("v1/com.example.app/root"));
        Files.copy(work.resolve("root-1.json"), scope.resolve("1.json"));
        if (manifest != null) Files.copy(work.resolve(manifest), scope.getParent().resolve("manifest.json"));
        return tree;
    }

    static String[] refreshArgs(int port, Path state, String... extra) {
        List<String> a = new ArrayList<>(List.of("client", "refresh", "--root", work.resolve("root-1.json").toString(), "--scope", "com.example.app",
                "--url", "https://127.0.0.1:" + port + "/", "--state", state.toString(), "--cafile", pki.path("root.pem").toString()));
        a.addAll(List.of(extra));
        return a.toArray(new String[0]);
    }

    @Test
    public void aCaFileThatIsNotACertificateExitsThreeNamingItAndWritesNoState() throws IOException {
        Path bad = Files.write(work.resolve("not-a-ca.pem"), "not a certificate".getBytes(StandardCharsets.UTF_8));
        Path state = work.resolve("state-bad-ca");
        String[] args = refreshArgs(1, state);
        args[args.length - 1] = bad.toString();
        Run r = run(args);
        assertEquals(r.err, 3, r.code);
        assertTrue(r.err, r.err.contains("CA file " + bad));
        assertTrue("no state written", !Files.exists(state.resolve("state-a")));
    }

    @Test
    public void usageErrorsExitTwoWithASeeLine() {
        Run missing = run("client", "refresh", "--scope", "x");
        assertEquals(2, missing.code);
        assertEquals("pinion-jvm: error: --url is required\nsee: pinion-jvm client refresh --help\n", missing.err);
        assertEquals(2, run("client", "refresh", "--bogus").code);
        assertTrue(run("client", "refresh", "--url", "http://x/", "--root", "r", "--scope", "s", "--state", "d").err.contains("--url must be an https URL"));
        assertEquals(2, run("client").code);
        assertEquals(2, run("client", "connect", "--root", "r", "--scope", "s", "--state", "d", "host-without-port").code);
        assertEquals(2, run("client", "connect", "--root", "r", "--scope", "s", "--state", "d", "h:0").code);
        assertEquals(2, run("client", "connect", "--root", "r", "--scope", "s", "--state", "d", "--url", "https://x/", "h:1").code);
        assertEquals(2, run("client", "refresh", "--stale-grace", "3q", "--url", "https://x/").code);
        String root = work.resolve("root-1.json").toString();
        Run timeout = run("client", "refresh", "--timeout", "0", "--url", "https://x/", "--root", root, "--scope", "com.example.app", "--state", "d");
        assertEquals(2, timeout.code);
        assertTrue(timeout.err.contains("--timeout must be a number of seconds in (0, 600]"));
        assertEquals(2, run("client", "refresh", "--stale-grace", "0d", "--url", "https://x/", "--root", root, "--scope", "com.example.app", "--state", "d").code);
        assertEquals(2, run("client", "refresh", "--at", "yesterday", "--url", "https://x/", "--root", root, "--scope", "com.example.app", "--state", "d").code);
        assertEquals(2, run("client", "refresh", "--publisher-pin", "sha256/x", "--url", "https://x/", "--root", root, "--scope", "com.example.app", "--state", "d").code);
        assertEquals(2, run("client", "refresh", "--json", "--json").code);
        assertEquals(0, run("client", "refresh", "--help").code);
        Run badHost = run("client", "connect", "--root", work.resolve("root-1.json").toString(), "--scope", "com.example.app", "--state",
                work.resolve("s-host").toString(), "bad host!:443");
        assertEquals(badHost.err, 2, badHost.code);
        assertEquals(2, run("client", "connect", "--root", work.resolve("root-1.json").toString(), "--scope", "com.example.app", "--state",
                "nul\u0000byte", "h.example:443").code);
    }

    @Test
    public void refreshUpdatesPrintsThePolicyAndJsonHasTheMemberNamesOfPinion() throws Exception {
        Path tree = tree("manifest-1.json");
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-json");
            Run r = run(refreshArgs(server.port(), state, "--at", AT, "--json"));
            assertEquals(r.err, 0, r.code);
            JsonValue doc = StrictJsonParser.parse(r.out.getBytes(StandardCharsets.UTF_8), Limits.STANDARD.json());
            List<String> names = new ArrayList<>();
            for (JsonValue.Member m : doc.members()) names.add(m.name);
            assertEquals(List.of("outcome", "events", "rootVersion", "floor", "manifestCurrent", "policy", "outcomeKind",
                    "floorRootVersion", "floorVersion", "manifestExpiresAt", "rootExpiresAt", "logReason", "log"), names);
            assertEquals(JsonValue.Kind.NULL, doc.get("log").kind());
            assertEquals("updated", doc.get("outcomeKind").text());
            assertEquals(JsonValue.Kind.NUMBER, doc.get("floorVersion").kind());
            assertEquals("updated to (rootVersion 1, version 1)", doc.get("outcome").text());
            assertEquals("(rootVersion 1, version 1)", doc.get("floor").text());
            assertTrue(doc.get("manifestCurrent").flag());
            JsonValue first = doc.get("policy").elements().get(0);
            assertEquals("api.example.com", first.get("name").text());
            List<String> entryNames = new ArrayList<>();
            for (JsonValue.Member m : first.members()) entryNames.add(m.name);
            assertEquals(List.of("name", "enforce", "includeSubdomains", "pins"), entryNames);
            assertFalse("--at never persists", Files.exists(state.resolve("state-a")));
            Run text = run(refreshArgs(server.port(), state, "--at", AT));
            assertEquals(0, text.code);
            assertTrue(text.out, text.out.startsWith("outcome     updated to (rootVersion 1, version 1)\n"));
            assertTrue(text.out, text.out.contains("\nroot        version 1\nfloor       (rootVersion 1, version 1)\n"
                    + "log         none (the newest root has no log)\npolicy      2 domain(s)\n"));
            assertTrue(text.out, text.out.contains("  example.net      enforce +subdomains  sha256/AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI= "));
        }
    }

    @Test
    public void refreshRejectedExitsOneAndNetworkFailureThree() throws Exception {
        Path tree = tree("manifest-1-unknown-key.json");
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Run rejected = run(refreshArgs(server.port(), work.resolve("state-rejected"), "--at", AT));
            assertEquals(rejected.err, 1, rejected.code);
            assertTrue(rejected.out.startsWith("outcome     rejected: 0 valid signature(s) from the pins role of root version 1; threshold is 1\n"));
            server.failPrefix = "/v1/com.example.app/root/";
            Run failed = run(refreshArgs(server.port(), work.resolve("state-rejected"), "--at", AT));
            assertEquals(3, failed.code);
            assertTrue(failed.out, failed.out.startsWith("outcome     network failure: root/2.json: HTTP 500\n"));
        }
        Run refused = run(refreshArgs(1, work.resolve("state-none"), "--at", AT));
        assertEquals(3, refused.code);
        Run noRoot = run("client", "refresh", "--root", work.resolve("missing.json").toString(), "--scope", "com.example.app", "--url",
                "https://x.example/", "--state", work.resolve("s").toString());
        assertEquals(3, noRoot.code);
        Run badRoot = run("client", "refresh", "--root", work.resolve("manifest-1.json").toString(), "--scope", "com.example.app", "--url",
                "https://x.example/", "--state", work.resolve("s").toString());
        assertEquals(1, badRoot.code);
        assertTrue(badRoot.err, badRoot.err.contains("the embedded root is invalid"));
    }

    @Test
    public void aMissingManifestIsANetworkFailureAfterTheRootWalk() throws Exception {
        // manifest.json 404: a published scope always has one, so this is exit 3, not "unchanged".
        Path tree = tree(null);
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-persist");
            Run first = run(refreshArgs(server.port(), state));
            assertEquals(3, first.code);
            assertTrue(first.out.startsWith("outcome     network failure: manifest.json: HTTP 404\n"));
            assertTrue(server.requests.get(0).startsWith("GET /v1/com.example.app/root/2.json "));
        }
    }

    static String baseline(Path dir, Pin pin, boolean enforce) throws IOException {
        Path file = dir.resolve("baseline-" + pin.toString().substring(7, 12).replace('/', '_') + enforce + ".json");
        Files.writeString(file, "{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[{\"name\":\"api.example.test\",\"enforce\":" + enforce
                + ",\"pins\":[\"" + pin + "\"]}]}");
        return file.toString();
    }

    static String[] connectArgs(Path state, String baseline, String connectTo, String target, boolean cafile) {
        List<String> a = new ArrayList<>(List.of("client", "connect", "--root", work.resolve("root-1.json").toString(), "--scope", "com.example.app",
                "--state", state.toString()));
        if (baseline != null) a.addAll(List.of("--baseline", baseline));
        if (cafile) a.addAll(List.of("--cafile", pki.path("root.pem").toString()));
        if (connectTo != null) a.addAll(List.of("--connect-to", connectTo));
        a.add(target);
        return a.toArray(new String[0]);
    }

    @Test
    public void connectTrustedRejectedNotPinnedAndReportOnly() throws Exception {
        Pin leaf = Pin.ofDigest(Sha256.digest(pki.cert("leaf").getPublicKey().getEncoded()));
        Pin other = Pin.ofDigest(Sha256.digest(pki.cert("leaf2").getPublicKey().getEncoded()));
        Path state = work.resolve("state-connect");
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            String target = "api.example.test:" + server.port;
            Run trusted = run(connectArgs(state, baseline(work, leaf, true), "127.0.0.1", target, true));
            assertEquals(trusted.err, 0, trusted.code);
            assertEquals("trusted: api.example.test matches " + leaf + " of api.example.test\nHTTP status 200\n", trusted.out);
            Run rejected = run(connectArgs(state, baseline(work, other, true), "127.0.0.1", target, true));
            assertEquals(1, rejected.code);
            assertEquals("pinion-jvm: error: rejected: api.example.test: no key in the verified chain matches a pin\n", rejected.err);
            Run reportOnly = run(connectArgs(state, baseline(work, other, false), "127.0.0.1", target, true));
            assertEquals(0, reportOnly.code);
            assertTrue(reportOnly.out.startsWith("report-only failure: no key in the verified chain matches a pin for api.example.test;"));
            Run notPinned = run(connectArgs(state, null, "127.0.0.1", target, true));
            assertEquals(0, notPinned.code);
            assertTrue(notPinned.out.startsWith("not pinned: no entry covers api.example.test"));
            Run x509 = run(connectArgs(state, baseline(work, leaf, true), "127.0.0.1", target, false));
            assertEquals(1, x509.code);
            assertTrue(x509.err, x509.err.startsWith("pinion-jvm: error: rejected: api.example.test: X.509 validation failed: "));
            Run withPort = run(connectArgs(state, baseline(work, leaf, true), "127.0.0.1:" + server.port, "api.example.test:9", true));
            assertEquals(withPort.err, 0, withPort.code);
        }
        Run network = run(connectArgs(state, null, "127.0.0.1:1", "api.example.test:443", true));
        assertEquals(3, network.code);
    }
}
