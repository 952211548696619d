// Compile-time stand-in for androidx.work's Worker (WorkManager 2.x); never packaged, never run.
package androidx.work;

import android.content.Context;

/** A worker whose {@link #doWork()} runs synchronously on a background thread WorkManager provides. */
public abstract class Worker extends ListenableWorker {
    /**
     * @param context the application context
     * @param parameters the parameters WorkManager gives
     */
    public Worker(Context context, WorkerParameters parameters) {
        super(context, parameters);
    }

    /** @return the result of this run (blocking is allowed: this is a background thread) */
    public abstract Result doWork();
}
