// React Native's networking client from PinionOkHttpClientFactory shares a PinningClient's refresh: a revocation evicts its pool and refuses the next request.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import com.facebook.react.modules.network.OkHttpClientProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import okhttp3.OkHttpClient;
import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.reactnative.PinionOkHttpClientFactory;
import org.pinion.tls.PinionAndroidTrustManager;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.tls.TrustManagers;
import org.pinion.trust.Pin;
import org.pinion.trust.RefreshedState;

public class ReactNativeRefreshTest {
    @BeforeClass
    public static void setUp() throws Exception { PinningClientTest.setUpOnce(); }

    @AfterClass
    public static void tearDown() throws IOException { PinningClientTest.tearDown(); }

    @After
    public void removeFactory() { OkHttpClientProvider.setOkHttpClientFactory(null); }

    @Test
    public void aRefreshThatRevokesThePinClosesReactNativesPooledConnection() throws Exception {
        Path tree = PinningClientTest.tree(PinningClientTest.manifest(1,
                Arrays.asList(PinningClientTest.pinOf("leaf"), PinningClientTest.pinOf("leaf2")), Collections.<Pin>emptyList(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(PinningClientTest.pki, tree)) {
            PinningClient pinion = new PinningClient(PinningClientTest.config(server.port(), PinningClientTest.work.resolve("rn-state")), null, null);
            assertEquals(RefreshedState.Outcome.UPDATED, pinion.refresh().outcome);
            PinionAndroidTrustManager trustManager = new PinionAndroidTrustManager(
                    TrustManagers.platform(PinningClientTest.pki.path("root.pem")), pinion);
            OkHttpClientProvider.setOkHttpClientFactory(new PinionOkHttpClientFactory(trustManager, pinion::addTrustRemovedListener));
            OkHttpClient http = OkHttpClientProvider.createClient();
            assertEquals(200, PinningClientTest.get(http, server.port()));
            assertEquals(1, http.connectionPool().connectionCount());

            Files.write(tree.resolve("v1/" + PinningClientTest.S + "/manifest.json"), PinningClientTest.manifest(2,
                    Collections.singletonList(PinningClientTest.pinOf("leaf2")), Collections.singletonList(PinningClientTest.pinOf("leaf")), null));
            assertEquals(RefreshedState.Outcome.UPDATED, pinion.refresh().outcome);
            assertEquals("the refresh evicted React Native's pool", 0, http.connectionPool().connectionCount());
            try {
                PinningClientTest.get(http, server.port());
                fail("the revoked leaf was accepted");
            } catch (IOException expected) {
                assertEquals(javax.net.ssl.SSLHandshakeException.class, expected.getClass());
            }
        }
    }
}
