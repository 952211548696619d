// Typed refusals of the client trust core (DESIGN.md §6): every one leaves state and policy unchanged.
package org.pinion.trust;

/** Why a refresh step was refused. */
public final class ClientException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The refusal, as the Swift {@code ClientError} cases. */
    public enum Kind {
        /** A format or trust rule ({@link #trust()} has it). */
        TRUST,
        /** A manifest ordered below the floor. */
        ROLLBACK,
        /** The floor's order with other payload bytes. */
        EQUIVOCATION,
        /** The embedded root does not verify or names another scope. */
        INVALID_EMBEDDED_ROOT,
        /** More than 256 new roots in one refresh. */
        TOO_MANY_ROTATIONS,
        /** A fetch failed (status or network). */
        FETCH_FAILED,
        /** The update channel refused what the server did (a redirect, a 304 without If-None-Match, publisher pins). */
        FETCH_REFUSED,
        /** Reading or writing the state failed. */
        STORAGE,
        /** The app's configuration cannot be used (an unreadable CA file, one without a certificate): fix the build. */
        CONFIGURATION,
        /** manifest.proof is missing or fails a check of docs/DESIGN.md §12 ({@link #log()} has it). */
        LOG
    }

    private final Kind kind;
    private final transient TrustException trust;
    private final transient ManifestOrder order;
    private final transient org.pinion.trust.log.LogException log;

    private ClientException(Kind kind, String message, TrustException trust, ManifestOrder order) {
        super(TerminalText.escape(message), trust);
        this.kind = kind;
        this.trust = trust;
        this.order = order;
        this.log = null;
    }

    private ClientException(org.pinion.trust.log.LogException log) {
        super("transparency log: " + log.getMessage() + " [" + log.code() + "]", log);
        this.kind = Kind.LOG;
        this.trust = null;
        this.order = null;
        this.log = log;
    }

    /** @param error the failed log check @return a LOG refusal */
    public static ClientException log(org.pinion.trust.log.LogException error) { return new ClientException(error); }

    /** @return the log refusal of a LOG error (its {@code code()} is the reason code), else null */
    public org.pinion.trust.log.LogException log() { return log; }

    /** @param error the trust error @return a TRUST refusal */
    public static ClientException trust(TrustException error) { return new ClientException(Kind.TRUST, error.getMessage(), error, null); }

    /** @param offered offered order @param floor the floor @return a ROLLBACK refusal */
    public static ClientException rollback(ManifestOrder offered, ManifestOrder floor) {
        return new ClientException(Kind.ROLLBACK, "rollback: " + offered + " is below the floor " + floor, null, offered);
    }

    /** @param order the floor's order @return an EQUIVOCATION refusal */
    public static ClientException equivocation(ManifestOrder order) {
        return new ClientException(Kind.EQUIVOCATION,
                "equivocation: a different manifest with the same " + order + " as the accepted one", null, order);
    }

    /** @param reason why @return an INVALID_EMBEDDED_ROOT error */
    public static ClientException invalidEmbeddedRoot(String reason) {
        return new ClientException(Kind.INVALID_EMBEDDED_ROOT, "the embedded root is invalid: " + reason, null, null);
    }

    /** @param limit the cap @return a TOO_MANY_ROTATIONS refusal */
    public static ClientException tooManyRotations(int limit) {
        return new ClientException(Kind.TOO_MANY_ROTATIONS, "more than " + limit + " root rotations in one refresh", null, null);
    }

    /** @param resource e.g. {@code manifest.json} @param reason status or error @return a FETCH_FAILED error */
    public static ClientException fetchFailed(String resource, String reason) {
        return new ClientException(Kind.FETCH_FAILED, resource + ": " + reason, null, null);
    }

    /** @param resource the file @param reason what was refused @return FETCH_REFUSED */
    public static ClientException fetchRefused(String resource, String reason) {
        return new ClientException(Kind.FETCH_REFUSED, resource + ": refused: " + reason, null, null);
    }

    /** @param reason what is wrong with the configuration @return CONFIGURATION */
    public static ClientException configuration(String reason) { return new ClientException(Kind.CONFIGURATION, reason, null, null); }

    /** @param reason the storage failure @return a STORAGE error */
    public static ClientException storage(String reason) { return new ClientException(Kind.STORAGE, reason, null, null); }

    /** @return the kind */
    public Kind kind() { return kind; }

    /** @return the trust error of a TRUST refusal, else null */
    public TrustException trust() { return trust; }

    /** @return the order of a ROLLBACK or EQUIVOCATION refusal, else null */
    public ManifestOrder order() { return order; }
}
