// A transport failure of the update channel: the network, or a refusal by the channel's own checks.
package org.pinion.trust;

/** Why a transport produced no answer (docs/ARCHITECTURE.md "The update-channel seam"). */
public final class UpdateFetchError extends Exception {
    private static final long serialVersionUID = 1L;

    /** The kind of failure. */
    public enum Kind {
        /** The network or the peer failed (connection, TLS handshake, X.509, timeout, a broken response). */
        NETWORK,
        /** The update channel refused what the server did: a redirect off https or off the host, publisher pins not met, a compressed body. */
        REFUSED,
        /** The body was over the request's {@link UpdateRequest#maxBytes}. */
        TOO_LARGE
    }

    /** The kind. */
    public final Kind kind;

    /** @param kind the kind @param reason what happened, for people */
    public UpdateFetchError(Kind kind, String reason) {
        super(TerminalText.escape(reason));
        this.kind = kind;
    }

    /** @param reason what failed @return a NETWORK failure */
    public static UpdateFetchError network(String reason) { return new UpdateFetchError(Kind.NETWORK, reason); }

    /** @param reason what was refused @return a REFUSED failure */
    public static UpdateFetchError refused(String reason) { return new UpdateFetchError(Kind.REFUSED, reason); }

    /** @param limit the limit in bytes @return a TOO_LARGE failure */
    public static UpdateFetchError tooLarge(int limit) { return new UpdateFetchError(Kind.TOO_LARGE, "body over the limit of " + limit + " bytes"); }
}
