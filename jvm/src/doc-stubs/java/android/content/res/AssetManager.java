// Compile-time stand-in for android.content.res.AssetManager; never packaged, never run.
package android.content.res;

import java.io.IOException;
import java.io.InputStream;

/** The APK's {@code assets/} folder (API 1); the body throws. */
public final class AssetManager {
    private AssetManager() {}

    /**
     * @param fileName the path inside {@code assets/}, such as {@code pinion/root.json}
     * @return never: this stub throws
     * @throws IOException on a device, when the asset is missing
     */
    public InputStream open(String fileName) throws IOException {
        throw new UnsupportedOperationException("stub of android.content.res.AssetManager");
    }
}
