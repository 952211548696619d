// The client's pure trust decisions (DESIGN.md §4-§6): state + fetched bytes + explicit time -> new state.
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.pinion.trust.log.Equivocation;
import org.pinion.trust.log.LogException;
import org.pinion.trust.log.LogFreshness;
import org.pinion.trust.log.LogPolicy;
import org.pinion.trust.log.LogVerification;
import org.pinion.trust.log.StoredCheckpoint;

/**
 * The trust rules of the client for one scope and embedded root. No I/O and no clock: callers pass
 * bytes and the start time, so tests and conformance runners drive it directly.
 */
public final class TrustCore {
    /** Seconds the wall clock may lag lastKnownTime before it is reported. */
    public static final long CLOCK_STEP_TOLERANCE = 300;
    /** Seconds issuedAt may lead the start time before it is reported. */
    public static final long FUTURE_DATED_TOLERANCE = 86_400;

    /** The app's scope. */
    public final String scope;
    private final CryptoProvider crypto;
    private final Limits limits;
    private final RootChain anchor;

    /**
     * @param scope the app's scope; the embedded root must name it
     * @param embeddedRoot exact envelope bytes of the root compiled into the app
     * @param crypto strict Ed25519 and SHA-256
     * @param limits document limits
     * @throws ClientException INVALID_EMBEDDED_ROOT when it does not verify or names another scope
     */
    public TrustCore(String scope, byte[] embeddedRoot, CryptoProvider crypto, Limits limits) throws ClientException {
        try {
            anchor = RootChain.anchor(embeddedRoot, crypto, limits);
        } catch (TrustException e) {
            throw ClientException.invalidEmbeddedRoot(e.getMessage());
        }
        if (!anchor.newest().payload.scope.equals(scope)) {
            throw ClientException.invalidEmbeddedRoot("its scope is " + anchor.newest().payload.scope + ", the app's is " + scope);
        }
        this.scope = scope;
        this.crypto = crypto;
        this.limits = limits;
    }

    /** @return the embedded root's chain */
    public RootChain anchor() { return anchor; }

    /**
     * @param forcedDomains names of a lost manifest (enforced with no pins)
     * @return the state of a first run: the embedded root, no manifest, no floor
     */
    public TrustedState initialState(List<String> forcedDomains) {
        ClientState persisted = new ClientState(scope);
        persisted.revokedSince = anchor.newest().payload.pinsRoleSince;
        persisted.manifestDomainNames = new ArrayList<>(forcedDomains);
        return new TrustedState(persisted, anchor, null, false, forcedDomains);
    }

    // ---- Start-up ----

    /** The result of {@link #restore}: the state and the events found. */
    public static final class Restored {
        /** The trusted state. */
        public final TrustedState state;
        /** What was found (dropped roots, a non-current manifest...). */
        public final List<ClientEvent> events;

        Restored(TrustedState state, List<ClientEvent> events) {
            this.state = state;
            this.events = events;
        }
    }

