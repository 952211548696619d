// The pinsRoleSince rules of DESIGN.md §4-§5 and the restart of the revoked set (§7), on test-signed roots.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.SignedChain.envelope;
import static org.pinion.trust.SignedChain.manifestPayload;
import static org.pinion.trust.SignedChain.rootPayload;

import java.util.List;
import org.junit.Test;

public class PinsRoleSinceTest {
    static final String S = SignedChain.SCOPE;
    static final Timestamp T0 = Fixtures.at("2026-06-02T00:00:00Z");
    static final long CAP = 2_592_000;
    static final byte[] ROOT1 = envelope(PayloadKind.ROOT, rootPayload(S, 1, 0, CAP, new int[] {1}, new int[] {2}), 1);

    static TrustCore core() throws ClientException { return new TrustCore(S, ROOT1, Fixtures.CRYPTO, Limits.STANDARD); }

    static Fetch.Source channel(byte[] root2, byte[] manifest) {
        return new Fetch.Source() {
            @Override
            public Fetch root(long version) { return version == 2 && root2 != null ? Fetch.found(root2) : Fetch.notFound(); }

            @Override
            public Fetch manifest(String etag) { return manifest == null ? Fetch.notModified() : Fetch.found(manifest); }
        };
    }

    static byte[] manifest(long rootVersion, long version, int signer, String revoked) {
        return envelope(PayloadKind.PINS, manifestPayload(S, rootVersion, version, revoked), signer);
    }

    @Test
    public void rotationKeepingPinsRoleSinceKeepsTheManifestCurrent() throws Exception {
        TrustCore core = core();
        TrustedState state = core.refresh(core.initialState(List.of()), T0, channel(null, manifest(1, 1, 2, null))).state;
        byte[] root2 = envelope(PayloadKind.ROOT, rootPayload(S, 2, 1, CAP, new int[] {1}, new int[] {2}), 1);
        RefreshedState rotated = core.refresh(state, T0, channel(root2, null));
        assertEquals(2, rotated.state.chain.newest().version());
        assertTrue("no re-signing needed", rotated.state.manifestValid);
        // A manifest still naming root 1 is accepted under root 2 (pinsRoleSince 1 <= 1 <= 2).
        RefreshedState next = core.refresh(rotated.state, T0, channel(null, manifest(1, 2, 2, null)));
        assertEquals(RefreshedState.Outcome.UPDATED, next.outcome);
        assertTrue(core.restore(next.state.persisted()).state.manifestValid);
    }

    @Test
    public void rotationChangingThePinsRoleMustCutOffOlderManifests() throws Exception {
        TrustCore core = core();
        byte[] kept = envelope(PayloadKind.ROOT, rootPayload(S, 2, 1, CAP, new int[] {1}, new int[] {3}), 1);
        RefreshedState refused = core.refresh(core.initialState(List.of()), T0, channel(kept, null));
        assertEquals(TrustException.Kind.PINS_ROLE_SINCE_INVALID, refused.error.trust().kind());
        byte[] raisedCap = envelope(PayloadKind.ROOT, rootPayload(S, 2, 1, CAP + 1, new int[] {1}, new int[] {2}), 1);
        assertEquals(TrustException.Kind.PINS_ROLE_SINCE_INVALID,
                core.refresh(core.initialState(List.of()), T0, channel(raisedCap, null)).error.trust().kind());
        byte[] cut = envelope(PayloadKind.ROOT, rootPayload(S, 2, 2, CAP, new int[] {1}, new int[] {3}), 1);
        assertEquals(RefreshedState.Outcome.UNCHANGED, core.refresh(core.initialState(List.of()), T0, channel(cut, null)).outcome);
    }

    @Test
    public void pinsRoleSinceMayNotGoDownOrAboveTheVersion() throws Exception {
        TrustCore core = core();
        byte[] root2 = envelope(PayloadKind.ROOT, rootPayload(S, 2, 2, CAP, new int[] {1}, new int[] {2}), 1);
        TrustedState two = core.refresh(core.initialState(List.of()), T0, channel(root2, null)).state;
        byte[] lowered = envelope(PayloadKind.ROOT, rootPayload(S, 3, 1, CAP, new int[] {1}, new int[] {2}), 1);
        Fetch.Source three = new Fetch.Source() {
            @Override
            public Fetch root(long version) { return version == 3 ? Fetch.found(lowered) : Fetch.notFound(); }

            @Override
            public Fetch manifest(String etag) { return Fetch.notModified(); }
        };
        assertEquals(TrustException.Kind.PINS_ROLE_SINCE_INVALID, core.refresh(two, T0, three).error.trust().kind());
        byte[] above = envelope(PayloadKind.ROOT, rootPayload(S, 1, 2, CAP, new int[] {1}, new int[] {2}), 1);
        try {
            new TrustCore(S, above, Fixtures.CRYPTO, Limits.STANDARD);
            fail("pinsRoleSince above version accepted");
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("pinsRoleSince"));
        }
    }

    @Test
    public void manifestRootVersionMustLieBetweenPinsRoleSinceAndTheNewest() throws Exception {
        TrustCore core = core();
        RefreshedState ahead = core.refresh(core.initialState(List.of()), T0, channel(null, manifest(2, 1, 2, null)));
        assertEquals(TrustException.Kind.ROOT_VERSION_MISMATCH, ahead.error.trust().kind());
        byte[] cut = envelope(PayloadKind.ROOT, rootPayload(S, 2, 2, CAP, new int[] {1}, new int[] {2}), 1);
        RefreshedState behind = core.refresh(core.initialState(List.of()), T0, channel(cut, manifest(1, 1, 2, null)));
        assertEquals(TrustException.Kind.ROOT_VERSION_MISMATCH, behind.error.trust().kind());
    }

    @Test
    public void revokedSetRestartsWithTheFirstManifestAfterAChangedPinsRoleSince() throws Exception {
        TrustCore core = core();
        String revoked = Fixtures.pin(7).toString();
        TrustedState state = core.refresh(core.initialState(List.of()), T0, channel(null, manifest(1, 1, 2, revoked))).state;
        assertEquals(1, state.revoked().size());
        byte[] kept = envelope(PayloadKind.ROOT, rootPayload(S, 2, 1, CAP, new int[] {1}, new int[] {2}), 1);
        TrustedState same = core.refresh(state, T0, channel(kept, manifest(2, 2, 2, null))).state;
        assertEquals("unchanged pins role: R carries on", 1, same.revoked().size());
        byte[] changed = envelope(PayloadKind.ROOT, rootPayload(S, 2, 2, CAP, new int[] {1}, new int[] {3}), 1);
        RefreshedState rootOnly = core.refresh(state, T0, channel(changed, null));
        assertEquals("the root alone does not restart R", 1, rootOnly.state.revoked().size());
        RefreshedState recovered = core.refresh(rootOnly.state, T0, channel(null, manifest(2, 2, 3, null)));
        assertEquals(RefreshedState.Outcome.UPDATED, recovered.outcome);
        assertFalse(recovered.state.revoked().contains(Fixtures.pin(7)));
    }
}
