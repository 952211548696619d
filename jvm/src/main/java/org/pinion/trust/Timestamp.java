// RFC 3339 UTC times with whole seconds, written 2026-11-30T09:00:00Z as every document writes them.
package org.pinion.trust;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Seconds since 1970-01-01T00:00:00Z, parsed and printed as {@code YYYY-MM-DDTHH:MM:SSZ} exactly. */
public final class Timestamp implements Comparable<Timestamp> {
    private static final DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'");
    private static final int[] DIGITS = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18};
    /** Seconds since the Unix epoch. */
    public final long seconds;

    /** @param seconds seconds since 1970-01-01T00:00:00Z */
    public Timestamp(long seconds) { this.seconds = seconds; }

    /**
     * Parses {@code YYYY-MM-DDTHH:MM:SSZ} exactly: uppercase T and Z, no fraction, no offset, no
     * year before 1970, no normalised impossible date (Feb 30, 24:00, :60).
     *
     * @param text the time
     * @return the time
     * @throws FormatException {@link FormatRule#INVALID_TIME} (path empty) with the reason
     */
    public static Timestamp parse(String text) throws FormatException {
        byte[] b = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (b.length != 20) throw invalid(b.length > 20 ? "fractions and offsets are not allowed" : "too short");
        for (int position : DIGITS) {
            if (b[position] < '0' || b[position] > '9') throw invalid("digit expected at position " + (position + 1));
        }
        if (b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':') {
            throw invalid("separators must be - T :");
        }
        if (b[19] != 'Z') throw invalid("must end with Z (UTC)");
        if (text.substring(0, 4).compareTo("1970") < 0) throw invalid("years before 1970 are not allowed");
        try {
            LocalDate date = LocalDate.of(Integer.parseInt(text.substring(0, 4)), Integer.parseInt(text.substring(5, 7)),
                    Integer.parseInt(text.substring(8, 10)));
            LocalTime time = LocalTime.of(Integer.parseInt(text.substring(11, 13)), Integer.parseInt(text.substring(14, 16)),
                    Integer.parseInt(text.substring(17, 19)));
            return new Timestamp(LocalDateTime.of(date, time).toEpochSecond(ZoneOffset.UTC));
        } catch (DateTimeException e) {
            throw invalid("no such date or time");
        }
    }

    private static FormatException invalid(String reason) {
        return new FormatException("", FormatRule.INVALID_TIME,
                "not an RFC 3339 UTC time like 2026-11-30T09:00:00Z (" + reason + ")");
    }

    /** @param delta seconds to add (saturating) @return the shifted time */
    public Timestamp plus(long delta) {
        long sum = seconds + delta;
        if (((seconds ^ sum) & (delta ^ sum)) < 0) return new Timestamp(delta > 0 ? Long.MAX_VALUE : Long.MIN_VALUE);
        return new Timestamp(sum);
    }

    /** @param other a time @return whether this is strictly after {@code other} */
    public boolean after(Timestamp other) { return seconds > other.seconds; }

    /** @param a a time @param b a time @return the later one */
    public static Timestamp max(Timestamp a, Timestamp b) { return a.seconds >= b.seconds ? a : b; }

    @Override
    public int compareTo(Timestamp other) { return Long.compare(seconds, other.seconds); }

    @Override
    public boolean equals(Object other) { return other instanceof Timestamp && ((Timestamp) other).seconds == seconds; }

    @Override
    public int hashCode() { return Long.hashCode(seconds); }

    /** @return RFC 3339 text such as {@code 2026-11-30T09:00:00Z} */
    @Override
    public String toString() {
        try {
            return FORMAT.format(LocalDateTime.ofEpochSecond(seconds, 0, ZoneOffset.UTC));
        } catch (DateTimeException e) {
            return "@" + seconds;
        }
    }
}
