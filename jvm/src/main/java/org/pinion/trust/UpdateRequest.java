// What the refresh asks a transport for: one tree file, conditional and with the poll token for the manifest, size-limited.
package org.pinion.trust;

/** A request of the update channel (docs/ARCHITECTURE.md "The update-channel seam"); a value. */
public final class UpdateRequest {
    /** The file wanted. */
    public final TreeFile file;
    /** The ETag to send as {@code If-None-Match} (manifest only), or null. */
    public final String ifNoneMatch;
    /** The poll token sent as the manifest request's query (manifest only), or null. */
    public final PollToken pollToken;
    /** The largest body accepted, in bytes; a longer one is refused by the transport. */
    public final int maxBytes;

    private UpdateRequest(TreeFile file, String ifNoneMatch, PollToken pollToken, int maxBytes) {
        if (maxBytes < 0) throw new IllegalArgumentException("body limit " + maxBytes + " is negative");
        this.file = file;
        this.ifNoneMatch = ifNoneMatch;
        this.pollToken = pollToken;
        this.maxBytes = maxBytes;
    }

    /** @param version the root version @param maxBytes the envelope limit @return the GET of {@code root/{version}.json} */
    public static UpdateRequest root(long version, int maxBytes) { return new UpdateRequest(TreeFile.root(version), null, null, maxBytes); }

    /**
     * @param ifNoneMatch the held ETag, or null
     * @param pollToken the poll token (required)
     * @param maxBytes the envelope limit
     * @return the (conditional) GET of {@code manifest.json?have=V&base=B}
     */
    public static UpdateRequest manifest(String ifNoneMatch, PollToken pollToken, int maxBytes) {
        if (pollToken == null) throw new IllegalArgumentException("the manifest request needs a poll token");
        return new UpdateRequest(TreeFile.MANIFEST, ifNoneMatch, pollToken, maxBytes);
    }

    /** @param maxBytes the proof limit @return the unconditional GET of {@code manifest.proof} */
    public static UpdateRequest proof(int maxBytes) { return new UpdateRequest(TreeFile.MANIFEST_PROOF, null, null, maxBytes); }

    /** @return the path and query under {@code v1/{scope}/}: the file's path, plus {@code ?have=V&base=B} for the manifest */
    public String pathAndQuery() { return pollToken == null ? file.path() : file.path() + "?" + pollToken.query(); }

    @Override
    public String toString() { return pathAndQuery(); }
}
