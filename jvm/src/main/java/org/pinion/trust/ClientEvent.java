// Something a refresh or start-up observed that an app should log or act on (DESIGN.md §6).
package org.pinion.trust;

/** An event; {@link #toString()} gives the words {@code pinion client} prints for it. */
public final class ClientEvent {
    /** The kinds of event, as the Swift {@code ClientEvent} cases. */
    public enum Kind {
        /** A new manifest was accepted. */
        UPDATED,
        /** Nothing new. */
        UNCHANGED,
        /** A root rotation was accepted. */
        ROOT_ACCEPTED,
        /** A fetched document was refused. */
        REJECTED,
        /** The publisher could not be reached or answered unexpectedly. */
        NETWORK_FAILURE,
        /** The wall clock is more than 5 minutes behind lastKnownTime. */
        CLOCK_STEPPED_BACK,
        /** issuedAt more than a day after the start time. */
        FUTURE_DATED,
        /** Equivocation: report loudly. */
        EQUIVOCATION,
        /** Stored state (or part of it) was dropped at start-up. */
        STORE_DROPPED,
        /** The stored manifest does not count as current. */
        MANIFEST_NOT_CURRENT,
        /** A state read failed with an error other than loss: the refresh was skipped. */
        STORAGE_UNAVAILABLE,
        /** The verified log checkpoint's t_q is past maxCheckpointAge (docs/DESIGN.md §12): a freeze or a stale cache. */
        STALE_CHECKPOINT,
        /** Witness cosignature times (or t_q) more than 5 minutes ahead of the client's time (counted as age 0). */
        FUTURE_COSIGNATURES,
        /**
         * A connection's pins were bypassed by an UNSAFE debug proxy override (its verified chain ends in
         * a proxy CA the app named); raised by the TLS layer on every use, never by a refresh.
         */
        DEBUG_PROXY_BYPASS
    }

    /** The kind. */
    public final Kind kind;
    /** The order for UPDATED and EQUIVOCATION, else null. */
    public final ManifestOrder order;
    /** The root version for ROOT_ACCEPTED, else 0. */
    public final long version;
    /** The refusal for REJECTED, else null. */
    public final ClientException error;
    /** For EQUIVOCATION of the log: both checkpoint notes; else null. */
    public final org.pinion.trust.log.Equivocation logEvidence;
    /** The host connected to for DEBUG_PROXY_BYPASS, else null. */
    public final String host;
    private final String text;

    private ClientEvent(Kind kind, ManifestOrder order, long version, ClientException error, String text) {
        this(kind, order, version, error, text, null);
    }

    private ClientEvent(Kind kind, ManifestOrder order, long version, ClientException error, String text,
            org.pinion.trust.log.Equivocation logEvidence) {
        this(kind, order, version, error, text, logEvidence, null);
    }

    private ClientEvent(Kind kind, ManifestOrder order, long version, ClientException error, String text,
            org.pinion.trust.log.Equivocation logEvidence, String host) {
        this.host = host;
        this.logEvidence = logEvidence;
        this.kind = kind;
        this.order = order;
        this.version = version;
        this.error = error;
        this.text = TerminalText.escape(text);
    }

    /** @param order accepted order @return the event */
    public static ClientEvent updated(ManifestOrder order) { return new ClientEvent(Kind.UPDATED, order, 0, null, "updated to " + order); }

    /** @return the event */
    public static ClientEvent unchanged() { return new ClientEvent(Kind.UNCHANGED, null, 0, null, "unchanged"); }

    /** @param version accepted root version @return the event */
    public static ClientEvent rootAccepted(long version) {
        return new ClientEvent(Kind.ROOT_ACCEPTED, null, version, null, "accepted root version " + version);
    }

    /** @param error the refusal @return the event */
    public static ClientEvent rejected(ClientException error) {
        return new ClientEvent(Kind.REJECTED, null, 0, error, "rejected: " + error.getMessage());
    }

    /** @param reason what failed @return the event */
    public static ClientEvent networkFailure(String reason) {
        return new ClientEvent(Kind.NETWORK_FAILURE, null, 0, null, "network failure: " + reason);
    }

    /** @param wall wall clock @param last lastKnownTime @return the event */
    public static ClientEvent clockSteppedBack(Timestamp wall, Timestamp last) {
        return new ClientEvent(Kind.CLOCK_STEPPED_BACK, null, 0, null,
                "clock stepped back: wall clock " + wall + ", last known time " + last);
    }

    /** @param issuedAt manifest issuedAt @param start refresh start @return the event */
    public static ClientEvent futureDated(Timestamp issuedAt, Timestamp start) {
        return new ClientEvent(Kind.FUTURE_DATED, null, 0, null,
                "future-dated manifest: issuedAt " + issuedAt + ", start " + start);
    }

    /** @param order the order @return the event */
    public static ClientEvent equivocation(ManifestOrder order) {
        return new ClientEvent(Kind.EQUIVOCATION, order, 0, null,
                "EQUIVOCATION at " + order + ": report this to the security team");
    }

    /**
     * @param evidence the two checkpoints of one size the log key signed
     * @return an EQUIVOCATION event carrying both notes, to be reported loudly
     */
    public static ClientEvent logEquivocation(org.pinion.trust.log.Equivocation evidence) {
        return new ClientEvent(Kind.EQUIVOCATION, null, 0, null, "EQUIVOCATION of the transparency log: two trees of size "
                + evidence.stored.size + " (" + evidence.stored + " and " + evidence.received
                + "): report this and both checkpoint notes to the security team", evidence);
    }

    /** @param age seconds since t_q @param maxAge the root's maxCheckpointAge @return the event */
    public static ClientEvent staleCheckpoint(long age, long maxAge) {
        return new ClientEvent(Kind.STALE_CHECKPOINT, null, 0, null, "stale log checkpoint: the witnesses last cosigned "
                + age + " s ago, more than maxCheckpointAge " + maxAge + " s (frozen or stale view?)");
    }

    /**
     * @param witnesses names of the witnesses whose times are more than 5 minutes ahead
     * @param quorumTimeInFuture whether t_q itself is (then counted as age 0 and stored as now)
     * @return the event
     */
    public static ClientEvent futureCosignatures(java.util.List<String> witnesses, boolean quorumTimeInFuture) {
        return new ClientEvent(Kind.FUTURE_COSIGNATURES, null, 0, null, "cosignature times more than 5 minutes ahead of this "
                + "clock: " + String.join(", ", witnesses) + (quorumTimeInFuture ? " (t_q too: counted as age 0)" : ""));
    }

    /** @param reason what was dropped @return the event */
    public static ClientEvent storeDropped(String reason) {
        return new ClientEvent(Kind.STORE_DROPPED, null, 0, null, "stored state dropped: " + reason);
    }

    /** @param reason why @return the event */
    public static ClientEvent manifestNotCurrent(String reason) {
        return new ClientEvent(Kind.MANIFEST_NOT_CURRENT, null, 0, null, "manifest not current: " + reason);
    }

    /** @param reason the read error @return the event */
    public static ClientEvent storageUnavailable(String reason) {
        return new ClientEvent(Kind.STORAGE_UNAVAILABLE, null, 0, null, "state unavailable, refresh skipped: " + reason);
    }

    /**
     * @param host the host whose pins were bypassed
     * @param line the log line of the use, naming the proxy CA's SPKI pin
     * @return the DEBUG_PROXY_BYPASS event
     */
    public static ClientEvent debugProxyBypass(String host, String line) {
        return new ClientEvent(Kind.DEBUG_PROXY_BYPASS, null, 0, null, line, null, host);
    }

    @Override
    public String toString() { return text; }
}
