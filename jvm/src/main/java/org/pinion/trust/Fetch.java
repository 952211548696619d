// What one fetch of the update channel returned, as the trust core sees it (no I/O here).
package org.pinion.trust;

/**
 * A fetch result as {@link UpdateStatus#classify} gives it: the document (with the manifest's ETag),
 * absent (404 or 410), not modified, refused by the update channel, or a failure with its reason.
 */
public final class Fetch {
    /** The outcome of a fetch. */
    public enum Status {
        /** 200 with a body. */
        FOUND,
        /** 404 or 410: the end of the root chain, or no manifest.proof (never for manifest.json). */
        NOT_FOUND,
        /** 304 to a conditional GET. */
        NOT_MODIFIED,
        /** The update channel refused the answer (a redirect, a 304 without If-None-Match, publisher pins, a compressed body). */
        REFUSED,
        /** Any other status, or a network error. */
        FAILED
    }

    /** The outcome. */
    public final Status status;
    private final byte[] body;
    /** The response's ETag, or null. */
    public final String etag;
    /** Why it failed, for FAILED. */
    public final String reason;
    /** Seconds of {@code Cache-Control: max-age}, or -1 when absent. */
    public final long maxAge;

    private Fetch(Status status, byte[] body, String etag, String reason, long maxAge) {
        this.status = status;
        this.body = body;
        this.etag = etag;
        this.reason = reason;
        this.maxAge = maxAge;
    }

    /** @param body the body @param etag the ETag or null @param maxAge max-age seconds or -1 @return FOUND */
    public static Fetch found(byte[] body, String etag, long maxAge) { return new Fetch(Status.FOUND, body.clone(), etag, null, maxAge); }

    /** @param body the body @return FOUND without ETag */
    public static Fetch found(byte[] body) { return found(body, null, -1); }

    /** FOUND over a body the caller no longer touches (no copy: the megabyte envelope is copied once less). */
    static Fetch foundOwned(byte[] body, String etag, long maxAge) { return new Fetch(Status.FOUND, body, etag, null, maxAge); }

    /** @return NOT_FOUND */
    public static Fetch notFound() { return notFound(404); }

    /** @param status 404 or 410 @return NOT_FOUND naming the status */
    public static Fetch notFound(int status) { return new Fetch(Status.NOT_FOUND, null, null, "HTTP " + status, -1); }

    /** @return NOT_MODIFIED */
    public static Fetch notModified() { return notModified(-1); }

    /** @param maxAge max-age seconds of the 304, or -1 @return NOT_MODIFIED */
    public static Fetch notModified(long maxAge) { return new Fetch(Status.NOT_MODIFIED, null, null, null, maxAge); }

    /** @param reason what the update channel refused @return REFUSED */
    public static Fetch refused(String reason) { return new Fetch(Status.REFUSED, null, null, reason, -1); }

    /** @param reason what failed @return FAILED */
    public static Fetch failed(String reason) { return new Fetch(Status.FAILED, null, null, reason, -1); }

    /** @return a copy of the body of FOUND, else null */
    public byte[] body() { return body == null ? null : body.clone(); }

    /** Fetches the two resources of the update channel. */
    public interface Source {
        /** @param version root version @return the fetch of {@code root/{version}.json} */
        Fetch root(long version);

        /** @param ifNoneMatch ETag to send, or null @return the conditional fetch of {@code manifest.json} */
        Fetch manifest(String ifNoneMatch);

        /**
         * @return the unconditional fetch of {@code manifest.proof} (docs/DESIGN.md §12), made on every refresh
         *     whose newest root has a {@code log}; a source that does not serve it answers NOT_FOUND, which
         *     such a refresh refuses ({@code log-proof-missing})
         */
        default Fetch proof() { return notFound(); }
    }
}
