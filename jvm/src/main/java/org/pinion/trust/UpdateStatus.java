// The one mapping of an update-channel answer to what the refresh acts on (docs/ARCHITECTURE.md, the status table).
package org.pinion.trust;

/** Pure: what an HTTP answer to a tree file means to the refresh; every transport's caller uses it and none copies it. */
public final class UpdateStatus {
    private UpdateStatus() { }

    /**
     * The table of docs/ARCHITECTURE.md "The update-channel seam":
     * 200 is the document (with the manifest's ETag); 304 is "not modified" for the manifest only when
     * {@code If-None-Match} was sent, else refused, and refused for root and proof; 404 and 410 are
     * absent for a root (the end of the walk) and the proof, and a failure for the manifest; any other
     * 3xx (a redirect the transport did not follow) is refused; any other status is a failure.
     *
     * @param file the file asked for
     * @param answer the answer
     * @param sentIfNoneMatch whether the request carried {@code If-None-Match}
     * @return FOUND, NOT_FOUND, NOT_MODIFIED, REFUSED or FAILED
     */
    public static Fetch classify(TreeFile file, UpdateAnswer answer, boolean sentIfNoneMatch) {
        int status = answer.status;
        if (status == 200) {
            return file.kind == TreeFile.Kind.MANIFEST ? Fetch.foundOwned(answer.bodyUnsafe(), answer.etag, answer.maxAge)
                    : Fetch.foundOwned(answer.bodyUnsafe(), null, answer.maxAge);
        }
        if (status == 304 && file.kind == TreeFile.Kind.MANIFEST) {
            if (!sentIfNoneMatch) return Fetch.refused("a 304 Not Modified to a request that sent no If-None-Match");
            return Fetch.notModified(answer.maxAge);
        }
        if (status == 404 || status == 410) {
            return file.kind == TreeFile.Kind.MANIFEST ? Fetch.failed("HTTP " + status) : Fetch.notFound(status);
        }
        // Also a 304 to a root or proof request: "not modified" has no meaning there.
        if (status >= 300 && status < 400) return Fetch.refused("HTTP " + status + " redirect not followed");
        return Fetch.failed("HTTP " + status);
    }
}
