// How old the newest quorum of cosignatures is (docs/DESIGN.md §12 step 6), evaluated at every connection.
package org.pinion.trust.log;

/** The freshness of a checkpoint at one time: unchecked, fresh, stale (an event) or expired (narrow only). */
public final class LogFreshness {
    /** The states, as the Swift {@code LogFreshness} cases. */
    public enum State {
        /** maxCheckpointAge is 0: freshness is off. */
        UNCHECKED,
        /** Age at most maxCheckpointAge. */
        FRESH,
        /** Past maxCheckpointAge: a staleCheckpoint event. */
        STALE,
        /** Past maxCheckpointAge + checkpointGrace: the manifest counts as expired. */
        EXPIRED
    }

    /** Seconds a t_q may lie ahead of now and still be taken as clock skew (5 minutes). */
    public static final long ALLOWED_FUTURE_SKEW = 300;

    /** The state. */
    public final State state;
    /** Age in seconds (0 for a t_q at or after now; 0 when UNCHECKED). */
    public final long age;

    private LogFreshness(State state, long age) {
        this.state = state;
        this.age = age;
    }

    /**
     * @param quorumTime t_q, POSIX seconds
     * @param now the client's time, POSIX seconds
     * @param policy the newest root's log member
     * @return the freshness; a t_q in the future counts as age 0
     */
    public static LogFreshness evaluate(long quorumTime, long now, LogPolicy policy) {
        if (policy.maxCheckpointAge <= 0) return new LogFreshness(State.UNCHECKED, 0);
        long age = quorumTime >= now ? 0 : now - quorumTime;
        if (age > policy.maxCheckpointAge + policy.checkpointGrace) return new LogFreshness(State.EXPIRED, age);
        if (age > policy.maxCheckpointAge) return new LogFreshness(State.STALE, age);
        return new LogFreshness(State.FRESH, age);
    }

    /**
     * @param quorumTime t_q, POSIX seconds
     * @param policy the log member
     * @return the first POSIX second at which the manifest counts as expired, or Long.MAX_VALUE when freshness is off
     */
    public static long expiresAt(long quorumTime, LogPolicy policy) {
        if (policy.maxCheckpointAge <= 0) return Long.MAX_VALUE;
        return quorumTime + policy.maxCheckpointAge + policy.checkpointGrace + 1;
    }

    @Override
    public String toString() { return state.name().toLowerCase(java.util.Locale.ROOT) + " (age " + age + " s)"; }
}
