// pinion-jvm client refresh under a root with a log: the log line and --json member, over HTTPS to 127.0.0.1 (port 0).
package org.pinion.cli;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.tls.TestPki;
import org.pinion.trust.JsonValue;
import org.pinion.trust.Limits;
import org.pinion.trust.LogChain;
import org.pinion.trust.SignedChain;
import org.pinion.trust.StrictJsonParser;
import org.pinion.trust.Timestamp;

public class CliLogTest {
    private static final String AT = "2026-06-10T00:00:00Z";
    private static Path work;
    private static TestPki pki;

    @BeforeClass
    public static void setUp() throws Exception {
        work = Files.createTempDirectory("pinion-cli-log");
        pki = new TestPki(Files.createDirectories(work.resolve("pki")));
        Files.write(work.resolve("root-1.json"), LogChain.ROOT);
    }

    @AfterClass
    public static void tearDown() throws IOException {
        try (var walk = Files.walk(work)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static String[] out(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)).run(List.of(args));
        return new String[] {Integer.toString(code), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    private static String[] refresh(Path tree, StaticHttpsServer server, String... extra) {
        String[] base = {"client", "refresh", "--root", work.resolve("root-1.json").toString(), "--scope", SignedChain.SCOPE,
            "--url", "https://127.0.0.1:" + server.port() + "/", "--state", tree.resolve("state").toString(), "--cafile",
            pki.path("root.pem").toString(), "--at", AT};
        String[] all = java.util.Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return out(all);
    }

    @Test
    public void refreshShowsTheLogReasonAndTheCheckpoint() throws Exception {
        Path tree = Files.createTempDirectory(work, "tree");
        Path scope = Files.createDirectories(tree.resolve("v1/" + SignedChain.SCOPE + "/root"));
        Files.write(scope.resolve("1.json"), LogChain.ROOT);
        Files.write(scope.getParent().resolve("manifest.json"), LogChain.M1);
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            String[] missing = refresh(tree, server);
            assertEquals(missing[2], "1", missing[0]);
            assertTrue(missing[1], missing[1].contains("\nlog reason  log-proof-missing\n"
                    + "log         no verified checkpoint yet: the manifest does not count as current\n"));
            assertTrue(missing[1], missing[1].startsWith("outcome     rejected: transparency log: the publisher serves no manifest.proof (404) [log-proof-missing]\n"));
            long at = Timestamp.parse(AT).seconds;
            Files.write(scope.getParent().resolve("manifest.proof"), LogChain.proof(at - 60));
            String[] ok = refresh(tree, server);
            assertEquals(ok[2], "0", ok[0]);
            assertTrue(ok[1], ok[1].contains("\nlog         example.test/log checkpoint 1 entries, t_q 2026-06-09T23:59:00Z age 60s (fresh)\n"));
            String[] json = refresh(tree, server, "--json");
            assertEquals(json[2], "0", json[0]);
            JsonValue doc = StrictJsonParser.parse(json[1].getBytes(StandardCharsets.UTF_8), Limits.STANDARD.json());
            JsonValue log = doc.get("log");
            assertEquals("example.test/log", log.get("origin").text());
            assertEquals(JsonValue.Kind.NULL, doc.get("logReason").kind());
            assertEquals("1781049540", log.get("quorumTimeSeconds").text());
            assertEquals("60", log.get("ageSeconds").text());
            assertEquals(JsonValue.Kind.BOOL, log.get("equivocationEvidence").kind());
            assertTrue(!log.get("equivocationEvidence").flag());
            assertEquals("1", log.get("checkpointSize").text());
            assertEquals("2026-06-09T23:59:00Z", log.get("quorumTime").text());
            assertEquals("fresh", log.get("freshness").text());
            assertTrue(server.requests.toString(), server.requests.stream().anyMatch(r -> r.startsWith("GET /v1/" + SignedChain.SCOPE + "/manifest.proof ")));
            Files.write(scope.getParent().resolve("manifest.proof"), new byte[40 * 1024]);
            String[] tooLarge = refresh(tree, server, "--json");
            assertEquals("1", tooLarge[0]);
            JsonValue refused = StrictJsonParser.parse(tooLarge[1].getBytes(StandardCharsets.UTF_8), Limits.STANDARD.json());
            assertEquals("log-proof-too-large", refused.get("logReason").text());
        }
    }
}
