// Compile-time stand-in for androidx.work's WorkerParameters (WorkManager 2.x); never packaged, never run.
package androidx.work;

/** Opaque parameters WorkManager passes to a worker's constructor. */
public final class WorkerParameters {
    private WorkerParameters() {}
}
