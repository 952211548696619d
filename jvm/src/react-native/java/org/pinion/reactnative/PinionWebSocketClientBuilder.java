// React Native's WebSockets on Pinion's checks, through WebSocketModule.setCustomClientBuilder.
package org.pinion.reactnative;

import com.facebook.react.modules.network.CustomClientBuilder;
import okhttp3.OkHttpClient;
import org.pinion.tls.PinCheckingTrustManager;
import org.pinion.tls.PinionOkHttp;

/**
 * The builder hook to give {@code WebSocketModule.setCustomClientBuilder}: React Native's WebSocket
 * module builds its own OkHttp client for every connection and never asks
 * {@code OkHttpClientProvider}, so {@link PinionOkHttpClientFactory} does not reach it. This installs
 * {@link PinionOkHttp#install} on that builder: the handshake of every WebSocket is checked (X.509,
 * host name, pins on the verified chain). An open WebSocket is not cut when a later refresh removes
 * trust; its next connection is checked. Its own class, so that an app whose React Native has no
 * {@code CustomClientBuilder} can still load the factory.
 *
 * <p>Compiled against a stub of React Native's {@code CustomClientBuilder} (never packaged) and
 * tested on the JVM with OkHttp 3.13 through {@link #apply}; it has not run inside a React Native
 * app or on a device.
 */
public final class PinionWebSocketClientBuilder implements CustomClientBuilder {
    private final PinCheckingTrustManager trustManager;

    /**
     * @param trustManager the trust manager (on Android a {@code PinionAndroidTrustManager}); it must check a policy
     * @throws IllegalArgumentException a null trust manager, or one that checks no policy
     */
    public PinionWebSocketClientBuilder(PinCheckingTrustManager trustManager) {
        if (trustManager == null) throw new IllegalArgumentException("a trust manager is required");
        if (trustManager.policySource() == null) {
            throw new IllegalArgumentException("the trust manager checks no policy (an update-channel trust manager?)");
        }
        this.trustManager = trustManager;
    }

    /** @param builder the builder WebSocketModule is about to build; Pinion's checks are installed on it */
    @Override
    public void apply(OkHttpClient.Builder builder) {
        PinionOkHttp.install(builder, trustManager);
    }
}
