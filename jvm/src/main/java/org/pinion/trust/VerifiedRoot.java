// A root document whose signatures met the required thresholds, with its exact bytes.
package org.pinion.trust;

/** A verified root: envelope bytes, parsed payload, and the payload's SHA-256 (its identity). */
public final class VerifiedRoot {
    private final byte[] bytes;
    /** The parsed envelope. */
    public final Envelope envelope;
    /** The parsed payload. */
    public final RootPayload payload;
    private final byte[] payloadSha256;

    VerifiedRoot(byte[] bytes, Envelope envelope, RootPayload payload, byte[] payloadSha256) {
        this.bytes = bytes.clone();
        this.envelope = envelope;
        this.payload = payload;
        this.payloadSha256 = payloadSha256;
    }

    /** @return the root version */
    public long version() { return payload.version; }

    /** @return a copy of the exact envelope bytes */
    public byte[] bytes() { return bytes.clone(); }

    /** @return a copy of the SHA-256 of the payload bytes */
    public byte[] payloadSha256() { return payloadSha256.clone(); }
}