    /**
     * Re-checks a stored state from the embedded root (DESIGN.md §6 start-up): stored roots newer than
     * the embedded one are re-verified in order (one that fails ends the chain; a stored root that
     * differs from a trusted one of the same version is a fork and drops the floor it set); the stored
     * manifest is re-verified under the NEWEST root of the chain. One that does not verify there but
     * did verify under the root it names, or that names a root older than the embedded one, is kept as
     * the non-current M (it only takes trust away); one that verifies under nothing is dropped and its
     * domains stay enforced with no pins.
     *
     * @param stored the loaded state
     * @return the trusted state and events
     */
    public Restored restore(ClientState stored) {
        List<ClientEvent> events = new ArrayList<>();
        if (!stored.scope.equals(scope)) {
            events.add(ClientEvent.storeDropped("the stored state belongs to scope " + stored.scope));
            return new Restored(initialState(stored.manifestDomainNames), events);
        }
        RootChain chain = anchor;
        List<byte[]> kept = new ArrayList<>();
        boolean diverged = false;
        for (byte[] bytes : stored.acceptedRoots) {
            long version;
            try {
                version = RootChain.peekVersion(bytes, limits);
            } catch (FormatException e) {
                events.add(ClientEvent.storeDropped("a stored root is unreadable; the chain ends at " + chain.newest().version()));
                diverged = true;
                break;
            }
            if (version <= chain.newest().version()) {
                VerifiedRoot trusted = chain.root(version);
                if (trusted != null && !Arrays.equals(payloadHash(bytes), trusted.payloadSha256())) {
                    events.add(ClientEvent.storeDropped("stored root " + version + " differs from the trusted root "
                            + version + " (a fork of the root chain)"));
                    diverged = true;
                }
                continue;
            }
            try {
                chain = chain.append(bytes, crypto, limits);
                kept.add(bytes);
            } catch (TrustException e) {
                events.add(ClientEvent.storeDropped("stored root " + version + " no longer verifies: " + e.getMessage()));
                diverged = true;
                break;
            }
        }
        ClientState persisted = stored.copy();
        persisted.acceptedRoots = kept;
        if (diverged && persisted.floor != null && persisted.floor.rootVersion >= chain.roots().get(0).version()) {
            events.add(ClientEvent.storeDropped("the rollback floor " + persisted.floor + " came from roots this build does not trust"));
            persisted.floor = null;
            persisted.floorPayloadSha256 = null;
        }
        if (persisted.revokedSince == 0) persisted.revokedSince = chain.newest().payload.pinsRoleSince;
        if (persisted.logCheckpoint != null) {
            LogPolicy log = chain.newest().payload.log;
            try {
                if (log == null) throw new LogException(LogException.Reason.WRONG_ORIGIN, "the newest root has no log");
                StoredCheckpoint.restore(persisted.logCheckpoint, persisted.logQuorumTime, log, crypto);
            } catch (LogException e) {
                if (log != null) events.add(ClientEvent.storeDropped("the stored log checkpoint: " + e.getMessage()));
                persisted.logCheckpoint = null;
                persisted.logQuorumTime = 0;
            }
        }
        if (stored.manifest == null) {
            return new Restored(new TrustedState(persisted, chain, null, false, stored.manifestDomainNames), events);
        }
        ManifestPayload payload = null;
        boolean valid = false;
        String reason;
        try {
            payload = ManifestVerifier.verify(stored.manifest, chain.newest(), crypto, limits).payload;
            valid = true;
            reason = null;
        } catch (TrustException e) {
            reason = e.getMessage();
            payload = verifiesUnderOwnRoot(stored.manifest, chain);
        }
        if (payload == null) {
            persisted.manifest = null;
            persisted.manifestETag = null;
            events.add(ClientEvent.storeDropped("the stored manifest no longer verifies: " + reason));
            return new Restored(new TrustedState(persisted, chain, null, false, stored.manifestDomainNames), events);
        }
        if (!valid) {
            events.add(ClientEvent.manifestNotCurrent("it does not verify under the newest root " + chain.newest().version()
                    + ": " + reason));
        }
        ManifestOrder order = payload.order();
        if (persisted.floor == null || persisted.floor.compareTo(order) < 0) {
            persisted.floor = order;
            persisted.floorPayloadSha256 = payloadHash(stored.manifest);
        }
        return new Restored(new TrustedState(persisted, chain, payload, valid, Collections.emptyList()), events);
    }

    /** The payload of a stored manifest that verifies under the root it names, or names one older than the chain. */
    private ManifestPayload verifiesUnderOwnRoot(byte[] bytes, RootChain chain) {
        ManifestPayload payload;
        try {
            payload = ManifestPayload.parse(Envelope.parse(bytes, limits).payloadBytes(), limits);
        } catch (FormatException e) {
            return null;
        }
        if (payload.rootVersion < chain.roots().get(0).version()) return payload;
        VerifiedRoot own = chain.root(payload.rootVersion);
        if (own == null) return null;
        try {
            Envelope envelope = Envelope.parse(bytes, limits);
            Signatures.Report report = Signatures.check(envelope, own.payload.pinsRole, own.payload, crypto);
            if (report.meets(own.payload.pinsRole.threshold) && payload.scope.equals(scope)) return payload;
        } catch (FormatException e) {
            return null;
        }
        return null;
    }

    private byte[] payloadHash(byte[] envelopeBytes) {
        try {
            return crypto.sha256(Envelope.parse(envelopeBytes, limits).payloadBytes());
        } catch (FormatException e) {
            return new byte[0];
        }
    }

