// React Native's networking client built through PinionOkHttpClientFactory (and WebSockets through PinionWebSocketClientBuilder), against local TLS servers.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.facebook.react.modules.network.CookieJarContainer;
import com.facebook.react.modules.network.OkHttpClientProvider;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import okhttp3.OkHttpClient;
import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.reactnative.PinionOkHttpClientFactory;
import org.pinion.reactnative.PinionWebSocketClientBuilder;
import org.pinion.tls.OkHttpPinningTest.MutablePolicy;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.PinEvaluation;

public class ReactNativeClientFactoryTest {
    static final String HOST = "api.example.test";

    @BeforeClass
    public static void makeCertificates() throws Exception { OkHttpPinningTest.makeCertificates(); }

    @AfterClass
    public static void removeCertificates() throws IOException { OkHttpPinningTest.removeCertificates(); }

    @After
    public void removeFactory() { OkHttpClientProvider.setOkHttpClientFactory(null); }

    /** Trust-removed listeners the factory registered, as PinningClient.addTrustRemovedListener keeps them. */
    final List<Runnable> trustRemovedListeners = new ArrayList<>();

    static MutablePolicy pinnedTo(String cert) throws Exception {
        return new MutablePolicy(OkHttpPinningTest.entry(HOST, false, true, OkHttpPinningTest.pinOf(cert)));
    }

    /** The client React Native's networking module gets: through the provider, from the factory set on it. */
    OkHttpClient networkModuleClient(MutablePolicy policy) {
        PinionAndroidTrustManager tm = new PinionAndroidTrustManager(OkHttpPinningTest.platform, policy);
        OkHttpClientProvider.setOkHttpClientFactory(new PinionOkHttpClientFactory(tm, trustRemovedListeners::add));
        return OkHttpClientProvider.createClient();
    }

    @Test
    public void pinnedServerIsReachedWithReactNativesCookieJar() throws Exception {
        try (KeepAliveServer server = new KeepAliveServer(OkHttpPinningTest.pki)) {
            MutablePolicy policy = pinnedTo("leaf");
            OkHttpClient client = networkModuleClient(policy);
            assertTrue("React Native's modules cast the cookie jar to CookieJarContainer", client.cookieJar() instanceof CookieJarContainer);
            assertEquals(200, OkHttpPinningTest.get(client, HOST, server.port()));
            assertEquals(0, policy.failures.size());
            assertEquals("one pool registered for eviction per client", 1, trustRemovedListeners.size());
        }
    }

    @Test
    public void unpinnedServerIsRefusedAndReported() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf2.pem", "leaf2.key", "chain.pem")) {
            MutablePolicy policy = pinnedTo("leaf");
            OkHttpClient client = networkModuleClient(policy);
            OkHttpPinningTest.refused(client, HOST, server.port, "leaf2 is not pinned");
            assertEquals(1, policy.failures.size());
            assertEquals(PinEvaluation.Verdict.REJECTED, policy.failures.get(0).verdict);
        }
    }

    @Test
    public void hostWithoutPinsIsCheckedByX509Only() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf2.pem", "leaf2.key", "chain.pem");
                OpenSslServer untrusted = new OpenSslServer(OkHttpPinningTest.pki, "stray.pem", "stray.key", null)) {
            MutablePolicy policy = pinnedTo("leaf");
            OkHttpClient client = networkModuleClient(policy);
            assertEquals(200, OkHttpPinningTest.get(client, "report.example.test", server.port));
            OkHttpPinningTest.refused(client, "report.example.test", untrusted.port, "a self-signed certificate fails X.509");
            assertEquals("no pin failure: the chain was refused before the pins", 0, policy.failures.size());
        }
    }

    @Test
    public void refreshThatRemovesTrustEvictsThePoolAndRefusesTheNextRequest() throws Exception {
        try (KeepAliveServer server = new KeepAliveServer(OkHttpPinningTest.pki)) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry(HOST, false, true,
                    OkHttpPinningTest.pinOf("leaf"), OkHttpPinningTest.pinOf("leaf2")));
            OkHttpClient client = networkModuleClient(policy);
            assertEquals(200, OkHttpPinningTest.get(client, HOST, server.port()));
            assertEquals(200, OkHttpPinningTest.get(client, HOST, server.port()));
            assertEquals("the second request reused the pooled connection", 1, server.handshakes());
            assertEquals(1, client.connectionPool().connectionCount());
            policy.policy = new MergedPolicy(Arrays.asList(OkHttpPinningTest.entry(HOST, false, true, OkHttpPinningTest.pinOf("leaf2"))));
            for (Runnable listener : trustRemovedListeners) listener.run();
            assertEquals("the refresh's listener evicted the pool", 0, client.connectionPool().connectionCount());
            OkHttpPinningTest.refused(client, HOST, server.port(), "leaf was revoked");
            assertEquals("no request was written after the revocation", 2, server.requests());
        }
    }

    @Test
    public void factoryRefusesATrustManagerWithoutAPolicy() {
        PinionTrustManager updateChannel = new PinionTrustManager(OkHttpPinningTest.platform, new ArrayList<org.pinion.trust.Pin>());
        for (Runnable attempt : Arrays.<Runnable>asList(
                () -> new PinionOkHttpClientFactory(updateChannel, trustRemovedListeners::add),
                () -> new PinionOkHttpClientFactory(null, trustRemovedListeners::add),
                () -> new PinionOkHttpClientFactory(new PinionAndroidTrustManager(OkHttpPinningTest.platform, new MutablePolicy()), null),
                () -> new PinionWebSocketClientBuilder(updateChannel),
                () -> new PinionWebSocketClientBuilder(null))) {
            try {
                attempt.run();
                fail("accepted");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("required") || e.getMessage().contains("checks no policy"));
            }
        }
    }

    @Test
    public void webSocketBuilderChecksPinsAtTheHandshake() throws Exception {
        try (KeepAliveServer pinned = new KeepAliveServer(OkHttpPinningTest.pki);
                OpenSslServer unpinned = new OpenSslServer(OkHttpPinningTest.pki, "leaf2.pem", "leaf2.key", "chain.pem")) {
            MutablePolicy policy = pinnedTo("leaf");
            OkHttpClient.Builder builder = new OkHttpClient.Builder();
            new PinionWebSocketClientBuilder(new PinionAndroidTrustManager(OkHttpPinningTest.platform, policy)).apply(builder);
            OkHttpClient client = builder.build();
            assertEquals(200, OkHttpPinningTest.get(client, HOST, pinned.port()));
            OkHttpPinningTest.refused(client, HOST, unpinned.port, "leaf2 is not pinned");
            assertEquals(1, policy.failures.size());
        }
    }
}
