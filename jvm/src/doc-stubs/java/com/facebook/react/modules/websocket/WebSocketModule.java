// Compile-time stand-in for the static hook of React Native's WebSocketModule that docs/REACT_NATIVE.md calls; never packaged, never run.
package com.facebook.react.modules.websocket;

import com.facebook.react.modules.network.CustomClientBuilder;

/** React Native's WebSocket module: it builds one OkHttp client per connection. */
public final class WebSocketModule {
    private WebSocketModule() {}

    /**
     * Sets the hook that adjusts the builder of every WebSocket connection's client.
     *
     * @param builder the hook, or null for none
     */
    public static void setCustomClientBuilder(CustomClientBuilder builder) {
        throw new UnsupportedOperationException("stub of com.facebook.react.modules.websocket.WebSocketModule");
    }
}