    // ---- Refresh steps ----

    /**
     * Accepts the next root (DESIGN.md §4) and re-verifies the stored manifest under it: it stays
     * valid when it meets the new root's pins rule and cap.
     *
     * @param bytes the fetched root envelope
     * @param state the current state (unchanged)
     * @return the new state
     * @throws ClientException TRUST naming the rule
     */
    public TrustedState acceptRoot(byte[] bytes, TrustedState state) throws ClientException {
        RootChain chain;
        try {
            chain = state.chain.append(bytes, crypto, limits);
        } catch (TrustException e) {
            throw ClientException.trust(e);
        }
        ClientState persisted = state.persisted();
        persisted.acceptedRoots.add(bytes.clone());
        LogPolicy log = chain.newest().payload.log;
        if (log == null || !log.sameLog(state.chain.newest().payload.log)) {
            // A new log origin or key (docs/DESIGN.md §12): the old log's checkpoint says nothing about the new one.
            persisted.logCheckpoint = null;
            persisted.logQuorumTime = 0;
        }
        boolean valid = false;
        if (persisted.manifest != null && state.manifest != null) {
            try {
                ManifestVerifier.verify(persisted.manifest, chain.newest(), crypto, limits);
                valid = true;
            } catch (TrustException e) {
                valid = false;
            }
        }
        return new TrustedState(persisted, chain, state.manifest, valid, state.forcedDomains);
    }

    /** What {@link #acceptManifest} decided: a new state, or unchanged (the same payload again). */
    public static final class ManifestStep {
        /** The new state, or null when unchanged. */
        public final TrustedState state;
        /** Events (a future-dated issuedAt, the update). */
        public final List<ClientEvent> events;

        ManifestStep(TrustedState state, List<ClientEvent> events) {
            this.state = state;
            this.events = events;
        }
    }

    /**
     * Checks a fetched manifest in the order of DESIGN.md §6 steps 3-5 against one start time:
     * verification under the newest root, order against the floor (rollback, equivocation, no-op;
     * at the floor with no stored envelope the recorded payload hash decides), then the newest root's
     * and the manifest's expiry at {@code max(t0, lastKnownTime)}.
     *
     * @param bytes the fetched envelope
     * @param etag the response's ETag
     * @param state the current state (unchanged)
     * @param t0 the refresh start time
     * @return the step
     * @throws ClientException TRUST, ROLLBACK or EQUIVOCATION
     */
    public ManifestStep acceptManifest(byte[] bytes, String etag, TrustedState state, Timestamp t0) throws ClientException {
        return acceptOwnedManifest(bytes.clone(), etag, state, t0);
    }

    /**
     * {@link #acceptManifest} over an array the new state may keep as it is: the refresh passes
     * {@link Fetch#body()}, already a fresh copy, so the megabyte envelope is not copied again.
     */
    private ManifestStep acceptOwnedManifest(byte[] bytes, String etag, TrustedState state, Timestamp t0)
            throws ClientException {
        ClientState old = state.persisted();
        Timestamp now = old.lastKnownTime == null ? t0 : Timestamp.max(t0, old.lastKnownTime);
        ManifestVerifier.Verified verified;
        try {
            verified = ManifestVerifier.verify(bytes, state.chain.newest(), crypto, limits);
        } catch (TrustException e) {
            throw ClientException.trust(e);
        }
        ManifestPayload payload = verified.payload;
        ManifestOrder order = payload.order();
        if (old.floor != null) {
            int c = order.compareTo(old.floor);
            if (c < 0) throw ClientException.rollback(order, old.floor);
            if (c == 0) {
                if (old.manifest != null) {
                    if (Arrays.equals(payloadHash(old.manifest), verified.payloadSha256())) {
                        try {
                            verified.checkCurrent(now);
                        } catch (TrustException e) {
                            throw ClientException.trust(e);
                        }
                        return new ManifestStep(null, Collections.emptyList());
                    }
                    throw ClientException.equivocation(order);
                }
                if (old.floorPayloadSha256 != null && !Arrays.equals(old.floorPayloadSha256, verified.payloadSha256())) {
                    throw ClientException.equivocation(order);
                }
            }
        }
        try {
            state.chain.checkNewestCurrent(now);
            verified.checkCurrent(now);
        } catch (TrustException e) {
            throw ClientException.trust(e);
        }
        List<ClientEvent> events = new ArrayList<>();
        if (payload.issuedAt.after(t0.plus(FUTURE_DATED_TOLERANCE))) events.add(ClientEvent.futureDated(payload.issuedAt, t0));
        ClientState next = old.copy();
        next.manifest = bytes;
        next.manifestETag = storableETag(etag);
        next.floor = order;
        next.floorPayloadSha256 = verified.payloadSha256();
        next.lastKnownTime = old.lastKnownTime == null ? t0 : Timestamp.max(old.lastKnownTime, t0);
        long since = state.chain.newest().payload.pinsRoleSince;
        List<Pin> revoked = since > next.revokedSince ? new ArrayList<>() : new ArrayList<>(next.revokedPins);
        for (Pin pin : payload.revokedPins) {
            if (!revoked.contains(pin)) revoked.add(pin);
        }
        next.revokedPins = revoked;
        next.revokedSince = Math.max(since, next.revokedSince);
        List<String> names = new ArrayList<>();
        for (PinnedDomain domain : payload.domains) names.add(domain.name);
        next.manifestDomainNames = names;
        events.add(ClientEvent.updated(order));
        return new ManifestStep(new TrustedState(next, state.chain, payload, true, Collections.emptyList()), events);
    }

