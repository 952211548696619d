// The update channel's one status mapping (docs/ARCHITECTURE.md table), the poll token's rendering and the request shapes.
package org.pinion.trust;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import org.junit.Test;
import org.pinion.crypto.StrictEd25519;

public class UpdateStatusTest {
    private static final TreeFile ROOT = TreeFile.root(3);
    private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);

    private static Fetch.Status of(TreeFile file, int status, boolean sentIfNoneMatch) {
        return UpdateStatus.classify(file, new UpdateAnswer(status, "\"e\"", status == 200 ? BODY : null, 60), sentIfNoneMatch).status;
    }

    @Test
    public void twoHundredIsTheDocumentAndOnlyTheManifestKeepsItsETag() {
        for (TreeFile file : new TreeFile[] {ROOT, TreeFile.MANIFEST, TreeFile.MANIFEST_PROOF}) {
            Fetch fetch = UpdateStatus.classify(file, new UpdateAnswer(200, "\"e\"", BODY, 60), false);
            assertEquals(Fetch.Status.FOUND, fetch.status);
            assertArrayEquals(BODY, fetch.body());
            assertEquals(60, fetch.maxAge);
            if (file.kind == TreeFile.Kind.MANIFEST) assertEquals("\"e\"", fetch.etag);
            else assertNull(fetch.etag);
        }
    }

    @Test
    public void notModifiedOnlyForAManifestRequestThatSentIfNoneMatch() {
        assertEquals(Fetch.Status.NOT_MODIFIED, of(TreeFile.MANIFEST, 304, true));
        assertEquals(60, UpdateStatus.classify(TreeFile.MANIFEST, new UpdateAnswer(304, null, null, 60), true).maxAge);
        assertEquals(Fetch.Status.REFUSED, of(TreeFile.MANIFEST, 304, false));
        // "Not modified" means nothing for a root or the proof: refused like any 3xx, as the Swift SDK does.
        assertEquals(Fetch.Status.REFUSED, of(ROOT, 304, true));
        assertEquals(Fetch.Status.REFUSED, of(TreeFile.MANIFEST_PROOF, 304, false));
    }

    @Test
    public void notFoundAndGoneEndTheWalkAndMarkTheProofAbsentButFailTheManifest() {
        for (int status : new int[] {404, 410}) {
            assertEquals(Fetch.Status.NOT_FOUND, of(ROOT, status, false));
            assertEquals(Fetch.Status.NOT_FOUND, of(TreeFile.MANIFEST_PROOF, status, false));
            assertEquals(Fetch.Status.FAILED, of(TreeFile.MANIFEST, status, true));
            assertEquals(Fetch.Status.FAILED, of(TreeFile.MANIFEST, status, false));
        }
    }

    @Test
    public void redirectsAreRefusedAndEveryOtherStatusFails() {
        for (TreeFile file : new TreeFile[] {ROOT, TreeFile.MANIFEST, TreeFile.MANIFEST_PROOF}) {
            for (int status : new int[] {300, 301, 302, 303, 307, 308, 399}) assertEquals(file + " " + status, Fetch.Status.REFUSED, of(file, status, true));
            for (int status : new int[] {100, 201, 204, 206, 400, 401, 403, 405, 429, 500, 502, 503, 599}) {
                assertEquals(file + " " + status, Fetch.Status.FAILED, of(file, status, true));
            }
        }
    }

    @Test
    public void thePollTokenIsHaveThenBaseAsTheSwiftSdkRendersIt() {
        StrictEd25519 crypto = StrictEd25519.INSTANCE;
        assertEquals("have=0&base=0000000000000000", PollToken.of(0, null, crypto).query());
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad (FIPS 180-2 B.1).
        assertEquals("have=42&base=ba7816bf8f01cfea", PollToken.of(42, "abc".getBytes(StandardCharsets.US_ASCII), crypto).query());
        // An empty baseline document is a document: its digest, not zeros.
        assertEquals("have=1&base=e3b0c44298fc1c14", PollToken.of(1, new byte[0], crypto).query());
        assertEquals("have=9007199254740991&base=0000000000000000", PollToken.of(9_007_199_254_740_991L, null, crypto).query());
        try {
            PollToken.of(-1, null, crypto);
            fail("a negative version was accepted");
        } catch (IllegalArgumentException expected) {
            // refused
        }
    }

    @Test
    public void onlyTheManifestRequestCarriesTheQuery() {
        PollToken token = PollToken.of(7, null, StrictEd25519.INSTANCE);
        assertEquals("root/3.json", UpdateRequest.root(3, 100).pathAndQuery());
        assertEquals("manifest.json?have=7&base=0000000000000000", UpdateRequest.manifest("\"x\"", token, 100).pathAndQuery());
        assertEquals("manifest.proof", UpdateRequest.proof(100).pathAndQuery());
        assertNull(UpdateRequest.proof(100).ifNoneMatch);
        try {
            UpdateRequest.manifest(null, null, 100);
            fail("a manifest request without a poll token was made");
        } catch (IllegalArgumentException expected) {
            // refused
        }
        try {
            TreeFile.root(0);
            fail("root/0.json was named");
        } catch (IllegalArgumentException expected) {
            // refused
        }
    }
}
