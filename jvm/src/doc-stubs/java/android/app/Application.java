// Compile-time stand-in for android.app.Application and the Context members docs/ANDROID.md calls on it; never packaged, never run.
package android.app;

import android.content.Context;
import android.content.pm.ApplicationInfo;
import android.content.res.AssetManager;
import java.io.File;

/**
 * The app's process-wide context. On a device these members come from {@code Context} through
 * {@code ContextWrapper} (API 1; {@code getNoBackupFilesDir} API 21); the stub declares them here so
 * the Android stub of {@code Context} keeps only what the SDK itself calls. Every body throws.
 */
public class Application extends Context {
    /** Called once when the process starts, before any activity, service, receiver or worker. */
    public void onCreate() {}

    /** @return never: this stub throws */
    @Override
    public ApplicationInfo getApplicationInfo() {
        throw new UnsupportedOperationException("stub of android.app.Application");
    }

    /** @return never: this stub throws */
    public AssetManager getAssets() {
        throw new UnsupportedOperationException("stub of android.app.Application");
    }

    /** @return never: this stub throws */
    public File getNoBackupFilesDir() {
        throw new UnsupportedOperationException("stub of android.app.Application");
    }
}
