// The SDK's entry point: loads and re-verifies state, refreshes over the update channel, serves the effective policy.
package org.pinion.update;

import java.io.IOException;
import java.nio.file.Files;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import javax.net.ssl.X509TrustManager;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import org.pinion.crypto.StrictEd25519;
import org.pinion.storage.AtomicFiles;
import org.pinion.storage.StateStore;
import org.pinion.tls.PinionOkHttp;
import org.pinion.tls.PolicySource;
import org.pinion.tls.TrustManagers;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.ClientException;
import org.pinion.trust.CryptoProvider;
import org.pinion.trust.Codec;
import org.pinion.trust.FormatException;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.JsonWriter;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;
import org.pinion.trust.PolicySnapshot;
import org.pinion.trust.PollToken;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.Timestamp;
import org.pinion.trust.TrustCore;
import org.pinion.trust.StrictJsonParser;
import org.pinion.trust.TrustedState;
import org.pinion.trust.UpdateChannel;
import org.pinion.trust.UpdateFetcher;
import org.pinion.trust.log.LogFreshness;

/**
 * One scope's client (DESIGN.md §6-§8). Readers ({@link #currentPolicy()}, the TLS layer) never block
 * on a refresh: the verified state and its merged policy are swapped together after the new state is
 * persisted. Refreshes run one at a time and reload the stored state first under the directory lock,
 * so two processes sharing a directory build on each other's saves.
 */
public final class PinningClient implements PolicySource {
    /** Receives pin failures (enforced and report-only). */
    public interface PinFailureListener {
        /**
         * @param evaluation the failure
         * @param port the port, or -1
         * @param served the chain the server sent
         * @param verified the chain PKIX built
         */
        void onPinFailure(PinEvaluation evaluation, int port, List<X509Certificate> served, List<X509Certificate> verified);
    }

    /**
     * RFC 7469 §3 effective-expiration-date of the entry whose pins applied: the current
     * manifest's (plus staleGrace) when that entry is the manifest's; null when the baseline's
     * entry applied (its pins do not expire), also under a manifest parent. Null leaves the
     * member out of the report.
     */
    private Timestamp expiration(PinEvaluation evaluation, Timestamp now) {
        View current = view;
        if (evaluation.entry == null || current.state.manifest == null || !current.snapshot.isManifestCurrent(now)) {
            return null;
        }
        for (PinnedDomain domain : current.state.manifest.domains) {
            if (domain.name.equals(evaluation.entry.name)) return current.snapshot.manifestCurrentUntil;
        }
        return null;
    }

    private static final class View {
        final TrustedState state;
        final PolicySnapshot snapshot;
        /** Whether this view's stale log checkpoint was reported at a connection (once per view). */
        final java.util.concurrent.atomic.AtomicBoolean staleReported = new java.util.concurrent.atomic.AtomicBoolean();

        View(TrustedState state, PolicySnapshot snapshot) {
            this.state = state;
            this.snapshot = snapshot;
        }
    }

    private final ClientConfiguration config;
    private final TrustCore core;
    private final CryptoProvider crypto;
    private final UpdateFetcher transport;
    private final StateStore store;
    private final Consumer<ClientEvent> onEvent;
    private final PinFailureListener onPinFailure;
    private final List<Runnable> trustRemovedListeners = new CopyOnWriteArrayList<>();
    private final X509TrustManager platform;
    private volatile View view;
    private OkHttpClient updateClient;
    /** Guards {@link #updateClient} apart from the refresh lock, so a handshake reporting a failure never waits for a refresh. */
    private final Object updateClientLock = new Object();

    /**
     * Loads the stored state and re-verifies it from the embedded root, with this platform's seams:
     * libsodium-equal strict Ed25519 ({@link StrictEd25519}), the OkHttp update channel
     * ({@link OkHttpUpdateFetcher}: X.509 with {@code config.caFile} or the system store, the publisher
     * pins) and the two-copy {@link StateStore} in {@code config.stateDirectory}.
     *
     * @param config the configuration
     * @param onEvent receives every event (may be null)
     * @param onPinFailure receives pin failures (may be null)
     * @throws ClientException INVALID_EMBEDDED_ROOT, or CONFIGURATION when the CA file cannot be read or holds no certificate
     */
    public PinningClient(ClientConfiguration config, Consumer<ClientEvent> onEvent, PinFailureListener onPinFailure) throws ClientException {
        this(config, StrictEd25519.INSTANCE, null, new StateStore(config.stateDirectory, config.scope, config.limits), onEvent, onPinFailure);
    }

