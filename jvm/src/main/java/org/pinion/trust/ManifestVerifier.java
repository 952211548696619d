// Verification of a pin manifest under the newest trusted root (DESIGN.md §5, §6 step 3).
package org.pinion.trust;

/** The manifest checks every part shares; expiry and the floor are the caller's. */
public final class ManifestVerifier {
    /** A manifest whose signatures met the newest root's pins role. */
    public static final class Verified {
        /** The parsed envelope. */
        public final Envelope envelope;
        /** The parsed payload. */
        public final ManifestPayload payload;
        private final byte[] payloadSha256;

        Verified(Envelope envelope, ManifestPayload payload, byte[] payloadSha256) {
            this.envelope = envelope;
            this.payload = payload;
            this.payloadSha256 = payloadSha256;
        }

        /** @return a copy of the SHA-256 of the payload bytes */
        public byte[] payloadSha256() { return payloadSha256.clone(); }

        /**
         * @param now effective time
         * @throws TrustException MANIFEST_EXPIRED unless {@code expiresAt > now}
         */
        public void checkCurrent(Timestamp now) throws TrustException {
            if (!payload.expiresAt.after(now)) {
                throw new TrustException(TrustException.Kind.MANIFEST_EXPIRED, "manifest version " + payload.version
                        + " expired at " + payload.expiresAt + " (now " + now + ")");
            }
        }
    }

    private ManifestVerifier() {}

    /**
     * Verifies in the order of DESIGN.md §6 step 3: envelope (limits, strict form), payloadType,
     * signatures against the NEWEST root's pins role, strict payload, scope,
     * {@code newest.pinsRoleSince <= rootVersion <= newest.version}, lifetime within the newest cap.
     *
     * @param bytes the envelope file
     * @param newest the newest trusted root
     * @param crypto Ed25519 and SHA-256
     * @param limits size and count limits
     * @return the verified manifest
     * @throws TrustException naming the first rule broken
     */
    public static Verified verify(byte[] bytes, VerifiedRoot newest, CryptoProvider crypto, Limits limits)
            throws TrustException {
        Envelope envelope;
        try {
            envelope = Envelope.parse(bytes, limits);
        } catch (FormatException e) {
            throw new TrustException(e);
        }
        if (envelope.kind != PayloadKind.PINS) {
            throw new TrustException(TrustException.Kind.WRONG_PAYLOAD_KIND,
                    "payloadType is " + envelope.kind.mediaType + ", expected " + PayloadKind.PINS.mediaType);
        }
        RootPayload root = newest.payload;
        Signatures.Report report = Signatures.check(envelope, root.pinsRole, root, crypto);
        if (!report.meets(root.pinsRole.threshold)) {
            throw new TrustException(TrustException.Kind.THRESHOLD_NOT_MET, report.valid.size()
                    + " valid signature(s) from the pins role of root version " + root.version + "; threshold is "
                    + root.pinsRole.threshold);
        }
        ManifestPayload payload;
        try {
            payload = ManifestPayload.parse(envelope.payloadBytes(), limits);
        } catch (FormatException e) {
            throw new TrustException(e.under("payload"));
        }
        if (!payload.scope.equals(root.scope)) {
            throw new TrustException(TrustException.Kind.SCOPE_MISMATCH,
                    "scope is \"" + payload.scope + "\", the root's scope is \"" + root.scope + "\"");
        }
        if (payload.rootVersion > root.version || payload.rootVersion < root.pinsRoleSince) {
            throw new TrustException(TrustException.Kind.ROOT_VERSION_MISMATCH, "rootVersion is " + payload.rootVersion
                    + ", the newest trusted root is version " + root.version + " (pinsRoleSince " + root.pinsRoleSince + ")");
        }
        if (payload.lifetime() > root.maxManifestLifetime) {
            throw new TrustException(TrustException.Kind.LIFETIME_EXCEEDS_CAP, "lifetime " + payload.lifetime()
                    + " s (expiresAt - issuedAt) exceeds the root's maxManifestLifetime of " + root.maxManifestLifetime + " s");
        }
        return new Verified(envelope, payload, crypto.sha256(envelope.payloadBytes()));
    }
}
