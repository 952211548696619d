// Compile-time stand-in for androidx.work's ExistingPeriodicWorkPolicy (WorkManager 2.x); never packaged, never run.
package androidx.work;

/** What enqueueing a unique periodic work does when one of that name exists. */
public enum ExistingPeriodicWorkPolicy {
    /** Keeps the existing work. */
    KEEP
}