    /**
     * @param etag a response ETag
     * @return it when at most 1,024 printable ASCII bytes, else null (the next fetch is unconditional)
     */
    static String storableETag(String etag) {
        if (etag == null || etag.isEmpty() || etag.length() > 1024) return null;
        for (int i = 0; i < etag.length(); i++) {
            char c = etag.charAt(i);
            if (c < 0x20 || c >= 0x7f) return null;
        }
        return etag;
    }

    // ---- Whole refresh ----

    /**
     * One refresh (DESIGN.md §6): the root walk ({@code root/{n+1}.json} until a 404, at most 256
     * rotations; any other answer fails the refresh keeping the verified prefix), then the conditional
     * manifest fetch and its checks. Any failure keeps the previous state of that step.
     *
     * @param state the current state
     * @param t0 the start time (wall clock), read once by the caller
     * @param source the update channel
     * @return the result
     */
    public RefreshedState refresh(TrustedState state, Timestamp t0, Fetch.Source source) {
        List<ClientEvent> events = new ArrayList<>();
        Timestamp last = state.lastKnownTime();
        if (last != null && t0.compareTo(last.plus(-CLOCK_STEP_TOLERANCE)) < 0) events.add(ClientEvent.clockSteppedBack(t0, last));
        TrustedState current = state;
        int rotations = 0;
        while (true) {
            long version = current.chain.newest().version() + 1;
            Fetch fetch = source.root(version);
            if (fetch.status == Fetch.Status.NOT_FOUND) break;
            if (fetch.status != Fetch.Status.FOUND) {
                ClientException error = fetchError("root/" + version + ".json", fetch);
                return fetchFailure(state, current, error, events);
            }
            if (rotations >= RootChain.MAX_ROTATIONS_PER_WALK) {
                ClientException error = ClientException.tooManyRotations(RootChain.MAX_ROTATIONS_PER_WALK);
                events.add(ClientEvent.rejected(error));
                return RefreshedState.of(state, current, RefreshedState.Outcome.REJECTED, error, null, events, -1);
            }
            try {
                current = acceptRoot(fetch.body(), current);
                rotations++;
                events.add(ClientEvent.rootAccepted(version));
                if (current.manifest != null && !current.manifestValid) {
                    events.add(ClientEvent.manifestNotCurrent("root " + version + " was accepted; the manifest must be re-signed"));
                }
            } catch (ClientException error) {
                events.add(ClientEvent.rejected(error));
                return RefreshedState.of(state, current, RefreshedState.Outcome.REJECTED, error, null, events, -1);
            }
        }
        Timestamp now = last == null ? t0 : Timestamp.max(t0, last);
        List<ClientEvent> walkEvents = events;
        for (int attempt = 0; ; attempt++) {
            RefreshedState result = manifestStep(state, current, t0, new ArrayList<>(walkEvents), source);
            if (result.error != null || result.state.log() == null) return result;
            // With a log, the refresh stands or falls with manifest.proof (docs/DESIGN.md §12).
            List<ClientEvent> logEvents = new ArrayList<>(result.events);
            try {
                TrustedState logged = checkLog(result.state, now, source, logEvents);
                return RefreshedState.of(state, logged, result.outcome, null, result.updatedTo, logEvents, result.maxAge);
            } catch (ClientException error) {
                // The publisher writes manifest.proof before manifest.json: a refresh between the two writes
                // sees a proof of the next manifest. That mismatch is retried once, then refused.
                boolean mismatch = error.log() != null && error.log().reason() == LogException.Reason.MANIFEST_NOT_LOGGED;
                if (mismatch && attempt == 0) continue;
                return logRefused(state, current, walkEvents, error, result.maxAge);
            }
        }
    }

