// Compile-time stand-in for androidx.work's BackoffPolicy (WorkManager 2.x); never packaged, never run.
package androidx.work;

/** How the delay grows between retries. */
public enum BackoffPolicy {
    /** Doubles at each retry. */
    EXPONENTIAL,
    /** Grows by the initial delay at each retry. */
    LINEAR
}
