// The poll token of the manifest request: which manifest version and which baseline the client holds.
package org.pinion.trust;

/**
 * {@code have} and {@code base} of the manifest request {@code manifest.json?have=V&base=B}
 * (docs/ARCHITECTURE.md "The update-channel seam", docs/DESIGN.md §6), rendered identically by
 * the Swift SDK. It tells the publisher what clients hold; it is never read for trust.
 */
public final class PollToken {
    /** {@code base} of a client without a baseline document: 16 zeros. */
    public static final String NO_BASELINE = "0000000000000000";

    /** The held manifest version, 0 when the client holds none. */
    public final long have;
    /** The first 16 lowercase hex digits of the SHA-256 of the baseline document's bytes, or {@link #NO_BASELINE}. */
    public final String base;

    private PollToken(long have, String base) {
        this.have = have;
        this.base = base;
    }

    /**
     * @param have the held manifest version, 0 when none is held
     * @param baselineDocument the app's baseline document bytes exactly as shipped, or null without one
     * @param crypto the SHA-256 used
     * @return the token
     * @throws IllegalArgumentException for a negative version
     */
    public static PollToken of(long have, byte[] baselineDocument, CryptoProvider crypto) {
        if (have < 0) throw new IllegalArgumentException("manifest version " + have + " is negative");
        if (baselineDocument == null) return new PollToken(have, NO_BASELINE);
        return new PollToken(have, Codec.hex(crypto.sha256(baselineDocument)).substring(0, 16));
    }

    /** @return {@code have=V&base=B}, exactly that order and nothing else (the query of the manifest request) */
    public String query() { return "have=" + have + "&base=" + base; }

    @Override
    public boolean equals(Object other) {
        return other instanceof PollToken && ((PollToken) other).have == have && ((PollToken) other).base.equals(base);
    }

    @Override
    public int hashCode() { return Long.hashCode(have) * 31 + base.hashCode(); }

    @Override
    public String toString() { return query(); }
}
