// The trust core's view of an UpdateFetcher: builds each request (ETag, poll token, limit) and classifies each answer.
package org.pinion.trust;

import org.pinion.trust.log.TlogProof;

/**
 * Adapts an {@link UpdateFetcher} to the trust core's {@link Fetch.Source}: the requests carry the held
 * ETag and the poll token (manifest only) and the envelope or proof limit, every answer goes through
 * {@link UpdateStatus#classify}, and a transport failure becomes FAILED (network) or REFUSED. A proof
 * over its limit reaches the trust core cut to limit + 1 bytes, which it refuses as {@code log-proof-too-large}.
 */
public final class UpdateChannel implements Fetch.Source {
    private final UpdateFetcher fetcher;
    private final PollToken pollToken;
    private final int maxEnvelopeBytes;

    /**
     * @param fetcher the platform's transport
     * @param pollToken the poll token of this refresh's manifest request
     * @param maxEnvelopeBytes the envelope limit (roots and the manifest)
     */
    public UpdateChannel(UpdateFetcher fetcher, PollToken pollToken, int maxEnvelopeBytes) {
        this.fetcher = fetcher;
        this.pollToken = pollToken;
        this.maxEnvelopeBytes = maxEnvelopeBytes;
    }

    @Override
    public Fetch root(long version) { return run(UpdateRequest.root(version, maxEnvelopeBytes)); }

    @Override
    public Fetch manifest(String ifNoneMatch) { return run(UpdateRequest.manifest(ifNoneMatch, pollToken, maxEnvelopeBytes)); }

    @Override
    public Fetch proof() {
        int limit = TlogProof.DEFAULT_MAX_BYTES;
        try {
            return UpdateStatus.classify(TreeFile.MANIFEST_PROOF, fetcher.fetch(UpdateRequest.proof(limit)), false);
        } catch (UpdateFetchError e) {
            if (e.kind == UpdateFetchError.Kind.TOO_LARGE) return Fetch.foundOwned(new byte[limit + 1], null, -1);
            return failure(e);
        }
    }

    private Fetch run(UpdateRequest request) {
        try {
            return UpdateStatus.classify(request.file, fetcher.fetch(request), request.ifNoneMatch != null);
        } catch (UpdateFetchError e) {
            return failure(e);
        }
    }

    private static Fetch failure(UpdateFetchError e) {
        return e.kind == UpdateFetchError.Kind.REFUSED ? Fetch.refused(e.getMessage()) : Fetch.failed(e.getMessage());
    }
}
