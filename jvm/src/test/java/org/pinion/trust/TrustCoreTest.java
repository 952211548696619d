// Trust-core scenarios mirroring Tests/PinionClientTests/TrustCoreTests.swift, on envelopes made by the pinion CLI.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.Fixtures.at;
import static org.pinion.trust.Fixtures.bytes;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.Test;

public class TrustCoreTest {
    static final Timestamp T0 = at("2026-06-02T12:00:00Z");

    static RefreshedState refresh(TrustCore core, TrustedState state, Timestamp t0, Fixtures.Channel channel) {
        return core.refresh(state, t0, channel);
    }

    static TrustedState accepted(TrustCore core, String manifest, Timestamp t0) throws Exception {
        RefreshedState result = refresh(core, core.initialState(List.of()), t0, new Fixtures.Channel().serveManifest(manifest));
        assertEquals(result.events.toString(), RefreshedState.Outcome.UPDATED, result.outcome);
        return result.state;
    }

    static ClientException refused(TrustCore core, TrustedState state, String manifest, Timestamp t0) {
        RefreshedState result = refresh(core, state, t0, new Fixtures.Channel().serveManifest(manifest));
        assertEquals(RefreshedState.Outcome.REJECTED, result.outcome);
        assertFalse("a refusal must not change the state", result.stateChanged);
        return result.error;
    }

    static TrustException.Kind trustKind(ClientException error) {
        assertEquals(error.getMessage(), ClientException.Kind.TRUST, error.kind());
        return error.trust().kind();
    }

