// The verified in-memory view of the persisted state: chain, manifest, whether it is valid, forced domains.
package org.pinion.trust;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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

    /**
     * @param baseline the app's baseline
     * @param staleGrace seconds M counts as current after expiry
     * @return both merges for this state
     */
    public PolicySnapshot snapshot(Baseline baseline, long staleGrace) {
        return new PolicySnapshot(baseline, manifest, manifestValid, revoked(), staleGrace, forcedDomains,
                chain.newest().payload.expiresAt);
    }
}
