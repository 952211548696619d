// PinningClient over its injected seams: an in-memory update channel (no server), the poll token it sends, statuses, a bad CA file.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import org.pinion.crypto.StrictEd25519;
import org.pinion.storage.StateStore;
import org.pinion.trust.Baseline;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.ClientException;
import org.pinion.trust.Limits;
import org.pinion.trust.Pin;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateFetchError;
import org.pinion.trust.UpdateFetcher;
import org.pinion.trust.UpdateRequest;

public class PinningClientSeamTest {
    /** An in-memory publisher: answers by path, records every request. */
    static final class FakeChannel implements UpdateFetcher {
        final Map<String, UpdateAnswer> answers = new HashMap<>();
        final List<UpdateRequest> requests = new ArrayList<>();

        @Override
        public UpdateAnswer fetch(UpdateRequest request) throws UpdateFetchError {
            requests.add(request);
            UpdateAnswer answer = answers.get(request.file.path());
            if (answer == null) return new UpdateAnswer(404, null, null, -1);
            if (answer.etag != null && answer.etag.equals(request.ifNoneMatch)) return new UpdateAnswer(304, answer.etag, null, -1);
            return answer;
        }
    }

    @org.junit.AfterClass
    public static void tearDown() throws java.io.IOException { PinningClientTest.tearDown(); }

    static PinningClient client(FakeChannel channel, ClientConfiguration config) throws ClientException {
        return new PinningClient(config, StrictEd25519.INSTANCE, channel, new StateStore(config.stateDirectory, config.scope, config.limits), null,
                null);
    }

    static ClientConfiguration config(String name) throws Exception {
        PinningClientTest.setUpOnce();
        return PinningClientTest.config(1, PinningClientTest.work.resolve(name));
    }

    static byte[] manifest(long version) throws Exception {
        return PinningClientTest.manifest(version, Collections.singletonList(PinningClientTest.pinOf("leaf")), Collections.<Pin>emptyList(), null);
    }

    @Test
    public void aRefreshRunsOverTheInjectedChannelAndSendsThePollToken() throws Exception {
        FakeChannel channel = new FakeChannel();
        channel.answers.put("manifest.json", new UpdateAnswer(200, "\"m1\"", manifest(1), -1));
        PinningClient client = client(channel, config("seam-1"));
        assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
        assertEquals("root/2.json, manifest.json?have=0&base=0000000000000000", requests(channel));
        channel.requests.clear();
        assertEquals(RefreshedState.Outcome.UNCHANGED, client.refresh().outcome);
        assertEquals("root/2.json, manifest.json?have=1&base=0000000000000000", requests(channel));
        assertEquals("\"m1\"", channel.requests.get(1).ifNoneMatch);
    }

    @Test
    public void theBaseOfThePollTokenIsTheBaselineDocumentsDigest() throws Exception {
        byte[] document = ("{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[{\"name\":\"api.example.test\",\"pins\":[\""
                + PinningClientTest.pinOf("leaf") + "\"]}]}").getBytes(StandardCharsets.UTF_8);
        ClientConfiguration config = config("seam-2");
        config.baseline = Baseline.parse(document, Limits.STANDARD);
        FakeChannel channel = new FakeChannel();
        channel.answers.put("manifest.json", new UpdateAnswer(200, null, manifest(1), -1));
        client(channel, config).refresh();
        String base = org.pinion.trust.Codec.hex(org.pinion.crypto.Sha256.digest(document)).substring(0, 16);
        assertEquals("manifest.json?have=0&base=" + base, channel.requests.get(1).pathAndQuery());
    }

    @Test
    public void goneEndsTheRootWalkAndARedirectOrAnUnaskedNotModifiedIsRefused() throws Exception {
        FakeChannel channel = new FakeChannel();
        channel.answers.put("root/2.json", new UpdateAnswer(410, null, null, -1));
        channel.answers.put("manifest.json", new UpdateAnswer(200, null, manifest(1), -1));
        PinningClient client = client(channel, config("seam-3"));
        assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);

        channel.answers.put("manifest.json", new UpdateAnswer(302, null, null, -1));
        PinningClient.Report redirected = client.refresh();
        assertEquals(RefreshedState.Outcome.REJECTED, redirected.outcome);
        assertEquals(ClientException.Kind.FETCH_REFUSED, redirected.error.kind());

        // The server answers 304 although no ETag is held (the manifest above had none): refused, not "not modified".
        channel.answers.put("manifest.json", new UpdateAnswer(304, null, null, -1));
        PinningClient.Report unasked = client.refresh();
        assertEquals(RefreshedState.Outcome.REJECTED, unasked.outcome);
        assertEquals(ClientException.Kind.FETCH_REFUSED, unasked.error.kind());
        assertTrue(unasked.error.getMessage(), unasked.error.getMessage().contains("no If-None-Match"));

