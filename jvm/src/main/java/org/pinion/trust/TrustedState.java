// The verified in-memory view of the persisted state: chain, manifest, whether it is valid, forced domains.
package org.pinion.trust;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.pinion.trust.log.LogFreshness;
import org.pinion.trust.log.LogPolicy;

/** Immutable verified state; the trust core returns new ones. */
public final class TrustedState {
    private final ClientState persisted;
    /** The trusted roots, embedded first. */
    public final RootChain chain;
    /** The last accepted manifest, or null. */
    public final ManifestPayload manifest;
    /** Whether {@link #manifest} verifies under the newest root (DESIGN.md §5); expiry is separate. */
    public final boolean manifestValid;
    /** Domain names of a lost manifest: enforced with no pins until a fresh manifest arrives. */
    public final List<String> forcedDomains;

    TrustedState(ClientState persisted, RootChain chain, ManifestPayload manifest, boolean manifestValid,
            List<String> forcedDomains) {
        this.persisted = persisted.copy();
        this.chain = chain;
        this.manifest = manifest;
        this.manifestValid = manifestValid;
        this.forcedDomains = Collections.unmodifiableList(forcedDomains);
    }

    /** @return a copy of what is persisted */
    public ClientState persisted() { return persisted.copy(); }

    /** @return the floor, or null */
    public ManifestOrder floor() { return persisted.floor; }

    /** @return the revoked set R */
    public Set<Pin> revoked() { return new HashSet<>(persisted.revokedPins); }

    /** @return lastKnownTime, or null */
    public Timestamp lastKnownTime() { return persisted.lastKnownTime; }

    /** @return the newest root's log member, or null */
    public LogPolicy log() { return chain.newest().payload.log; }

    /** @return t_q of the stored log checkpoint (POSIX seconds), or -1 when none is stored */
    public long logQuorumTime() { return persisted.logCheckpoint == null ? -1 : persisted.logQuorumTime; }

    /**
     * @param now the connection's effective time
     * @return the log freshness at {@code now} (docs/DESIGN.md §12), or null when the newest root has no log
     *     or no checkpoint is stored
     */
    public LogFreshness logFreshness(Timestamp now) {
        LogPolicy log = log();
        if (log == null || persisted.logCheckpoint == null) return null;
        return LogFreshness.evaluate(persisted.logQuorumTime, now.seconds, log);
    }

    /**
     * The instant from which M counts as expired because of the log (docs/DESIGN.md §12): t_q +
     * maxCheckpointAge + checkpointGrace + 1 s; without a stored checkpoint under a log with freshness on,
     * M counts as expired at once (fail closed: nothing shows the view is recent). Null when no log applies.
     */
    private Timestamp logExpiresAt() {
        LogPolicy log = log();
        if (log == null || log.maxCheckpointAge <= 0) return null;
        if (persisted.logCheckpoint == null) return new Timestamp(0);
        return new Timestamp(LogFreshness.expiresAt(persisted.logQuorumTime, log));
    }

    /**
     * @param baseline the app's baseline
     * @param staleGrace seconds M counts as current after expiry
     * @return both merges for this state; M stops counting as current at the newest root's expiry or when the
     *     log checkpoint is older than maxCheckpointAge + checkpointGrace, whichever is first
     */
    public PolicySnapshot snapshot(Baseline baseline, long staleGrace) {
        Timestamp until = chain.newest().payload.expiresAt;
        Timestamp logUntil = logExpiresAt();
        if (logUntil != null && logUntil.compareTo(until) < 0) until = logUntil;
        return new PolicySnapshot(baseline, manifest, manifestValid, revoked(), staleGrace, forcedDomains, until);
    }
}
