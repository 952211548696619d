// The shared conformance suite (conformance/README.md) run against the JVM SDK, and the parser-differential corpus.
package org.pinion.conformance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.Test;
import java.util.Collections;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import org.pinion.tls.TestPki;
import org.pinion.tls.TrustManagers;
import org.pinion.trust.Pin;
import org.pinion.trust.TreeFile;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateFetcher;
import org.pinion.update.OkHttpUpdateFetcher;
import org.pinion.update.TestPublisher;
import org.pinion.trust.FormatException;
import org.pinion.trust.JsonValue;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestPayload;
import org.pinion.trust.StrictJsonParser;

public class ConformanceTest {
    /** The repository's conformance/ directory (the tests run in jvm/). */
    private static final Path CONFORMANCE = Paths.get("").toAbsolutePath().resolve("../conformance").normalize();

    private static List<Path> cases(String folder) throws IOException {
        try (Stream<Path> entries = Files.list(CONFORMANCE.resolve(folder))) {
            List<Path> list = new ArrayList<>();
            entries.sorted(Comparator.comparing(Path::toString)).forEach(list::add);
            return list;
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            List<Path> paths = new ArrayList<>();
            walk.forEach(paths::add);
            paths.sort(Comparator.reverseOrder());
            for (Path path : paths) Files.deleteIfExists(path);
        }
    }

    private static int runCase(Path directory, boolean pending, List<String> failures) throws Exception {
        return runCase(directory, pending, failures, new boolean[1]);
    }

    private static int runCase(Path directory, boolean pending, List<String> failures, boolean[] supported) throws Exception {
        return runCase(directory, pending, failures, supported, null);
    }

    /** @param publisher null to run in memory, else the HTTPS publisher the case is served by (through OkHttp) */
    private static int runCase(Path directory, boolean pending, List<String> failures, boolean[] supported, Publisher publisher)
            throws Exception {
        Path state = Files.createTempDirectory("pinion-conformance-");
        try {
            CaseRunner runner = new CaseRunner(directory, state.resolve("state"));
            if (publisher != null) publisher.serve(runner);
            if (pending) assertNotNull(directory + " has no pending note", runner.pendingNote());
            else assertNull(directory + " is marked pending but sits in cases/", runner.pendingNote());
            supported[0] = runner.supportedByJvm();
            return runner.run();
        } catch (CaseRunner.Failure failure) {
            failures.add(failure.getMessage());
            return 0;
        } finally {
            deleteTree(state);
        }
    }

    /** Every case of conformance/cases/ passes; together they have at least 120 steps. */
    @Test
    public void everyCasePasses() throws Exception {
        List<String> failures = new ArrayList<>();
        int steps = 0;
        List<Path> directories = cases("cases");
        assertTrue(directories.size() >= 10);
        for (Path directory : directories) steps += runCase(directory, false, failures);
        assertEquals("failing conformance steps", List.of(), failures);
        assertTrue("only " + steps + " steps", steps >= 120);
        System.out.println("conformance: " + directories.size() + " cases, " + steps + " steps passed");
    }

    /**
     * A case's publisher over HTTPS (conformance/README.md, "Publisher modes"): the case's answers, on
     * connections the server closes after every response without saying so, or drops whenever idle.
     * The client is the SDK's own update channel ({@link OkHttpUpdateFetcher} on the update channel's client).
     */
    private static final class Publisher implements AutoCloseable {
        /** Where the redirecting publisher sends every request: the same path under this prefix. */
        static final String MOVED = "/moved";
        final TestPublisher server;
        volatile CaseRunner runner;

        Publisher(TestPki pki, TestPublisher.Mode mode, boolean dropIdle) throws Exception {
            server = new TestPublisher(pki, mode, request -> {
                String target = request.target.startsWith(MOVED) ? request.target.substring(MOVED.length()) : request.target;
                int q = target.indexOf('?');
                String path = q < 0 ? target : target.substring(0, q);
                String query = q < 0 ? null : target.substring(q + 1);
                String file = path.substring(path.indexOf('/', "/v1/".length()) + 1);
                TreeFile tree = file.equals("manifest.json") ? TreeFile.MANIFEST : file.equals("manifest.proof") ? TreeFile.MANIFEST_PROOF
                        : TreeFile.root(Long.parseLong(file.substring("root/".length(), file.length() - ".json".length())));
                UpdateAnswer answer = runner.answer(tree, request.headers.get("if-none-match"), query);
                return answer;
            });
            OkHttpClient client = OkHttpUpdateFetcher.clientBuilder(20, TrustManagers.platform(pki.path("root.pem")),
                    Collections.<Pin>emptyList()).build();
            UpdateFetcher http = new OkHttpUpdateFetcher(client, HttpUrl.parse("https://127.0.0.1:" + server.port() + "/"),
                    "conformance.test");
            // The publisher's idle timeout fires between refreshes: every refresh starts with a root request.
            this.http = dropIdle ? request -> {
                if (request.file.kind == TreeFile.Kind.ROOT) server.dropIdleConnections();
                return http.fetch(request);
            } : http;
        }

        final UpdateFetcher http;

        void serve(CaseRunner runner) {
            this.runner = runner;
            runner.useTransport(http);
        }

