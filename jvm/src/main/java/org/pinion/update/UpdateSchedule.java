// When the next refresh runs: interval with jitter, the publisher's max-age within bounds, exponential back-off.
package org.pinion.update;

/** The polling schedule of the {@link Updater}, in seconds; a pure function of outcome and randomness. */
public final class UpdateSchedule {
    /** Normal interval between refreshes. */
    public final long interval;
    /** Fraction of the interval added or removed at random (0 ... 1). */
    public final double jitter;
    /** Shortest interval a max-age may ask for. */
    public final long minimumInterval;
    /** Longest interval a max-age may ask for. */
    public final long maximumInterval;
    /** First back-off after a failure. */
    public final long initialBackoff;
    /** Longest back-off. */
    public final long maximumBackoff;

    /** The defaults: 6 h, 10% jitter, max-age within 5 min ... 24 h, back-off 30 s ... 6 h. */
    public static final UpdateSchedule DEFAULT = new UpdateSchedule(6 * 3600, 0.1, 300, 86_400, 30, 6 * 3600);

    /**
     * @param interval seconds between refreshes
     * @param jitter fraction 0 ... 1
     * @param minimumInterval lower bound for max-age
     * @param maximumInterval upper bound for max-age
     * @param initialBackoff first back-off
     * @param maximumBackoff back-off cap
     */
    public UpdateSchedule(long interval, double jitter, long minimumInterval, long maximumInterval, long initialBackoff, long maximumBackoff) {
        this.interval = Math.max(1, interval);
        this.jitter = Math.min(1, Math.max(0, jitter));
        this.minimumInterval = Math.max(1, minimumInterval);
        this.maximumInterval = Math.max(this.minimumInterval, maximumInterval);
        this.initialBackoff = Math.max(1, initialBackoff);
        this.maximumBackoff = Math.max(this.initialBackoff, maximumBackoff);
    }

    /**
     * @param consecutiveFailures failures since the last success (0 after a success)
     * @param maxAge the last manifest response's max-age, or -1
     * @param random a uniform value in [0, 1)
     * @return seconds until the next refresh
     */
    public long delay(int consecutiveFailures, long maxAge, double random) {
        if (consecutiveFailures > 0) {
            long backoff = initialBackoff;
            for (int i = 1; i < consecutiveFailures && backoff < maximumBackoff; i++) backoff = Math.min(maximumBackoff, backoff * 2);
            return Math.max(1, Math.round(backoff * (1 - jitter * random / 2)));
        }
        long base = maxAge >= 0 ? Math.min(maximumInterval, Math.max(minimumInterval, maxAge)) : interval;
        double factor = 1 + jitter * (2 * random - 1);
        return Math.max(1, Math.round(base * factor));
    }
}
