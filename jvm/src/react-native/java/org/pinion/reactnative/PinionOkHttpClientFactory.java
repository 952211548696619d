// React Native's networking module (fetch, XMLHttpRequest, images) on a client pinned by Pinion.
package org.pinion.reactnative;

import com.facebook.react.modules.network.OkHttpClientFactory;
import com.facebook.react.modules.network.OkHttpClientProvider;
import java.util.function.Consumer;
import okhttp3.OkHttpClient;
import org.pinion.tls.PinCheckingTrustManager;
import org.pinion.tls.PinionOkHttp;

/**
 * The factory to give {@code OkHttpClientProvider.setOkHttpClientFactory} before React Native creates
 * its networking module. Each client it makes starts from React Native's own builder
 * ({@code OkHttpClientProvider.createClientBuilder()}: no timeouts, the cookie jar container the
 * networking and image modules cast to) and gets {@link PinionOkHttp#install}: the trust manager's
 * checks at every handshake (X.509, host name, pins on the verified chain), a fresh
 * {@code SSLContext} per connection, and the re-check of pooled connections before each request
 * against the policy of that moment. Each client's connection pool is registered with
 * {@code onTrustRemoved} (pass {@code PinningClient::addTrustRemovedListener}), so a refresh that
 * removes trust evicts it: the app's refreshes (at start and in a background job) apply to React
 * Native's traffic with no other call.
 *
 * <p>Compiled against stubs of React Native's {@code OkHttpClientFactory} and
 * {@code OkHttpClientProvider} (jvm/src/react-native-stubs, never packaged) and tested on the JVM
 * with OkHttp 3.13 through {@link #createNewNetworkModuleClient()} against local TLS servers; it has
 * not run inside a React Native app, on a device or with OkHttp 4.
 */
public final class PinionOkHttpClientFactory implements OkHttpClientFactory {
    private final PinCheckingTrustManager trustManager;
    private final Consumer<Runnable> onTrustRemoved;

    /**
     * @param trustManager the trust manager every client uses (on Android a
     *     {@code PinionAndroidTrustManager}); it must check a policy
     * @param onTrustRemoved registers a listener to run after a refresh that may have removed trust
     *     (typically {@code pinningClient::addTrustRemovedListener})
     * @throws IllegalArgumentException a null argument, or a trust manager that checks no policy
     *     (the update channel's)
     */
    public PinionOkHttpClientFactory(PinCheckingTrustManager trustManager, Consumer<Runnable> onTrustRemoved) {
        if (trustManager == null || onTrustRemoved == null) throw new IllegalArgumentException("trust manager and trust-removed registration are required");
        if (trustManager.policySource() == null) {
            throw new IllegalArgumentException("the trust manager checks no policy (an update-channel trust manager?)");
        }
        this.trustManager = trustManager;
        this.onTrustRemoved = onTrustRemoved;
    }

    /**
     * React Native's entry point: a new client for its networking module, pinned by Pinion.
     *
     * @return the client built from React Native's default builder with Pinion installed
     */
    @Override
    public OkHttpClient createNewNetworkModuleClient() {
        OkHttpClient.Builder builder = OkHttpClientProvider.createClientBuilder();
        PinionOkHttp.Installed installed = PinionOkHttp.install(builder, trustManager);
        onTrustRemoved.accept(installed::evictConnections);
        return builder.build();
    }
}
