// The polling schedule: jitter bounds, max-age clamped to its bounds, exponential back-off capped.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class UpdateScheduleTest {
    static final UpdateSchedule S = new UpdateSchedule(3600, 0.1, 300, 86_400, 30, 3600);

    @Test
    public void intervalWithJitterStaysWithinTenPercent() {
        assertEquals(3240, S.delay(0, -1, 0.0));
        assertEquals(3600, S.delay(0, -1, 0.5));
        assertTrue(S.delay(0, -1, 0.999999) <= 3960);
    }

    @Test
    public void maxAgeIsHonouredWithinBounds() {
        assertEquals(600, S.delay(0, 600, 0.5));
        assertEquals(300, S.delay(0, 1, 0.5));
        assertEquals(86_400, S.delay(0, 10_000_000, 0.5));
    }

    @Test
    public void backOffDoublesUpToTheCap() {
        assertEquals(30, S.delay(1, -1, 0.0));
        assertEquals(60, S.delay(2, -1, 0.0));
        assertEquals(120, S.delay(3, -1, 0.0));
        assertEquals(3600, S.delay(50, -1, 0.0));
        assertTrue(S.delay(1, -1, 0.99) >= 28);
        assertEquals("a max-age does not shorten a back-off", 30, S.delay(1, 1, 0.0));
    }

    @Test
    public void nonsenseSettingsAreClamped() {
        UpdateSchedule odd = new UpdateSchedule(-5, 7, -1, -1, 0, 0);
        assertEquals(1, odd.interval);
        assertEquals(1.0, odd.jitter, 0);
        assertTrue(odd.delay(0, -1, 0.0) >= 1);
    }
}
