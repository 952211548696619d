// The outcome of one refresh: the new state (persist it when changed), the outcome and every event.
package org.pinion.trust;

import java.util.Collections;
import java.util.List;

/** One refresh's result. */
public final class RefreshedState {
    /** The outcome of a refresh. */
    public enum Outcome {
        /** A new manifest was accepted. */
        UPDATED,
        /** Nothing new (304 or the same payload). */
        UNCHANGED,
        /** A fetched document was refused. */
        REJECTED,
        /** The publisher could not be reached, or storage failed. */
        NETWORK_FAILURE
    }

    /** The state after the refresh (a failed walk keeps its verified prefix). */
    public final TrustedState state;
    /** The outcome. */
    public final Outcome outcome;
    /** The refusal for REJECTED and NETWORK_FAILURE, else null. */
    public final ClientException error;
    /** The accepted order for UPDATED, else null. */
    public final ManifestOrder updatedTo;
    /** Events in order. */
    public final List<ClientEvent> events;
    /** Whether the persisted state differs from the one the refresh started from. */
    public final boolean stateChanged;
    /** The manifest response's max-age in seconds, or -1. */
    public final long maxAge;

    private RefreshedState(TrustedState state, Outcome outcome, ClientException error, ManifestOrder updatedTo,
            List<ClientEvent> events, boolean stateChanged, long maxAge) {
        this.state = state;
        this.outcome = outcome;
        this.error = error;
        this.updatedTo = updatedTo;
        this.events = Collections.unmodifiableList(events);
        this.stateChanged = stateChanged;
        this.maxAge = maxAge;
    }

    static RefreshedState of(TrustedState start, TrustedState end, Outcome outcome, ClientException error,
            ManifestOrder updatedTo, List<ClientEvent> events, long maxAge) {
        return new RefreshedState(end, outcome, error, updatedTo, events, !start.persisted().equals(end.persisted()), maxAge);
    }
}
