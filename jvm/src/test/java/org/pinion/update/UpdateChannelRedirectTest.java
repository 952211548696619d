// The update channel's redirects over HTTPS: followed on https and the publisher's host, refused off it, as the Swift SDK's transport does.
package org.pinion.update;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.TestPki;
import org.pinion.trust.Fetch;
import org.pinion.trust.Pin;
import org.pinion.trust.PollToken;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateFetchError;
import org.pinion.trust.UpdateRequest;
import org.pinion.trust.UpdateStatus;

public class UpdateChannelRedirectTest {
    static Path work;

    @BeforeClass
    public static void setUp() throws Exception {
        StaleConnectionRetryTest.setUp();
        work = StaleConnectionRetryTest.work;
    }

    @AfterClass
    public static void tearDown() throws IOException { StaleConnectionRetryTest.tearDown(); }

    /** A keep-alive publisher that serves BODY with an ETag at every path under /moved/, and redirects as told elsewhere. */
    static TestPublisher publisher(java.util.function.Function<TestPublisher.Received, String> redirect) throws Exception {
        TestPublisher server = new TestPublisher(StaleConnectionRetryTest.pki, TestPublisher.Mode.KEEP_ALIVE,
                request -> request.target.startsWith("/moved/") ? new UpdateAnswer(200, "\"e\"", StaleConnectionRetryTest.BODY, -1)
                        : new UpdateAnswer(404, null, null, -1));
        server.redirect = redirect;
        return server;
    }

    static OkHttpUpdateFetcher fetcher(TestPublisher server) throws Exception {
        return StaleConnectionRetryTest.fetcher(server, "root.pem", Collections.<Pin>emptyList());
    }

    static UpdateFetchError refusal(OkHttpUpdateFetcher fetcher, UpdateRequest request) {
        try {
            UpdateAnswer answer = fetcher.fetch(request);
            fail("answered " + answer.status);
            return null;
        } catch (UpdateFetchError e) {
            return e;
        }
    }

    @Test
    public void anHttpsRedirectOnThePublishersHostIsFollowedWithTheRequestsHeaders() throws Exception {
        for (int status : new int[] {301, 302, 303, 307, 308}) {
            try (TestPublisher server = publisher(r -> r.target.startsWith("/v1/") ? "/moved" + r.target : null)) {
                server.redirectStatus = status;
                UpdateRequest request = UpdateRequest.manifest("\"old\"", PollToken.of(0, null, org.pinion.crypto.StrictEd25519.INSTANCE), 1024);
                UpdateAnswer answer = fetcher(server).fetch(request);
                assertEquals(200, answer.status);
                assertArrayEquals(StaleConnectionRetryTest.BODY, answer.body());
                assertEquals(2, server.requests.size());
                assertEquals("/moved/v1/s.test/manifest.json?have=0&base=0000000000000000", server.requests.get(1).target);
                assertEquals("\"old\"", server.requests.get(1).headers.get("if-none-match"));
            }
        }
    }

    @Test
    public void threeRedirectsAreFollowedAndTheFourthIsRefused() throws Exception {
        // /v1/... -> /a/v1/... -> /a/a/v1/... -> ...: each hop one more prefix, then /moved/...: `hops` redirects.
        for (int hops : new int[] {3, 4}) {
            String last = "/" + String.join("", Collections.nCopies(hops - 1, "a/")) + "v1/";
            try (TestPublisher server = publisher(r -> r.target.startsWith(last) ? "/moved" + r.target
                    : r.target.startsWith("/moved/") ? null : "/a" + r.target)) {
                UpdateRequest request = UpdateRequest.root(2, 1024);
                if (hops == 3) {
                    assertEquals(200, fetcher(server).fetch(request).status);
                    assertEquals(4, server.requests.size());
                } else {
                    UpdateFetchError error = refusal(fetcher(server), request);
                    assertEquals(UpdateFetchError.Kind.REFUSED, error.kind);
                    assertTrue(error.getMessage(), error.getMessage().contains("more than 3 redirects"));
                    assertEquals("the fourth redirect is not followed", 4, server.requests.size());
                }
            }
        }
    }

    @Test
    public void aRedirectToHttpIsRefusedWithoutARequestToIt() throws Exception {
        try (TestPublisher server = publisher(r -> r.target.startsWith("/v1/") ? "http://127.0.0.1:" + r.headers.get("host").split(":")[1] + "/moved" + r.target : null)) {
            UpdateFetchError error = refusal(fetcher(server), UpdateRequest.root(2, 1024));
            assertEquals(UpdateFetchError.Kind.REFUSED, error.kind);
            assertTrue(error.getMessage(), error.getMessage().contains("refused redirect to http"));
            assertEquals(1, server.requests.size());
        }
    }

    @Test
    public void aRedirectToAnotherHostIsRefusedBeforeConnectingToIt() throws Exception {
        // localhost reaches the same server, but is another host name than the publisher's 127.0.0.1.
        try (TestPublisher server = publisher(r -> r.target.startsWith("/v1/") ? "https://localhost:" + r.headers.get("host").split(":")[1] + "/moved" + r.target : null)) {
            UpdateFetchError error = refusal(fetcher(server), UpdateRequest.proof(1024));
            assertEquals(UpdateFetchError.Kind.REFUSED, error.kind);
            assertTrue(error.getMessage(), error.getMessage().contains("refused redirect to localhost: the update channel stays on the publisher's host"));
            assertEquals(1, server.connections());
            assertEquals(1, server.requests.size());
        }
    }

    @Test
    public void aRedirectToAnotherSchemeIsRefusedAndAnUnusableLocationIsANetworkFailure() throws Exception {
        try (TestPublisher server = publisher(r -> r.target.startsWith("/v1/") ? "ftp://127.0.0.1/x" : null)) {
            UpdateFetchError error = refusal(fetcher(server), UpdateRequest.root(2, 1024));
            assertEquals(UpdateFetchError.Kind.REFUSED, error.kind);
            assertTrue(error.getMessage(), error.getMessage().contains("not https"));
        }
        try (TestPublisher server = publisher(r -> r.target.startsWith("/v1/") ? "https://[bad" : null)) {
            UpdateFetchError error = refusal(fetcher(server), UpdateRequest.root(2, 1024));
            assertEquals(UpdateFetchError.Kind.NETWORK, error.kind);
            assertTrue(error.getMessage(), error.getMessage().contains("invalid Location"));
        }
    }

    @Test
    public void aRedirectWithoutLocationIsTheFinalAnswerAndTheStatusTableRefusesIt() throws Exception {
        try (TestPublisher server = new TestPublisher(StaleConnectionRetryTest.pki, TestPublisher.Mode.KEEP_ALIVE,
                request -> new UpdateAnswer(302, null, null, -1))) {
            UpdateRequest request = UpdateRequest.root(2, 1024);
            UpdateAnswer answer = fetcher(server).fetch(request);
            assertEquals(302, answer.status);
            assertEquals(Fetch.Status.REFUSED, UpdateStatus.classify(request.file, answer, false).status);
            assertEquals(1, server.requests.size());
        }
    }
}
