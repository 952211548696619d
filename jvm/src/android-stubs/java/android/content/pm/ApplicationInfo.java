// Compile-time and JVM-test stand-in for Android's ApplicationInfo; never packaged.
package android.content.pm;

/**
 * The members of {@code android.content.pm.ApplicationInfo} (API 1) that Pinion reads, with the
 * platform's constant value. On a device the platform's class is used; jvm/build keeps this file
 * out of every jar and AAR.
 */
public class ApplicationInfo {
    /** The app's manifest sets {@code android:debuggable="true"} (a debug build type): {@code 1 << 1}, as on Android. */
    public static final int FLAG_DEBUGGABLE = 1 << 1;

    /** The {@code FLAG_*} bits of the app. */
    public int flags;
}
