// Compile-time stand-in for androidx.work's ListenableWorker (WorkManager 2.x); never packaged, never run.
package androidx.work;

import android.content.Context;

/** The base of every worker: its context, parameters and the {@link Result} of one run. */
public abstract class ListenableWorker {
    /**
     * @param context the application context
     * @param parameters the parameters WorkManager gives
     */
    protected ListenableWorker(Context context, WorkerParameters parameters) {}

    /** @return never: this stub throws (on a device, the app's {@code Application}) */
    public final Context getApplicationContext() {
        throw new UnsupportedOperationException("stub of androidx.work.ListenableWorker");
    }

    /** The result of one run: success, failure, or retry with the request's back-off. */
    public abstract static class Result {
        Result() {}

        /** @return never: this stub throws */
        public static Result success() {
            throw new UnsupportedOperationException("stub of androidx.work.ListenableWorker.Result");
        }

        /** @return never: this stub throws */
        public static Result failure() {
            throw new UnsupportedOperationException("stub of androidx.work.ListenableWorker.Result");
        }

        /** @return never: this stub throws */
        public static Result retry() {
            throw new UnsupportedOperationException("stub of androidx.work.ListenableWorker.Result");
        }
    }
}
