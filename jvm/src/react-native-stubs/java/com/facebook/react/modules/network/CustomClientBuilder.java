// Compile-time and JVM-test stand-in for React Native's CustomClientBuilder; never packaged.
package com.facebook.react.modules.network;

import okhttp3.OkHttpClient;

/** React Native's hook that adjusts a builder before a module builds its client (WebSocketModule, NetworkingModule). */
public interface CustomClientBuilder {
    /** @param builder the builder the module is about to build */
    void apply(OkHttpClient.Builder builder);
}