        channel.answers.put("manifest.json", new UpdateAnswer(410, null, null, -1));
        assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, client.refresh().outcome);
    }

    /** A closed registration's listener is never run again and no longer held; the others still run. */
    @Test
    public void aClosedTrustRemovedListenerIsNoLongerRunOrHeld() throws Exception {
        FakeChannel channel = new FakeChannel();
        channel.answers.put("manifest.json", new UpdateAnswer(200, null, manifest(1), -1));
        PinningClient client = client(channel, config("seam-listeners"));
        int[] kept = new int[1];
        int[] removed = new int[1];
        Runnable counter = () -> removed[0]++;
        ListenerRegistration keep = client.addTrustRemovedListener(() -> kept[0]++);
        ListenerRegistration first = client.addTrustRemovedListener(counter);
        ListenerRegistration second = client.addTrustRemovedListener(counter);
        assertEquals(3, client.trustRemovedListenerCount());
        assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
        assertEquals(1, kept[0]);
        assertEquals("the same Runnable registered twice runs twice", 2, removed[0]);

        first.close();
        first.close();
        assertEquals("closing twice removes one registration only", 2, client.trustRemovedListenerCount());
        channel.answers.put("manifest.json", new UpdateAnswer(200, null,
                PinningClientTest.manifest(2, Collections.singletonList(PinningClientTest.pinOf("int")), Collections.<Pin>emptyList(), null), -1));
        assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
        assertEquals(2, kept[0]);
        assertEquals("the other registration of the same Runnable still runs", 3, removed[0]);

        second.close();
        try (ListenerRegistration scoped = client.addTrustRemovedListener(() -> removed[0] += 100)) {
            assertEquals(2, client.trustRemovedListenerCount());
        }
        assertEquals(1, client.trustRemovedListenerCount());
        channel.answers.put("manifest.json", new UpdateAnswer(200, null, manifest(3), -1));
        assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
        assertEquals(3, kept[0]);
        assertEquals("no removed listener ran", 3, removed[0]);
        keep.close();
        assertEquals(0, client.trustRemovedListenerCount());
        try {
            client.addTrustRemovedListener(null);
            fail("a null listener was accepted");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("null"));
        }
    }

    @Test
    public void aTransportFailureIsANetworkFailureAndKeepsThePolicy() throws Exception {
        ClientConfiguration config = config("seam-4");
        FakeChannel channel = new FakeChannel();
        channel.answers.put("manifest.json", new UpdateAnswer(200, null, manifest(1), -1));
        PinningClient client = client(channel, config);
        client.refresh();
        List<ClientEvent> events = new ArrayList<>();
        PinningClient failing = new PinningClient(config, StrictEd25519.INSTANCE, request -> {
            throw UpdateFetchError.network("connection reset");
        }, new StateStore(config.stateDirectory, config.scope, config.limits), events::add, null);
        PinningClient.Report report = failing.refresh();
        assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, report.outcome);
        assertEquals(ClientException.Kind.FETCH_FAILED, report.error.kind());
        assertEquals(1, failing.currentPolicy().domains().size());
    }

    @Test
    public void aBadCaFileIsAConfigurationErrorNamingTheFile() throws Exception {
        Path notPem = Files.write(PinningClientTest.work.resolve("not-a-ca.pem"), "not a certificate".getBytes(StandardCharsets.UTF_8));
        Path empty = Files.write(PinningClientTest.work.resolve("empty-ca.pem"), new byte[0]);
        Path missing = PinningClientTest.work.resolve("no-such-ca.pem");
        for (Path caFile : new Path[] {notPem, empty, missing}) {
            ClientConfiguration config = config("seam-5");
            config.caFile = caFile;
            try {
                new PinningClient(config, null, null);
                fail(caFile + " was accepted as a CA file");
            } catch (ClientException e) {
                assertEquals(caFile.toString(), ClientException.Kind.CONFIGURATION, e.kind());
                assertTrue(e.getMessage(), e.getMessage().contains(caFile.toString()));
            }
            assertTrue("nothing written for " + caFile, !Files.exists(config.stateDirectory.resolve("state-a")));
        }
    }

    private static String requests(FakeChannel channel) {
        List<String> list = new ArrayList<>();
        for (UpdateRequest r : channel.requests) list.add(r.pathAndQuery());
        return String.join(", ", list);
    }
}
