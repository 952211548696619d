// Compile-time stand-in for androidx.work's PeriodicWorkRequest (WorkManager 2.x); never packaged, never run.
package androidx.work;

import java.util.concurrent.TimeUnit;

/** A request to run a worker periodically. */
public final class PeriodicWorkRequest {
    private PeriodicWorkRequest() {}

    /** Builds a {@link PeriodicWorkRequest}. */
    public static final class Builder {
        /**
         * @param workerClass the worker to run
         * @param repeatInterval the interval, at least 15 minutes
         * @param repeatIntervalTimeUnit the unit of {@code repeatInterval}
         */
        public Builder(Class<? extends ListenableWorker> workerClass, long repeatInterval, TimeUnit repeatIntervalTimeUnit) {}

        /**
         * @param constraints the conditions each run waits for
         * @return this builder
         */
        public Builder setConstraints(Constraints constraints) {
            throw new UnsupportedOperationException("stub of androidx.work.PeriodicWorkRequest.Builder");
        }

        /**
         * @param backoffPolicy how the delay grows after {@code Result.retry()}
         * @param backoffDelay the first delay
         * @param timeUnit the unit of {@code backoffDelay}
         * @return this builder
         */
        public Builder setBackoffCriteria(BackoffPolicy backoffPolicy, long backoffDelay, TimeUnit timeUnit) {
            throw new UnsupportedOperationException("stub of androidx.work.PeriodicWorkRequest.Builder");
        }

        /** @return never: this stub throws */
        public PeriodicWorkRequest build() {
            throw new UnsupportedOperationException("stub of androidx.work.PeriodicWorkRequest.Builder");
        }
    }
}
