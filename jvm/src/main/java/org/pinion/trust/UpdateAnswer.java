// The raw HTTP answer a transport got for an update request: final status, ETag, body, max-age.
package org.pinion.trust;

/** What the server answered (no redirect followed), before {@link UpdateStatus#classify} says what it means. */
public final class UpdateAnswer {
    /** The HTTP status code. */
    public final int status;
    /** The {@code ETag} header, or null. */
    public final String etag;
    private final byte[] body;
    /** Seconds of {@code Cache-Control: max-age}, or -1 when absent. */
    public final long maxAge;

    /**
     * @param status the status code
     * @param etag the ETag or null
     * @param body the body (empty when none; copied)
     * @param maxAge max-age seconds or -1
     */
    public UpdateAnswer(int status, String etag, byte[] body, long maxAge) {
        this.status = status;
        this.etag = etag;
        this.body = body == null ? new byte[0] : body.clone();
        this.maxAge = maxAge;
    }

    /** @return a copy of the body */
    public byte[] body() { return body.clone(); }

    /** @return the body without a copy, for {@link UpdateStatus} in this package */
    byte[] bodyUnsafe() { return body; }
}
