// Compile-time and JVM-test stand-in for React Native's OkHttpClientProvider; never packaged.
package com.facebook.react.modules.network;

import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;

/**
 * The members of React Native's {@code OkHttpClientProvider} that Pinion calls or that React
 * Native's modules call to get their client, with the same behaviour: {@link #createClient} asks
 * the factory set by {@link #setOkHttpClientFactory} when there is one, and
 * {@link #createClientBuilder} gives a builder with no timeouts and a {@link ReactCookieJarContainer}
 * (which the networking and image modules cast the client's cookie jar to). The {@code Context}
 * variants (an HTTP cache) are left out.
 */
public class OkHttpClientProvider {
    private static OkHttpClient client;
    private static OkHttpClientFactory factory;

    /** @param newFactory the factory {@link #createClient} uses from now on (null: the default client) */
    public static void setOkHttpClientFactory(OkHttpClientFactory newFactory) { factory = newFactory; }

    /** @return the shared client, created on first use */
    public static OkHttpClient getOkHttpClient() {
        if (client == null) client = createClient();
        return client;
    }

    /** @return a new client: the factory's, or the default builder's */
    public static OkHttpClient createClient() {
        if (factory != null) return factory.createNewNetworkModuleClient();
        return createClientBuilder().build();
    }

    /** @return a builder with React Native's defaults: no timeouts, a {@link ReactCookieJarContainer} */
    public static OkHttpClient.Builder createClientBuilder() {
        return new OkHttpClient.Builder().connectTimeout(0, TimeUnit.MILLISECONDS).readTimeout(0, TimeUnit.MILLISECONDS)
                .writeTimeout(0, TimeUnit.MILLISECONDS).cookieJar(new ReactCookieJarContainer());
    }
}
