// Runs refreshes one at a time: now, then on the schedule with jitter, max-age and back-off; stop() cancels.
package org.pinion.update;

import java.security.SecureRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.pinion.trust.RefreshedState;

/** A background poller for one {@link PinningClient} (on Android, prefer WorkManager: see docs/ANDROID.md). */
public final class Updater {
    private final PinningClient client;
    private final UpdateSchedule schedule;
    private final SecureRandom random = new SecureRandom();
    private ScheduledExecutorService executor;
    private ScheduledFuture<?> next;
    private int failures;

    Updater(PinningClient client, UpdateSchedule schedule) {
        this.client = client;
        this.schedule = schedule;
    }

    /** Starts polling: a refresh now, then on the schedule. Starting twice does nothing. */
    public synchronized void start() {
        if (executor != null) return;
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pinion-updater");
            t.setDaemon(true);
            return t;
        });
        next = executor.schedule(this::runOnce, 0, TimeUnit.SECONDS);
    }

    /** Asks for a refresh as soon as possible (replacing the scheduled one). */
    public synchronized void refreshNow() {
        if (executor == null) return;
        if (next != null) next.cancel(false);
        next = executor.schedule(this::runOnce, 0, TimeUnit.SECONDS);
    }

    /** Stops polling and cancels a refresh in flight; the client's policy stays as it is. */
    public synchronized void stop() {
        if (executor == null) return;
        if (next != null) next.cancel(true);
        client.cancelCalls();
        executor.shutdownNow();
        executor = null;
    }

    /** @return consecutive failures so far */
    public synchronized int consecutiveFailures() { return failures; }

    private void runOnce() {
        PinningClient.Report report = client.refresh();
        synchronized (this) {
            if (executor == null) return;
            boolean failed = report.outcome == RefreshedState.Outcome.NETWORK_FAILURE || report.outcome == RefreshedState.Outcome.REJECTED;
            failures = failed ? failures + 1 : 0;
            long maxAge = report.result == null ? -1 : report.result.maxAge;
            long delay = schedule.delay(failures, maxAge, random.nextDouble());
            next = executor.schedule(this::runOnce, delay, TimeUnit.SECONDS);
        }
    }
}
