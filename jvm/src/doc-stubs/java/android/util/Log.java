// Compile-time stand-in for the members of android.util.Log that docs/ANDROID.md uses; never packaged, never run.
package android.util;

/** The logcat calls of the snippets in docs/ANDROID.md (API 1 signatures); every body throws. */
public final class Log {
    private Log() {}

    /**
     * @param tag the log tag
     * @param message the message
     * @return never: this stub throws
     */
    public static int i(String tag, String message) {
        throw new UnsupportedOperationException("stub of android.util.Log");
    }

    /**
     * @param tag the log tag
     * @param message the message
     * @return never: this stub throws
     */
    public static int w(String tag, String message) {
        throw new UnsupportedOperationException("stub of android.util.Log");
    }

    /**
     * @param tag the log tag
     * @param message the message
     * @param error the exception to log with its stack trace
     * @return never: this stub throws
     */
    public static int w(String tag, String message, Throwable error) {
        throw new UnsupportedOperationException("stub of android.util.Log");
    }
}
