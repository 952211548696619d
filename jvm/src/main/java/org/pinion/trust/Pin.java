// An SPKI SHA-256 pin (RFC 7469 §2.4), written sha256/<canonical padded base64 of 32 bytes>.
package org.pinion.trust;

import java.util.Arrays;

/** An SPKI SHA-256 pin: the 32-byte SHA-256 digest of a DER SubjectPublicKeyInfo. */
public final class Pin implements Comparable<Pin> {
    private final byte[] digest;
    /**
     * {@code Arrays.hashCode(digest)}, computed on the first {@link #hashCode()} (0 until then, as
     * String does): a manifest's pins are checked for duplicates by a scan of short lists, so most
     * are never hashed during a parse, and a set member is hashed once, not per operation. A racy
     * write of the same value from two threads is harmless (the digest never changes).
     */
    private int hash;

    /** @param digest 32 bytes this pin now owns (callers pass a fresh or cloned array) */
    private Pin(byte[] digest) {
        this.digest = digest;
    }

    /**
     * @param digest 32 bytes
     * @return the pin
     * @throws FormatException {@link FormatRule#INVALID_PIN} when not 32 bytes
     */
    public static Pin ofDigest(byte[] digest) throws FormatException {
        if (digest.length != 32) {
            throw new FormatException("", FormatRule.INVALID_PIN, "invalid pin: not 32 bytes (got " + digest.length + ")");
        }
        return new Pin(digest.clone());
    }

    /**
     * Parses the canonical spelling {@code sha256/} + 44 characters of padded base64.
     *
     * @param text the pin text
     * @return the pin
     * @throws FormatException {@link FormatRule#INVALID_PIN} naming what is wrong (path empty)
     */
    public static Pin parse(String text) throws FormatException {
        if (!text.startsWith("sha256/")) throw invalid("must start with sha256/");
        byte[] bytes = Codec.decodeBase64Canonical(text, 7, text.length());
        if (bytes == null) throw invalid("not canonical padded base64");
        if (bytes.length != 32) throw invalid("not 32 bytes after base64 decoding (got " + bytes.length + ")");
        return new Pin(bytes);
    }

    private static FormatException invalid(String reason) {
        return new FormatException("", FormatRule.INVALID_PIN, "invalid pin: " + reason);
    }

    /** @return a copy of the 32-byte digest */
    public byte[] digest() { return digest.clone(); }

    /** @param other a digest @return whether it equals this pin's digest */
    public boolean matches(byte[] other) { return Arrays.equals(digest, other); }

    @Override
    public boolean equals(Object other) {
        return other instanceof Pin && Arrays.equals(((Pin) other).digest, digest);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = Arrays.hashCode(digest);
            hash = h;
        }
        return h;
    }

    @Override
    public int compareTo(Pin other) {
        for (int i = 0; i < 32; i++) {
            int c = Integer.compare(digest[i] & 0xff, other.digest[i] & 0xff);
            if (c != 0) return c;
        }
        return 0;
    }

    /** @return {@code sha256/<base64>} */
    @Override
    public String toString() { return "sha256/" + Codec.base64(digest); }
}
