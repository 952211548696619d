// Compile-time and JVM-test stand-in for React Native's OkHttpClientFactory; never packaged.
package com.facebook.react.modules.network;

import okhttp3.OkHttpClient;

/** React Native's hook for the client of its networking module ({@code fetch}, XMLHttpRequest, images). */
public interface OkHttpClientFactory {
    /** @return a new client for React Native's networking module */
    OkHttpClient createNewNetworkModuleClient();
}