    /**
     * Loads the stored state from {@code storage} and re-verifies it from the embedded root, with the
     * given seams (docs/ARCHITECTURE.md "Where a new platform plugs in"), as the Swift
     * {@code PinningClient(configuration:crypto:transport:storage:)} does.
     *
     * @param config the configuration (its CA file still serves {@link #pinnedOkHttp} and the report POST)
     * @param crypto strict Ed25519 and SHA-256
     * @param transport the update channel, or null for the OkHttp one built from {@code config}
     * @param storage the state store
     * @param onEvent receives every event (may be null)
     * @param onPinFailure receives pin failures (may be null)
     * @throws ClientException INVALID_EMBEDDED_ROOT, or CONFIGURATION when the CA file cannot be read or holds no certificate
     */
    public PinningClient(ClientConfiguration config, CryptoProvider crypto, UpdateFetcher transport, StateStore storage,
            Consumer<ClientEvent> onEvent, PinFailureListener onPinFailure) throws ClientException {
        this.config = config;
        this.crypto = crypto;
        this.onEvent = onEvent == null ? e -> { } : onEvent;
        this.onPinFailure = onPinFailure;
        this.core = new TrustCore(config.scope, config.embeddedRoot, crypto, config.limits);
        this.store = storage;
        try {
            this.platform = TrustManagers.platform(config.caFile);
        } catch (IOException | GeneralSecurityException e) {
            throw ClientException.configuration("CA file " + config.caFile + ": " + e.getMessage());
        }
        HttpUrl base = config.baseUrl == null ? null : HttpUrl.parse(config.baseUrl);
        this.transport = transport != null ? transport : base == null ? null : new OkHttpUpdateFetcher(updateClient(), base, config.scope);
        List<ClientEvent> events = new ArrayList<>();
        TrustedState loaded = loadState(events);
        // Unreadable (not lost) state: start from the embedded root; refreshes are skipped until it reads.
        TrustedState state = loaded != null ? loaded : core.initialState(java.util.Collections.<String>emptyList());
        this.view = new View(state, state.snapshot(config.baseline, config.staleGrace));
        for (ClientEvent e : events) this.onEvent.accept(e);
    }

    private TrustedState loadState(List<ClientEvent> events) {
        try (StateStore.Held held = store.lock()) {
            return loadLocked(events);
        } catch (IOException e) {
            events.add(ClientEvent.storageUnavailable(e.getMessage()));
            return null;
        }
    }

    /** Loads and restores the stored state; the caller holds the store's lock. */
    private TrustedState loadLocked(List<ClientEvent> events) {
        StateStore.Load load = store.load();
        switch (load.status) {
            case LOADED: {
                TrustCore.Restored restored = core.restore(load.state);
                events.addAll(restored.events);
                return restored.state;
            }
            case LOST:
                events.add(ClientEvent.storeDropped(String.join("; ", load.notes)));
                return core.initialState(load.domainNames);
            case UNAVAILABLE:
                events.add(ClientEvent.storageUnavailable(String.join("; ", load.notes)));
                return null;
            default:
                return core.initialState(java.util.Collections.<String>emptyList());
        }
    }

    private TrustedState loadOrInitial(List<ClientEvent> events) {
        TrustedState state = loadLocked(events);
        return state != null ? state : view == null ? core.initialState(java.util.Collections.<String>emptyList()) : null;
    }

    /** @return the effective time: {@code max(wall clock, lastKnownTime)} */
    public Timestamp effectiveNow() {
        Timestamp wall = new Timestamp(config.clock.getAsLong());
        Timestamp last = view.state.lastKnownTime();
        return last == null ? wall : Timestamp.max(wall, last);
    }

