// Compile-time and JVM-test stand-in for Android's Context; never packaged.
package android.content;

import android.content.pm.ApplicationInfo;

/**
 * The one member of {@code android.content.Context} (API 1) that Pinion calls. On a device the
 * platform's class is used; jvm/build keeps this file out of every jar and AAR. Tests subclass it
 * to give an {@link ApplicationInfo} of their choice.
 */
public abstract class Context {
    /** @return the information about the application this context belongs to (from its manifest) */
    public abstract ApplicationInfo getApplicationInfo();
}