    /**
     * A refused or unfetchable manifest.proof: the refresh keeps the state after the root walk (the verified
     * roots, as any later failure does) and nothing of the manifest step. A split view's event carries both
     * checkpoint notes; the state itself is unchanged.
     */
    private static RefreshedState logRefused(TrustedState start, TrustedState afterWalk, List<ClientEvent> walkEvents,
            ClientException error, long maxAge) {
        List<ClientEvent> events = new ArrayList<>(walkEvents);
        if (error.kind() != ClientException.Kind.LOG) return fetchFailure(start, afterWalk, error, events);
        Equivocation evidence = error.log().equivocation();
        if (evidence != null) events.add(ClientEvent.logEquivocation(evidence));
        events.add(ClientEvent.rejected(error));
        return RefreshedState.of(start, afterWalk, RefreshedState.Outcome.REJECTED, error, null, events, maxAge);
    }

    /** A fetch that failed (a network failure) or that the update channel refused (rejected, as the Swift SDK does). */
    private static RefreshedState fetchFailure(TrustedState start, TrustedState current, ClientException error, List<ClientEvent> events) {
        if (error.kind() == ClientException.Kind.FETCH_REFUSED) {
            events.add(ClientEvent.rejected(error));
            return RefreshedState.of(start, current, RefreshedState.Outcome.REJECTED, error, null, events, -1);
        }
        events.add(ClientEvent.networkFailure(error.getMessage()));
        return RefreshedState.of(start, current, RefreshedState.Outcome.NETWORK_FAILURE, error, null, events, -1);
    }

    /** @return FETCH_REFUSED for a refused fetch, else FETCH_FAILED with the fetch's reason */
    private static ClientException fetchError(String resource, Fetch fetch) {
        if (fetch.status == Fetch.Status.REFUSED) return ClientException.fetchRefused(resource, fetch.reason);
        return ClientException.fetchFailed(resource, fetch.status == Fetch.Status.NOT_MODIFIED ? "HTTP 304" : fetch.reason);
    }

    /** The conditional manifest fetch and its checks (DESIGN.md §6 steps 3-5), from {@code current} (the walked roots). */
    private RefreshedState manifestStep(TrustedState state, TrustedState current, Timestamp t0, List<ClientEvent> events,
            Fetch.Source source) {
        Fetch fetch = source.manifest(current.persisted().manifestETag);
        switch (fetch.status) {
            case NOT_MODIFIED:
                return unchanged(state, current, t0, null, events, fetch.maxAge);
            case FOUND:
                try {
                    ManifestStep step = acceptOwnedManifest(fetch.body(), fetch.etag, current, t0);
                    if (step.state == null) return unchanged(state, current, t0, fetch.etag, events, fetch.maxAge);
                    events.addAll(step.events);
                    return RefreshedState.of(state, step.state, RefreshedState.Outcome.UPDATED, null, step.state.floor(), events,
                            fetch.maxAge);
                } catch (ClientException error) {
                    if (error.kind() == ClientException.Kind.EQUIVOCATION) events.add(ClientEvent.equivocation(error.order()));
                    events.add(ClientEvent.rejected(error));
                    return RefreshedState.of(state, current, RefreshedState.Outcome.REJECTED, error, null, events, fetch.maxAge);
                }
            default: {
                ClientException error = fetchError("manifest.json", fetch);
                return fetchFailure(state, current, error, events);
            }
        }
    }

