// Threshold counting of DSSE signatures for one role (DESIGN.md §2).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Counts an envelope's signatures toward one role's threshold. */
public final class Signatures {
    /** The outcome for one role. */
    public static final class Report {
        /** Distinct key ids of the role whose signature verified, in envelope order. */
        public final List<String> valid = new ArrayList<>();
        /** Key ids of the role whose signatures all failed (a warning). */
        public final List<String> invalid = new ArrayList<>();
        /** Key ids not in the role; ignored. */
        public final List<String> ignored = new ArrayList<>();

        /** @param threshold the role's threshold @return whether at least that many distinct keys verified */
        public boolean meets(int threshold) { return valid.size() >= threshold; }
    }

    private Signatures() {}

    /**
     * Only signatures whose key id is in {@code role} count; each distinct key counts once; a
     * failing signature does not count.
     *
     * @param envelope the envelope; signatures cover its PAE
     * @param role the role being checked
     * @param keys the root providing the role's public keys
     * @param crypto Ed25519
     * @return the report
     */
    public static Report check(Envelope envelope, RootPayload.Role role, RootPayload keys, CryptoProvider crypto) {
        Report report = new Report();
        Set<String> members = new HashSet<>(role.keyIds);
        byte[] message = envelope.signingInput();
        for (Envelope.Signature signature : envelope.signatures) {
            byte[] publicKey = members.contains(signature.keyId) ? keys.publicKey(signature.keyId) : null;
            if (publicKey == null) {
                report.ignored.add(signature.keyId);
                continue;
            }
            if (report.valid.contains(signature.keyId)) continue;
            if (crypto.isValidSignature(signature.signature(), message, publicKey)) {
                report.valid.add(signature.keyId);
            } else {
                report.invalid.add(signature.keyId);
            }
        }
        report.invalid.removeIf(report.valid::contains);
        return report;
    }
}
