// The chain of trusted roots from an embedded anchor through each rotation (DESIGN.md §4).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The roots trusted so far, oldest first; the first is the anchor the app embeds. Immutable. */
public final class RootChain {
    /** Most rotations one refresh follows (DESIGN.md §4). */
    public static final int MAX_ROTATIONS_PER_WALK = 256;

    private final List<VerifiedRoot> roots;

    private RootChain(List<VerifiedRoot> roots) { this.roots = Collections.unmodifiableList(roots); }

    /**
     * Trusts {@code anchorBytes} as the starting root: it must parse strictly and carry a threshold of
     * signatures of its own root role.
     *
     * @param anchorBytes the root envelope
     * @param crypto Ed25519 and SHA-256
     * @param limits size limits
     * @return the one-root chain
     * @throws TrustException FORMAT, WRONG_PAYLOAD_KIND or THRESHOLD_NOT_MET
     */
    public static RootChain anchor(byte[] anchorBytes, CryptoProvider crypto, Limits limits) throws TrustException {
        Envelope envelope = decodeEnvelope(anchorBytes, limits);
        RootPayload payload = decodePayload(envelope, crypto, limits);
        requireRootThreshold(envelope, payload, crypto);
        List<VerifiedRoot> list = new ArrayList<>();
        list.add(new VerifiedRoot(anchorBytes, envelope, payload, crypto.sha256(envelope.payloadBytes())));
        return new RootChain(list);
    }

    /** @return the roots, oldest first */
    public List<VerifiedRoot> roots() { return roots; }

    /** @return the newest trusted root */
    public VerifiedRoot newest() { return roots.get(roots.size() - 1); }

    /** @param version a version @return the trusted root of that version, or null */
    public VerifiedRoot root(long version) {
        for (VerifiedRoot root : roots) {
            if (root.version() == version) return root;
        }
        return null;
    }

    /**
     * Accepts the rotation to the next root: version exactly newest + 1, same scope, signed by a
     * threshold of the newest root's root role (checked before the payload is parsed) AND of its own
     * root role; and {@code pinsRoleSince} not lowered, and equal to the new version when the pins
     * role or a raised {@code maxManifestLifetime} changed (DESIGN.md §4).
     *
     * @param bytes the new root envelope
     * @param crypto Ed25519 and SHA-256
     * @param limits size limits
     * @return the longer chain (this one is unchanged)
     * @throws TrustException naming the rule
     */
    public RootChain append(byte[] bytes, CryptoProvider crypto, Limits limits) throws TrustException {
        RootPayload current = newest().payload;
        Envelope envelope = decodeEnvelope(bytes, limits);
        requireRootThreshold(envelope, current, crypto);
        RootPayload payload = decodePayload(envelope, crypto, limits);
        if (payload.version != current.version + 1) {
            throw new TrustException(TrustException.Kind.ROOT_NOT_NEXT, "root version " + payload.version
                    + " is not the next version (" + (current.version + 1) + ") of the trusted chain");
        }
        if (!payload.scope.equals(current.scope)) {
            throw new TrustException(TrustException.Kind.SCOPE_MISMATCH,
                    "scope is \"" + payload.scope + "\", the root's scope is \"" + current.scope + "\"");
        }
        requireRootThreshold(envelope, payload, crypto);
        boolean pinsUnchanged = payload.pinsRole.sameAs(current.pinsRole)
                && payload.maxManifestLifetime <= current.maxManifestLifetime;
        if (payload.pinsRoleSince < current.pinsRoleSince
                || (!pinsUnchanged && payload.pinsRoleSince != payload.version)) {
            throw new TrustException(TrustException.Kind.PINS_ROLE_SINCE_INVALID, "root version " + payload.version
                    + " has pinsRoleSince " + payload.pinsRoleSince + (pinsUnchanged
                            ? ", below the previous root's " + current.pinsRoleSince
                            : " although its pins role or lifetime cap changed (it must be " + payload.version + ")"));
        }
        List<VerifiedRoot> next = new ArrayList<>(roots);
        next.add(new VerifiedRoot(bytes, envelope, payload, crypto.sha256(envelope.payloadBytes())));
        return new RootChain(next);
    }

    /**
     * @param now the effective time
     * @throws TrustException ROOT_EXPIRED when the newest root's expiresAt is not after now
     */
    public void checkNewestCurrent(Timestamp now) throws TrustException {
        RootPayload payload = newest().payload;
        if (!payload.expiresAt.after(now)) {
            throw new TrustException(TrustException.Kind.ROOT_EXPIRED,
                    "root version " + payload.version + " expired at " + payload.expiresAt + " (now " + now + ")");
        }
    }

    static void requireRootThreshold(Envelope envelope, RootPayload root, CryptoProvider crypto) throws TrustException {
        Signatures.Report report = Signatures.check(envelope, root.rootRole, root, crypto);
        if (!report.meets(root.rootRole.threshold)) {
            throw new TrustException(TrustException.Kind.THRESHOLD_NOT_MET, report.valid.size()
                    + " valid signature(s) from the root role of root version " + root.version + "; threshold is "
                    + root.rootRole.threshold);
        }
    }

    static Envelope decodeEnvelope(byte[] bytes, Limits limits) throws TrustException {
        Envelope envelope;
        try {
            envelope = Envelope.parse(bytes, limits);
        } catch (FormatException e) {
            throw new TrustException(e);
        }
        if (envelope.kind != PayloadKind.ROOT) {
            throw new TrustException(TrustException.Kind.WRONG_PAYLOAD_KIND,
                    "payloadType is " + envelope.kind.mediaType + ", expected " + PayloadKind.ROOT.mediaType);
        }
        return envelope;
    }

    static RootPayload decodePayload(Envelope envelope, CryptoProvider crypto, Limits limits) throws TrustException {
        try {
            return RootPayload.parse(envelope.payloadBytes(), limits, crypto);
        } catch (FormatException e) {
            throw new TrustException(e.under("payload"));
        }
    }

    /**
     * The version of a root envelope without checking signatures (to skip superseded stored roots).
     *
     * @param bytes a root envelope
     * @param limits size limits
     * @return its payload's version
     * @throws FormatException when it cannot be read that far
     */
    static long peekVersion(byte[] bytes, Limits limits) throws FormatException {
        Envelope envelope = Envelope.parse(bytes, limits);
        if (envelope.kind != PayloadKind.ROOT) throw new FormatException("payloadType", FormatRule.WRONG_PAYLOAD_TYPE, "not a root");
        JsonValue value = StrictJsonParser.parse(envelope.payloadBytes(), limits.json());
        JsonValue version = value.get("version");
        if (version == null || version.kind() != JsonValue.Kind.NUMBER) {
            throw new FormatException("payload", FormatRule.MISSING_MEMBER, "required member \"version\" is missing");
        }
        return SchemaReader.integer(version, "payload.version", 1, Limits.MAX_INTEGER);
    }
}