    /**
     * The log step of a refresh (docs/DESIGN.md §12): when the newest root has a {@code log}, fetches
     * manifest.proof (every refresh, also after a 304) and verifies it against the manifest that
     * {@code candidate} holds, the newest root and the stored checkpoint, at {@code now}.
     *
     * @param candidate the state the refresh would end in (unchanged on failure)
     * @param now the effective time, max(t0, lastKnownTime)
     * @param source the update channel
     * @param events receives staleCheckpoint and futureCosignature
     * @return candidate with the verified checkpoint stored, or candidate itself when no log applies
     * @throws ClientException LOG naming the reason code, or FETCH_FAILED when the proof could not be fetched
     */
    private TrustedState checkLog(TrustedState candidate, Timestamp now, Fetch.Source source, List<ClientEvent> events)
            throws ClientException {
        LogPolicy log = candidate.log();
        ClientState persisted = candidate.persisted();
        if (log == null) return candidate;
        Fetch fetch = source.proof();
        if (fetch.status == Fetch.Status.NOT_FOUND) {
            throw ClientException.log(new LogException(LogException.Reason.PROOF_MISSING, "the publisher serves no manifest.proof (404)"));
        }
        if (fetch.status != Fetch.Status.FOUND) {
            throw fetchError("manifest.proof", fetch);
        }
        StoredCheckpoint stored = null;
        if (persisted.logCheckpoint != null) {
            try {
                stored = StoredCheckpoint.restore(persisted.logCheckpoint, persisted.logQuorumTime, log, crypto);
            } catch (LogException e) {
                stored = null; // of another log: restore() and acceptRoot() drop those; never compared
            }
        }
        VerifiedRoot root = candidate.chain.newest();
        ManifestPayload manifest = candidate.manifest;
        boolean held = manifest != null && persisted.manifest != null;
        LogVerification.Verified verified;
        try {
            // No manifest to match (a 304 to a client that holds none): no head names it, refused at step 4.
            verified = LogVerification.verify(fetch.body(), log, held ? manifest.scope : scope, held ? manifest.rootVersion : 0,
                    held ? manifest.version : 0, held ? payloadHash(persisted.manifest) : new byte[0], root.version(),
                    root.payloadSha256(), stored, now.seconds, crypto);
        } catch (LogException e) {
            throw ClientException.log(e);
        }
        if (!verified.futureCosignatures.isEmpty() || verified.quorumTimeInFuture) {
            events.add(ClientEvent.futureCosignatures(verified.futureCosignatures, verified.quorumTimeInFuture));
        }
        LogFreshness freshness = verified.freshness;
        if (freshness.state == LogFreshness.State.STALE || freshness.state == LogFreshness.State.EXPIRED) {
            events.add(ClientEvent.staleCheckpoint(freshness.age, log.maxCheckpointAge));
        }
        persisted.logCheckpoint = verified.stored.note();
        persisted.logQuorumTime = verified.stored.quorumTime;
        return new TrustedState(persisted, candidate.chain, candidate.manifest, candidate.manifestValid, candidate.forcedDomains);
    }

    private RefreshedState unchanged(TrustedState start, TrustedState current, Timestamp t0, String etag,
            List<ClientEvent> events, long maxAge) {
        ClientState persisted = current.persisted();
        persisted.lastKnownTime = persisted.lastKnownTime == null ? t0 : Timestamp.max(persisted.lastKnownTime, t0);
        String storable = storableETag(etag);
        if (storable != null) persisted.manifestETag = storable;
        TrustedState next = new TrustedState(persisted, current.chain, current.manifest, current.manifestValid,
                current.forcedDomains);
        events.add(ClientEvent.unchanged());
        Timestamp now = persisted.lastKnownTime;
        if (current.manifest != null && !current.manifest.expiresAt.after(now)) {
            events.add(ClientEvent.manifestNotCurrent("version " + current.manifest.version + " expired at "
                    + current.manifest.expiresAt + " and the publisher offers nothing newer"));
        }
        return RefreshedState.of(start, next, RefreshedState.Outcome.UNCHANGED, null, null, events, maxAge);
    }
}
