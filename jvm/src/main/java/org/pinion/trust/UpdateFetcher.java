// The update channel's transport seam: one GET of a tree file in, the raw answer or a failure out.
package org.pinion.trust;

/**
 * Performs the HTTP of the update channel (docs/ARCHITECTURE.md "The update-channel seam"): X.509 and
 * the publisher pins (never manifest pins), no redirect followed, the body read up to
 * {@link UpdateRequest#maxBytes}. It never decides what a status means; {@link UpdateStatus#classify} does.
 * One implementation per platform (OkHttp on the JVM and Android); tests use in-memory fakes.
 */
public interface UpdateFetcher {
    /**
     * @param request the file wanted, with its conditional header and poll token
     * @return the final answer, whatever its status
     * @throws UpdateFetchError when no answer was read, or the channel's own checks refused it
     */
    UpdateAnswer fetch(UpdateRequest request) throws UpdateFetchError;
}