    /**
     * The policy for a connection now. Log freshness (docs/DESIGN.md §12) is evaluated here too: past
     * maxCheckpointAge + checkpointGrace the snapshot already counts the manifest as expired; past
     * maxCheckpointAge a staleCheckpoint event fires once per verified state.
     */
    @Override
    public MergedPolicy currentPolicy() {
        View current = view;
        Timestamp now = effectiveNow();
        LogFreshness freshness = current.state.logFreshness(now);
        if (freshness != null && (freshness.state == LogFreshness.State.STALE || freshness.state == LogFreshness.State.EXPIRED)
                && current.staleReported.compareAndSet(false, true)) {
            onEvent.accept(ClientEvent.staleCheckpoint(freshness.age, current.state.log().maxCheckpointAge));
        }
        return current.snapshot.policy(now);
    }

    /** @return the log freshness now, or null when the newest root has no log or no checkpoint is stored */
    public LogFreshness logFreshness() { return view.state.logFreshness(effectiveNow()); }

    /** @return whether the accepted manifest counts as current now */
    public boolean isManifestCurrent() { return view.snapshot.isManifestCurrent(effectiveNow()); }

    /** @return the verified state */
    public TrustedState trustedState() { return view.state; }

    private final org.pinion.tls.ReportThrottle throttle = new org.pinion.tls.ReportThrottle(1000);

    @Override
    public void onPinFailure(PinEvaluation evaluation, int port, List<X509Certificate> served, List<X509Certificate> verified) {
        if (onPinFailure != null) onPinFailure.onPinFailure(evaluation, port, served, verified);
        if (config.reportUri == null) return;
        HttpUrl target = HttpUrl.parse(config.reportUri);
        if (target == null || !target.isHttps()) return;
        Timestamp now = effectiveNow();
        org.pinion.tls.PinFailureReport report = new org.pinion.tls.PinFailureReport(evaluation, port, now, served, verified,
                expiration(evaluation, now));
        synchronized (throttle) {
            if (!throttle.shouldSend(report, now)) return;
        }
        okhttp3.RequestBody body = okhttp3.RequestBody.create(okhttp3.MediaType.parse("application/json"), report.jsonBytes());
        updateClient().newCall(new okhttp3.Request.Builder().url(target).post(body).build()).enqueue(new okhttp3.Callback() {
            @Override
            public void onFailure(okhttp3.Call call, IOException e) {
                onEvent.accept(ClientEvent.networkFailure("pin failure report: " + e.getMessage()));
            }

            @Override
            public void onResponse(okhttp3.Call call, okhttp3.Response response) {
                response.close();
            }
        });
    }

    /**
     * Registers a listener run after every refresh that changed the policy (and so may have removed
     * trust): evict connection pools there. The client holds the listener, and whatever it references,
     * until the returned registration is closed; a listener for a client the app discards must be
     * removed, or that client's pool stays reachable for this client's lifetime.
     *
     * @param listener called on the refreshing thread, after the new policy is in place
     * @return the registration; {@link ListenerRegistration#close()} removes exactly this listener
     *     (the same {@code Runnable} registered twice is two registrations)
     * @throws IllegalArgumentException a null listener
     */
    public ListenerRegistration addTrustRemovedListener(Runnable listener) {
        if (listener == null) throw new IllegalArgumentException("listener is null");
        // A holder per registration: removal is by identity, never by Runnable equality.
        Runnable holder = listener::run;
        trustRemovedListeners.add(holder);
        return () -> trustRemovedListeners.remove(holder);
    }

    /** @return listeners registered and not removed (for tests) */
    int trustRemovedListenerCount() { return trustRemovedListeners.size(); }

    /**
     * @param builder the app's OkHttp builder
     * @return the builder's client, checking pins; its pool is evicted whenever trust is removed. The
     *     eviction listener stays registered for this client's lifetime: build one pinned client and
     *     share it (as OkHttp advises), or use {@link PinionOkHttp#install} and
     *     {@link #addTrustRemovedListener} to remove the listener with the client.
     */
    public OkHttpClient pinnedOkHttp(OkHttpClient.Builder builder) {
        PinionOkHttp.Installed installed = PinionOkHttp.install(builder, platform, this);
        addTrustRemovedListener(installed::evictConnections);
        return builder.build();
    }