    @Test
    public void acceptsFirstManifestAndSetsFloorAndLastKnownTime() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        assertEquals(new ManifestOrder(1, 1), state.floor());
        assertEquals(T0, state.lastKnownTime());
        assertTrue(state.manifestValid);
        assertEquals(List.of("api.example.com", "example.net"), state.persisted().manifestDomainNames);
        assertEquals("\"etag-manifest-1.json\"", state.persisted().manifestETag);
        assertNotNull(state.persisted().floorPayloadSha256);
    }

    @Test
    public void refusesSignatureByUnknownKeyAndByTheRootRole() throws Exception {
        TrustCore core = Fixtures.core();
        assertEquals(TrustException.Kind.THRESHOLD_NOT_MET, trustKind(refused(core, core.initialState(List.of()), "manifest-1-unknown-key.json", T0)));
        assertEquals(TrustException.Kind.THRESHOLD_NOT_MET, trustKind(refused(core, core.initialState(List.of()), "manifest-1-root-key.json", T0)));
    }

    @Test
    public void refusesDamagedEnvelopes() throws Exception {
        TrustCore core = Fixtures.core();
        byte[] good = bytes("manifest-1.json");
        String text = new String(good, StandardCharsets.UTF_8);
        int payloadAt = text.indexOf("\"payload\": \"") + 20;
        byte[] flipped = good.clone();
        flipped[payloadAt] = (byte) (flipped[payloadAt] == 'A' ? 'B' : 'A');
        byte[] truncated = java.util.Arrays.copyOf(good, good.length / 2);
        byte[] duplicated = text.replaceFirst("\"payloadType\"", "\"payloadType\": \"x\", \"payloadType\"").getBytes(StandardCharsets.UTF_8);
        for (byte[] bad : List.of(flipped, truncated, duplicated)) {
            Fixtures.Channel channel = new Fixtures.Channel();
            channel.manifest = Fetch.found(bad);
            RefreshedState result = core.refresh(core.initialState(List.of()), T0, channel);
            assertEquals(RefreshedState.Outcome.REJECTED, result.outcome);
            assertFalse(result.stateChanged);
        }
    }

    @Test
    public void refusesRootEnvelopeAsManifest() throws Exception {
        TrustCore core = Fixtures.core();
        assertEquals(TrustException.Kind.WRONG_PAYLOAD_KIND, trustKind(refused(core, core.initialState(List.of()), "root-1.json", T0)));
    }

    @Test
    public void refusesManifestForAnotherScopeAndOverTheLifetimeCap() throws Exception {
        TrustCore core = Fixtures.core();
        assertEquals(TrustException.Kind.SCOPE_MISMATCH, trustKind(refused(core, core.initialState(List.of()), "manifest-1-other-scope.json", T0)));
        assertEquals(TrustException.Kind.LIFETIME_EXCEEDS_CAP, trustKind(refused(core, core.initialState(List.of()), "manifest-1-over-cap.json", T0)));
    }

    @Test
    public void refusesRollbackBelowFloor() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-2-revokes-pin2.json", T0);
        ClientException error = refused(core, state, "manifest-1.json", T0);
        assertEquals(ClientException.Kind.ROLLBACK, error.kind());
    }

    @Test
    public void refusesEquivocationAndReportsIt() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-2-revokes-pin2.json", T0);
        RefreshedState result = core.refresh(state, T0, new Fixtures.Channel().serveManifest("manifest-2-equivocation.json"));
        assertEquals(ClientException.Kind.EQUIVOCATION, result.error.kind());
        assertTrue(result.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.EQUIVOCATION));
        assertFalse(result.stateChanged);
    }

    @Test
    public void equivocationIsDetectedFromTheRecordedHashWhenTheEnvelopeIsGone() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState stored = accepted(core, "manifest-2-revokes-pin2.json", T0).persisted();
        stored.manifest = null;
        TrustedState restored = core.restore(stored).state;
        assertEquals(ClientException.Kind.EQUIVOCATION, refused(core, restored, "manifest-2-equivocation.json", T0).kind());
        RefreshedState same = core.refresh(restored, T0, new Fixtures.Channel().serveManifest("manifest-2-revokes-pin2.json"));
        assertEquals(RefreshedState.Outcome.UPDATED, same.outcome);
        assertNotNull(same.state.persisted().manifest);
    }

    @Test
    public void samePayloadWithExtraCoSignatureIsAQuietNoOp() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        RefreshedState result = core.refresh(state, T0, new Fixtures.Channel().serveManifest("manifest-1-extra-cosignature.json"));
        assertEquals(RefreshedState.Outcome.UNCHANGED, result.outcome);
        assertEquals(new ManifestOrder(1, 1), result.state.floor());
    }

    @Test
    public void refusesExpiredManifestAndExpiryExactlyNow() throws Exception {
        TrustCore core = Fixtures.core();
        assertEquals(TrustException.Kind.MANIFEST_EXPIRED,
                trustKind(refused(core, core.initialState(List.of()), "manifest-1-expires-june-2.json", at("2026-06-02T00:00:00Z"))));
        accepted(core, "manifest-1-expires-june-2.json", at("2026-06-01T23:59:59Z"));
    }

    @Test
    public void theAcceptedManifestOfferedAgainAfterExpiryIsRefused() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        assertEquals(TrustException.Kind.MANIFEST_EXPIRED, trustKind(refused(core, state, "manifest-1.json", at("2026-07-01T00:00:00Z"))));
        RefreshedState notModified = core.refresh(state, at("2026-07-02T00:00:00Z"), new Fixtures.Channel());
        assertEquals(RefreshedState.Outcome.UNCHANGED, notModified.outcome);
        assertTrue(notModified.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.MANIFEST_NOT_CURRENT));
    }

    @Test
    public void clockSteppedBackUsesLastKnownTime() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1-expires-june-2.json", at("2026-06-01T23:00:00Z"));
        RefreshedState later = core.refresh(state, at("2026-06-03T00:00:00Z"), new Fixtures.Channel());
        // The wall clock now says May: lastKnownTime (June 3) is used, so the June 2 manifest is expired.
        RefreshedState back = core.refresh(later.state, at("2026-05-01T00:00:00Z"), new Fixtures.Channel().serveManifest("manifest-1-expires-june-2.json"));
        assertTrue(back.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.CLOCK_STEPPED_BACK));
        assertEquals(ClientException.Kind.TRUST, back.error.kind());
        assertEquals(TrustException.Kind.MANIFEST_EXPIRED, back.error.trust().kind());
        assertEquals(at("2026-06-03T00:00:00Z"), back.state.lastKnownTime());
    }

    @Test
    public void farFutureIssuedAtIsReportedAndDoesNotMoveLastKnownTime() throws Exception {
        TrustCore core = Fixtures.core();
        RefreshedState result = core.refresh(core.initialState(List.of()), T0, new Fixtures.Channel().serveManifest("manifest-1-future-dated.json"));
        assertEquals(RefreshedState.Outcome.UPDATED, result.outcome);
        assertTrue(result.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.FUTURE_DATED));
        assertEquals(T0, result.state.lastKnownTime());
    }

    @Test
    public void manifestFetchFailuresKeepState() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        Fixtures.Channel channel = new Fixtures.Channel();
        channel.manifest = Fetch.failed("HTTP 503");
        RefreshedState result = core.refresh(state, T0.plus(60), channel);
        assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, result.outcome);
        assertFalse(result.stateChanged);
        channel.manifest = Fetch.notFound();
        assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, core.refresh(state, T0.plus(60), channel).outcome);
    }

    @Test
    public void conditionalGetSendsStoredETag() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        Fixtures.Channel channel = new Fixtures.Channel();
        core.refresh(state, T0, channel);
        assertTrue(channel.requests.contains("manifest.json If-None-Match: \"etag-manifest-1.json\""));
    }

    @Test
    public void revokedPinsAccumulateAcrossVersions() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-2-revokes-pin2.json", T0);
        RefreshedState three = core.refresh(state, T0, new Fixtures.Channel().serveManifest("manifest-3-revokes-pin4.json"));
        assertEquals(RefreshedState.Outcome.UPDATED, three.outcome);
        assertEquals(java.util.Set.of(Fixtures.pin(1), Fixtures.pin(3)), three.state.revoked());
    }

    @Test
    public void refusesRotationSignedOnlyByOldOrOnlyByNewKeys() throws Exception {
        TrustCore core = Fixtures.core();
        for (String root : List.of("root-2-old-signer-only.json", "root-2-new-signer-only.json")) {
            RefreshedState result = core.refresh(core.initialState(List.of()), T0, new Fixtures.Channel().serveRoot(2, root));
            assertEquals(root, RefreshedState.Outcome.REJECTED, result.outcome);
            assertEquals(TrustException.Kind.THRESHOLD_NOT_MET, result.error.trust().kind());
            assertEquals(1, result.state.chain.newest().version());
        }
    }

    @Test
    public void refusesRotationSkippingAVersionAndAnotherScope() throws Exception {
        TrustCore core = Fixtures.core();
        RefreshedState skip = core.refresh(core.initialState(List.of()), T0, new Fixtures.Channel().serveRoot(2, "root-3-after-new-keys.json"));
        assertEquals(RefreshedState.Outcome.REJECTED, skip.outcome);
        RefreshedState self = core.refresh(core.initialState(List.of()), T0, new Fixtures.Channel().serveRoot(2, "root-1.json"));
        assertEquals(TrustException.Kind.ROOT_NOT_NEXT, self.error.trust().kind());
    }

    @Test
    public void serverErrorForANewRootFailsAndKeepsTheVerifiedPrefix() throws Exception {
        TrustCore core = Fixtures.core();
        Fixtures.Channel channel = new Fixtures.Channel().serveRoot(2, "root-2-new-keys.json").serveManifest("manifest-1.json");
        channel.roots.put(3L, Fetch.failed("HTTP 500"));
        RefreshedState result = core.refresh(core.initialState(List.of()), T0, channel);
        assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, result.outcome);
        assertEquals(2, result.state.chain.newest().version());
        assertEquals(1, result.state.persisted().acceptedRoots.size());
        assertTrue(result.stateChanged);
    }

    @Test
    public void rotationKeepingThePinsKeyWithoutPinsRoleSinceCutsOffOlderManifests() throws Exception {
        // root-2-same-pins has no pinsRoleSince (the Swift CLI does not write it yet): it is 2, so the
        // rootVersion 1 manifest no longer verifies under the newest root (DESIGN.md §4-5).
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-1.json", T0);
        RefreshedState result = core.refresh(state, T0, new Fixtures.Channel().serveRoot(2, "root-2-same-pins.json"));
        assertEquals(RefreshedState.Outcome.UNCHANGED, result.outcome);
        assertFalse(result.state.manifestValid);
        assertTrue(result.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.MANIFEST_NOT_CURRENT));
        assertEquals(TrustException.Kind.ROOT_VERSION_MISMATCH,
                trustKind(refused(Fixtures.core(), result.state, "manifest-1.json", T0)));
    }

    @Test
    public void stolenPinsKeyRecoveryByRootRotation() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState state = accepted(core, "manifest-3-revokes-pin4.json", T0);
        assertFalse(state.revoked().isEmpty());
        // The new root alone keeps R; the manifest signed by the new pins role restarts it.
        RefreshedState rootOnly = core.refresh(state, T0, new Fixtures.Channel().serveRoot(2, "root-2-new-keys.json"));
        assertEquals(state.revoked(), rootOnly.state.revoked());
        RefreshedState recovered = core.refresh(rootOnly.state, T0, new Fixtures.Channel().serveManifest("manifest-4-root-2-new-pins-key.json"));
        assertEquals(RefreshedState.Outcome.UPDATED, recovered.outcome);
        // R restarted: it is now exactly what the recovery manifest revokes (carried forward by its signers).
        assertEquals(new java.util.HashSet<>(recovered.state.manifest.revokedPins), recovered.state.revoked());
        assertEquals(TrustException.Kind.THRESHOLD_NOT_MET,
                trustKind(refused(core, rootOnly.state, "manifest-4-root-2-signed-by-old-pins-key.json", T0)));
    }

    @Test
    public void expiredNewestRootAcceptsNoManifest() throws Exception {
        TrustCore core = Fixtures.core("root-1-expires-june.json");
        assertEquals(TrustException.Kind.ROOT_EXPIRED,
                trustKind(refused(core, core.initialState(List.of()), "manifest-1.json", at("2026-06-15T00:00:00Z"))));
    }

    @Test
    public void restoreReverifiesStoredState() throws Exception {
        TrustCore core = Fixtures.core();
        RefreshedState result = core.refresh(core.initialState(List.of()), T0,
                new Fixtures.Channel().serveRoot(2, "root-2-new-keys.json").serveManifest("manifest-4-root-2-new-pins-key.json"));
        TrustCore.Restored restored = core.restore(result.state.persisted());
        assertTrue(restored.events.isEmpty());
        assertEquals(2, restored.state.chain.newest().version());
        assertTrue(restored.state.manifestValid);
        assertEquals(new ManifestOrder(2, 4), restored.state.floor());
    }

    @Test
    public void foreignScopeIsDroppedButItsDomainsStayEnforced() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState foreign = accepted(core, "manifest-1.json", T0).persisted();
        foreign.scope = "org.other.app";
        TrustCore.Restored restored = core.restore(foreign);
        assertEquals(ClientEvent.Kind.STORE_DROPPED, restored.events.get(0).kind);
        assertNull(restored.state.manifest);
        assertEquals(List.of("api.example.com", "example.net"), restored.state.forcedDomains);
    }

    @Test
    public void tamperedStoredManifestIsDroppedAndItsDomainsForced() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState stored = accepted(core, "manifest-1.json", T0).persisted();
        stored.manifest = bytes("manifest-1-unknown-key.json");
        TrustCore.Restored restored = core.restore(stored);
        assertNull(restored.state.manifest);
        assertEquals(List.of("api.example.com", "example.net"), restored.state.forcedDomains);
        assertEquals(new ManifestOrder(1, 1), restored.state.floor());
    }

    @Test
    public void expiredStoredManifestIsKeptAndANewerEmbeddedRootMakesItNonCurrent() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState stored = accepted(core, "manifest-1.json", T0).persisted();
        TrustCore.Restored same = core.restore(stored);
        assertTrue(same.state.manifestValid);
        TrustCore newer = Fixtures.core("root-2-new-keys.json");
        TrustCore.Restored restored = newer.restore(stored);
        assertNotNull(restored.state.manifest);
        assertFalse(restored.state.manifestValid);
        assertEquals(new ManifestOrder(1, 1), restored.state.floor());
    }

    @Test
    public void aStoredRootForkingTheEmbeddedChainDropsTheFloor() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState stored = core.refresh(core.initialState(List.of()), T0,
                new Fixtures.Channel().serveRoot(2, "root-2-same-pins.json")).state.persisted();
        stored.floor = new ManifestOrder(2, 9000);
        TrustCore.Restored restored = Fixtures.core("root-2-new-keys.json").restore(stored);
        assertTrue(restored.events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.STORE_DROPPED));
        assertNull(restored.state.floor());
    }

    @Test
    public void embeddedRootOfAnotherScopeOrUnsignedIsAnAppBuildError() {
        try {
            new TrustCore(Fixtures.SCOPE, bytes("root-1-other-scope.json"), Fixtures.CRYPTO, Limits.STANDARD);
            fail("accepted a root of another scope");
        } catch (ClientException e) {
            assertEquals(ClientException.Kind.INVALID_EMBEDDED_ROOT, e.kind());
        }
        try {
            new TrustCore(Fixtures.SCOPE, bytes("manifest-1.json"), Fixtures.CRYPTO, Limits.STANDARD);
            fail("accepted a manifest as root");
        } catch (ClientException e) {
            assertEquals(ClientException.Kind.INVALID_EMBEDDED_ROOT, e.kind());
        }
    }

    @Test
    public void overLongWalkStopsAt256Rotations() throws Exception {
        // 300 rotations signed in the test (the CLI would take minutes to make them).
        SignedChain chain = SignedChain.create(300);
        TrustCore chained = new TrustCore(SignedChain.SCOPE, chain.root(1), Fixtures.CRYPTO, Limits.STANDARD);
        Fetch.Source source = new Fetch.Source() {
            @Override
            public Fetch root(long version) { return version <= 300 ? Fetch.found(chain.root(version)) : Fetch.notFound(); }

            @Override
            public Fetch manifest(String etag) { return Fetch.notModified(); }
        };
        RefreshedState first = chained.refresh(chained.initialState(List.of()), T0, source);
        assertEquals(ClientException.Kind.TOO_MANY_ROTATIONS, first.error.kind());
        assertEquals(257, first.state.chain.newest().version());
        RefreshedState second = chained.refresh(first.state, T0, source);
        assertEquals(RefreshedState.Outcome.UNCHANGED, second.outcome);
        assertEquals(300, second.state.chain.newest().version());
    }
}
