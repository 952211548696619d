// What the client persists between runs (DESIGN.md §6 step 6): enough to re-verify everything at start-up.
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The persisted trust state of one scope, as ONE record. Envelopes are kept as exact bytes so that
 * start-up re-verifies signatures. Mutable value; {@link #copy()} before changing a shared one.
 */
public final class ClientState {
    /** The scope; a state of another scope is foreign and counts as lost. */
    public String scope;
    /** Envelope bytes of every root accepted after the embedded one, oldest first. */
    public List<byte[]> acceptedRoots = new ArrayList<>();
    /** Exact envelope bytes of the last accepted manifest, or null. */
    public byte[] manifest;
    /** (rootVersion, version) of the last accepted manifest, or null; never goes down. */
    public ManifestOrder floor;
    /** SHA-256 of the payload accepted at the floor (32 bytes), or null. */
    public byte[] floorPayloadSha256;
    /** Highest start time of a successful refresh, or null. */
    public Timestamp lastKnownTime;
    /** The revoked set R (DESIGN.md §7). */
    public List<Pin> revokedPins = new ArrayList<>();
    /** The newest root's pinsRoleSince when R was started; a higher one restarts R. */
    public long revokedSince;
    /** Domain names of the last accepted manifest: stay enforced if the rest is lost. */
    public List<String> manifestDomainNames = new ArrayList<>();
    /** ETag of the last manifest.json response, or null. */
    public String manifestETag;
    /** The cosigned checkpoint note verified with the last manifest.proof (docs/DESIGN.md §12), or null. */
    public byte[] logCheckpoint;
    /** t_q of {@link #logCheckpoint} as stored (never above the time it was verified at), POSIX seconds. */
    public long logQuorumTime;

    /** @param scope the scope */
    public ClientState(String scope) { this.scope = scope; }

    /** @return a deep copy */
    public ClientState copy() {
        ClientState c = new ClientState(scope);
        for (byte[] root : acceptedRoots) c.acceptedRoots.add(root.clone());
        c.manifest = manifest == null ? null : manifest.clone();
        c.floor = floor;
        c.floorPayloadSha256 = floorPayloadSha256 == null ? null : floorPayloadSha256.clone();
        c.lastKnownTime = lastKnownTime;
        c.revokedPins = new ArrayList<>(revokedPins);
        c.revokedSince = revokedSince;
        c.manifestDomainNames = new ArrayList<>(manifestDomainNames);
        c.manifestETag = manifestETag;
        c.logCheckpoint = logCheckpoint == null ? null : logCheckpoint.clone();
        c.logQuorumTime = logQuorumTime;
        return c;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof ClientState)) return false;
        ClientState o = (ClientState) other;
        if (acceptedRoots.size() != o.acceptedRoots.size()) return false;
        for (int i = 0; i < acceptedRoots.size(); i++) {
            if (!Arrays.equals(acceptedRoots.get(i), o.acceptedRoots.get(i))) return false;
        }
        return scope.equals(o.scope) && Arrays.equals(manifest, o.manifest) && java.util.Objects.equals(floor, o.floor)
                && Arrays.equals(floorPayloadSha256, o.floorPayloadSha256)
                && java.util.Objects.equals(lastKnownTime, o.lastKnownTime) && revokedPins.equals(o.revokedPins)
                && revokedSince == o.revokedSince && manifestDomainNames.equals(o.manifestDomainNames)
                && java.util.Objects.equals(manifestETag, o.manifestETag) && Arrays.equals(logCheckpoint, o.logCheckpoint)
                && logQuorumTime == o.logQuorumTime;
    }

    @Override
    public int hashCode() { return scope.hashCode() * 31 + java.util.Objects.hashCode(floor); }
}