    /**
     * UNSAFE, for debug builds only: {@link #pinnedOkHttp} with a trust manager from
     * {@link org.pinion.tls.PinionTrustManager#unsafeAllowDebugProxy}, so a chain the platform
     * verified that ends in a proxy CA {@code override} names passes in spite of the pins of the
     * domains it covers. Each use reaches this client's event listener as a
     * {@link ClientEvent.Kind#DEBUG_PROXY_BYPASS} event and is logged at WARNING. The proxy's CA
     * must be in {@code config.caFile} (or the system store); the update channel keeps its own
     * checks. The JVM cannot tell a debug build: keeping this call out of release code is the
     * caller's duty. On Android use {@code PinionAndroidTrustManager.unsafeAllowDebugProxy}, which
     * checks that the app is debuggable.
     *
     * @param builder the app's OkHttp builder
     * @param override the proxy CAs and the domains whose pins they bypass
     * @return the builder's client
     * @throws IllegalArgumentException a null override
     */
    public OkHttpClient pinnedOkHttpUnsafeAllowingDebugProxy(OkHttpClient.Builder builder, org.pinion.tls.DebugProxyOverride override) {
        PinionOkHttp.Installed installed = PinionOkHttp.install(builder,
                org.pinion.tls.PinionTrustManager.unsafeAllowDebugProxy(platform, this, override));
        addTrustRemovedListener(installed::evictConnections);
        return builder.build();
    }

    /**
     * Sends the TLS layer's events (a debug proxy override's uses) to this client's event listener.
     *
     * @param event the event
     */
    @Override
    public void onEvent(ClientEvent event) { onEvent.accept(event); }

    /** @return the update channel's client: X.509 with the system store or CA file, publisher pins only */
    OkHttpClient updateClient() {
        synchronized (updateClientLock) {
            return makeUpdateClient();
        }
    }

    private OkHttpClient makeUpdateClient() {
        if (updateClient != null) return updateClient;
        HttpUrl base = HttpUrl.parse(config.baseUrl);
        OkHttpClient.Builder builder = OkHttpUpdateFetcher.clientBuilder(config.timeoutSeconds, platform, config.publisherPins);
        if (config.publisherConnectTo != null && base != null) builder.dns(connectTo(base.host(), config.publisherConnectTo));
        updateClient = builder.build();
        return updateClient;
    }

    /**
     * @param host the host to redirect
     * @param address the address to dial instead
     * @return a resolver that answers {@code address} for {@code host} and the system's answer otherwise
     */
    public static okhttp3.Dns connectTo(String host, String address) {
        return name -> {
            if (!name.equalsIgnoreCase(host)) return okhttp3.Dns.SYSTEM.lookup(name);
            try {
                return Collections.singletonList(InetAddress.getByName(address));
            } catch (UnknownHostException e) {
                throw e;
            }
        };
    }

    /** The outcome of {@link #refresh()}: the trust core's result, or a storage failure. */
    public static final class Report {
        /** The refresh result (null when the state could not be read or saved). */
        public final RefreshedState result;
        /** The outcome (NETWORK_FAILURE also for storage failures). */
        public final RefreshedState.Outcome outcome;
        /** The error, or null. */
        public final ClientException error;

        Report(RefreshedState result, RefreshedState.Outcome outcome, ClientException error) {
            this.result = result;
            this.outcome = outcome;
            this.error = error;
        }
    }

