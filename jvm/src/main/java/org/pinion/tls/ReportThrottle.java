// Sends identical pin-failure reports at most once per 24 hours, with bounded memory (DESIGN.md §8 step 5).
package org.pinion.tls;

import java.util.HashMap;
import java.util.Map;
import org.pinion.crypto.Sha256;
import org.pinion.trust.Codec;
import org.pinion.trust.Timestamp;

/** Remembers when each report identity (everything but the time) was last sent. Not thread-safe: synchronise. */
public final class ReportThrottle {
    /** Seconds during which an identical report is suppressed. */
    public static final long WINDOW = 86_400;
    private final int capacity;
    private final Map<String, Timestamp> sentAt = new HashMap<>();

    /** @param capacity most identities remembered (at least 1) */
    public ReportThrottle(int capacity) { this.capacity = Math.max(1, capacity); }

    /**
     * @param report a report
     * @param now the time
     * @return whether to send it (and it is remembered as sent now)
     */
    public boolean shouldSend(PinFailureReport report, Timestamp now) {
        String key = Codec.hex(Sha256.digest(report.identity()));
        if (suppressed(key, now)) return false;
        if (!sentAt.containsKey(key) && sentAt.size() >= capacity) {
            sentAt.entrySet().removeIf(e -> !suppressed(e.getKey(), now));
            while (sentAt.size() >= capacity) {
                String oldest = null;
                for (Map.Entry<String, Timestamp> e : sentAt.entrySet()) {
                    if (oldest == null || e.getValue().compareTo(sentAt.get(oldest)) < 0) oldest = e.getKey();
                }
                sentAt.remove(oldest);
            }
        }
        sentAt.put(key, now);
        return true;
    }

    /** @return identities remembered */
    public int size() { return sentAt.size(); }

    private boolean suppressed(String key, Timestamp now) {
        Timestamp sent = sentAt.get(key);
        if (sent == null) return false;
        long elapsed = now.seconds - sent.seconds;
        return elapsed >= 0 && elapsed < WINDOW;
    }
}
