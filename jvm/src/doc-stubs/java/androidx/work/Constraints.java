// Compile-time stand-in for androidx.work's Constraints (WorkManager 2.x); never packaged, never run.
package androidx.work;

/** Conditions a work request waits for. */
public final class Constraints {
    private Constraints() {}

    /** Builds {@link Constraints}. */
    public static final class Builder {
        /** No constraint yet. */
        public Builder() {}

        /**
         * @param networkType the network the work needs
         * @return this builder
         */
        public Builder setRequiredNetworkType(NetworkType networkType) {
            throw new UnsupportedOperationException("stub of androidx.work.Constraints.Builder");
        }

        /** @return never: this stub throws */
        public Constraints build() {
            throw new UnsupportedOperationException("stub of androidx.work.Constraints.Builder");
        }
    }
}