    /**
     * One refresh, synchronously (blocks on the network). Any failure keeps the previous policy.
     *
     * @return what happened
     */
    public synchronized Report refresh() {
        if (transport == null) {
            ClientException error = ClientException.fetchFailed("publisher", "no base URL configured");
            return new Report(null, RefreshedState.Outcome.NETWORK_FAILURE, error);
        }
        Timestamp t0 = new Timestamp(config.clock.getAsLong());
        try (StateStore.Held held = store.lock()) {
            List<ClientEvent> events = new ArrayList<>();
            TrustedState start = loadOrInitial(events);
            if (start == null) {
                for (ClientEvent e : events) onEvent.accept(e);
                ClientException error = ClientException.storage("the stored state is unavailable; refresh skipped");
                return new Report(null, RefreshedState.Outcome.NETWORK_FAILURE, error);
            }
            PollToken token = PollToken.of(start.manifest == null ? 0 : start.manifest.version, config.baseline.documentBytes(), crypto);
            RefreshedState result = core.refresh(start, t0, new UpdateChannel(transport, token, config.limits.maxEnvelopeBytes));
            if (result.stateChanged && config.persist) {
                try {
                    store.save(result.state.persisted());
                } catch (IOException e) {
                    ClientException error = ClientException.storage(store.directory() + ": " + e.getMessage());
                    onEvent.accept(ClientEvent.networkFailure(error.getMessage()));
                    return new Report(result, RefreshedState.Outcome.NETWORK_FAILURE, error);
                }
            }
            for (ClientEvent e : result.events) {
                if (e.logEvidence != null && config.persist) keepEquivocationEvidence(e.logEvidence);
            }
            View old = view;
            view = new View(result.state, result.state.snapshot(config.baseline, config.staleGrace));
            for (ClientEvent e : result.events) onEvent.accept(e);
            if (!old.snapshot.policy(t0).equals(view.snapshot.policy(t0))) {
                for (Runnable listener : trustRemovedListeners) listener.run();
            }
            return new Report(result, result.outcome, result.error);
        } catch (IOException e) {
            ClientException error = ClientException.storage(store.directory() + ": " + e.getMessage());
            return new Report(null, RefreshedState.Outcome.NETWORK_FAILURE, error);
        }
    }

    /** The side file holding the first split view of the log seen (docs/DESIGN.md §12 step 5). */
    public static final String EQUIVOCATION_FILE = "log-equivocation.json";

    /**
     * Keeps the first split view's two checkpoint notes next to the state, crash-safely, for the app to
     * report; never read for trust. A later split view does not replace it. A write failure is reported
     * as an event and changes nothing else.
     */
    private void keepEquivocationEvidence(org.pinion.trust.log.Equivocation evidence) {
        if (Files.exists(store.directory().resolve(EQUIVOCATION_FILE))) return;
        JsonValue doc = JsonValue.object(Arrays.asList(
                new JsonValue.Member("storedNote", JsonValue.string(Codec.base64(evidence.storedNote()))),
                new JsonValue.Member("receivedNote", JsonValue.string(Codec.base64(evidence.receivedNote())))));
        try {
            AtomicFiles.write(store.directory(), EQUIVOCATION_FILE, JsonWriter.write(doc));
        } catch (IOException e) {
            onEvent.accept(ClientEvent.networkFailure("keeping the log equivocation evidence: " + e.getMessage()));
        }
    }

    /**
     * @return the first split view of the log this client saw: {stored note, received note} (C2SP signed
     *     notes), or null when none was kept or the file is unreadable
     */
    public byte[][] logEquivocationEvidence() {
        try {
            byte[] bytes = Files.readAllBytes(store.directory().resolve(EQUIVOCATION_FILE));
            JsonValue doc = StrictJsonParser.parse(bytes, new JsonLimits(256 * 1024, 4, 16, Collections.emptyMap()));
            byte[] stored = Codec.decodeBase64Canonical(doc.get("storedNote").text());
            byte[] received = Codec.decodeBase64Canonical(doc.get("receivedNote").text());
            return stored == null || received == null ? null : new byte[][] {stored, received};
        } catch (IOException | FormatException | RuntimeException e) {
            return null;
        }
    }

    /** Cancels the update channel's calls in flight (used by {@link Updater#stop()}). */
    void cancelCalls() {
        OkHttpClient client;
        synchronized (updateClientLock) {
            client = updateClient;
        }
        if (client != null) client.dispatcher().cancelAll();
    }

    /** @param schedule the polling schedule @return an updater for this client (not started) */
    public Updater makeUpdater(UpdateSchedule schedule) { return new Updater(this, schedule); }
}
