// Compile-time stand-in for androidx.work's WorkManager (WorkManager 2.x); never packaged, never run.
package androidx.work;

import android.content.Context;

/** The app's WorkManager (the members the snippets use). */
public abstract class WorkManager {
    /** Not instantiable outside WorkManager. */
    protected WorkManager() {}

    /**
     * @param context any context of the app
     * @return never: this stub throws
     */
    public static WorkManager getInstance(Context context) {
        throw new UnsupportedOperationException("stub of androidx.work.WorkManager");
    }

    /**
     * Enqueues a periodic work under a unique name.
     *
     * @param uniqueWorkName the name
     * @param existingPeriodicWorkPolicy what to do when work of that name exists
     * @param periodicWork the request
     * @return an operation (its type is not needed by the snippets)
     */
    public abstract Object enqueueUniquePeriodicWork(String uniqueWorkName, ExistingPeriodicWorkPolicy existingPeriodicWorkPolicy,
            PeriodicWorkRequest periodicWork);
}