        @Override
        public void close() throws IOException { server.close(); }
    }

    private static void everyCaseOverHttp(TestPublisher.Mode mode, boolean dropIdle) throws Exception {
        everyCaseOverHttp(mode, dropIdle, false);
    }

    private static void everyCaseOverHttp(TestPublisher.Mode mode, boolean dropIdle, boolean redirecting) throws Exception {
        Path pkiDir = Files.createTempDirectory("pinion-conformance-pki-");
        try (Publisher publisher = new Publisher(new TestPki(pkiDir), mode, dropIdle)) {
            if (redirecting) {
                // A relative Location on the same host, as a publisher that moved its tree answers.
                publisher.server.redirect = request -> request.target.startsWith("/v1/") ? Publisher.MOVED + request.target : null;
            }
            List<String> failures = new ArrayList<>();
            int steps = 0;
            List<Path> directories = cases("cases");
            for (Path directory : directories) steps += runCase(directory, false, failures, new boolean[1], publisher);
            assertEquals("failing conformance steps over HTTPS (" + mode + (dropIdle ? ", idle drops" : "") + (redirecting ? ", redirects" : "") + ")",
                    Collections.emptyList(), failures);
            assertTrue("only " + publisher.server.requests.size() + " requests", publisher.server.requests.size() > steps);
            System.out.println("conformance over HTTPS (" + mode + (dropIdle ? ", idle drops" : "") + (redirecting ? ", redirects" : "") + "): " + directories.size()
                    + " cases, " + steps + " steps, " + publisher.server.requests.size() + " requests, "
                    + publisher.server.connections() + " connections");
        } finally {
            deleteTree(pkiDir);
        }
    }

    /** Every case passes through the SDK's OkHttp update channel against a publisher that closes every connection after one response, unannounced. */
    @Test
    public void everyCasePassesAgainstAPublisherThatClosesEveryConnection() throws Exception {
        everyCaseOverHttp(TestPublisher.Mode.CLOSE_SILENTLY, false);
    }

    /** Every case passes against a keep-alive publisher that drops its idle connections between refreshes. */
    @Test
    public void everyCasePassesAgainstAPublisherThatDropsIdleConnections() throws Exception {
        everyCaseOverHttp(TestPublisher.Mode.KEEP_ALIVE, true);
    }

    /**
     * Every case passes against a publisher that answers every request with a 307 to the same path under
     * another prefix on its own host: the update channel follows https redirects on the publisher's host
     * (docs/ARCHITECTURE.md, "The update-channel seam"), as the Swift SDK's does.
     */
    @Test
    public void everyCasePassesAgainstAPublisherThatRedirectsOnItsHost() throws Exception {
        everyCaseOverHttp(TestPublisher.Mode.CLOSE_SILENTLY, false, true);
    }

    /**
     * Pending cases are run, counted and listed; those whose {@code supportedBy} lists {@code jvm} must pass
     * (conformance/README.md), the others do not fail the suite.
     */
    @Test
    public void pendingCasesAreReported() throws Exception {
        List<Path> directories = cases("cases-pending");
        List<String> supportedFailures = new ArrayList<>();
        int supportedCases = 0;
        for (Path directory : directories) {
            List<String> failures = new ArrayList<>();
            boolean[] supported = new boolean[1];
            int steps = runCase(directory, true, failures, supported);
            if (supported[0]) {
                supportedCases++;
                supportedFailures.addAll(failures);
            }
            System.out.println("conformance: PENDING " + directory.getFileName() + (supported[0] ? " (supported by jvm)" : "") + ": "
                    + (failures.isEmpty() ? "passes (" + steps + " steps) in the JVM SDK" : failures.get(0)));
        }
        System.out.println("conformance: " + directories.size() + " pending cases, " + supportedCases + " supported by jvm");
        assertEquals("failing pending cases that list jvm in supportedBy", List.of(), supportedFailures);
    }

    /** The parser-differential corpus: the verdict and reason code of every document. */
    @Test
    public void parserCorpus() throws Exception {
        Path folder = CONFORMANCE.resolve("parser");
        JsonValue document = StrictJsonParser.parse(Files.readAllBytes(folder.resolve("expectations.json")),
                CaseRunner.CASE_LIMITS);
        List<JsonValue> entries = document.get("entries").elements();
        assertTrue(entries.size() >= 40);
        List<String> failures = new ArrayList<>();
        for (JsonValue entry : entries) {
            String file = entry.get("file").text();
            byte[] bytes = Files.readAllBytes(folder.resolve(file));
            String verdict;
            String reason = null;
            try {
                ManifestPayload.parse(bytes, Limits.STANDARD);
                verdict = "accept";
            } catch (FormatException e) {
                verdict = "reject";
                reason = ReasonCodes.of(e.rule());
            }
            String expectedReason = entry.get("reason") == null ? null : entry.get("reason").text();
            if (!verdict.equals(entry.get("verdict").text()) || (reason == null ? expectedReason != null : !reason.equals(expectedReason))) {
                failures.add(file + ": expected " + entry.get("verdict").text() + " " + expectedReason + ", got " + verdict + " " + reason);
            }
        }
        if (!failures.isEmpty()) fail(String.join("\n", failures));
    }
}
