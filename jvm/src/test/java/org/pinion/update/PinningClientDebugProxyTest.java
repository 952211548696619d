// PinningClient's unsafe debug proxy entry point: a proxied connection to a domain the manifest pins passes, and the app's listener hears of it.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.DebugProxyOverride;
import org.pinion.tls.OpenSslServer;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.RefreshedState;

public class PinningClientDebugProxyTest {
    @BeforeClass
    public static void setUp() throws Exception {
        PinningClientTest.setUpOnce();
        if (!Files.exists(PinningClientTest.pki.path("proxyca.pem"))) PinningClientTest.pki.addCaWithLeaf("proxyca", "proxyleaf");
    }

    static int get(OkHttpClient http, int port) throws java.io.IOException {
        try (okhttp3.Response response = http.newCall(new okhttp3.Request.Builder().url("https://api.example.test:" + port + "/").build()).execute()) {
            return response.code();
        }
    }

    @Test
    public void aProxiedConnectionToAPinnedDomainPassesAndEachUseReachesTheListener() throws Exception {
        Path tree = PinningClientTest.tree(PinningClientTest.manifest(1, List.of(PinningClientTest.pinOf("leaf")), List.of(), null));
        Path cas = PinningClientTest.work.resolve("roots-with-proxy.pem");
        Files.write(cas, (Files.readString(PinningClientTest.pki.path("root.pem")) + Files.readString(PinningClientTest.pki.path("proxyca.pem")))
                .getBytes(StandardCharsets.UTF_8));
        try (StaticHttpsServer publisher = new StaticHttpsServer(PinningClientTest.pki, tree);
                OpenSslServer proxy = new OpenSslServer(PinningClientTest.pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            ClientConfiguration config = PinningClientTest.config(publisher.port(), PinningClientTest.work.resolve("state-debug-proxy"));
            config.caFile = cas;
            List<ClientEvent> events = new CopyOnWriteArrayList<>();
            PinningClient client = new PinningClient(config, events::add, null);
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            OkHttpClient.Builder builder = new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS)
                    .dns(h -> List.of(InetAddress.getByName("127.0.0.1")));
            OkHttpClient pinned = client.pinnedOkHttp(builder);
            try {
                get(pinned, proxy.port);
                org.junit.Assert.fail("the proxy's chain passed the pins without the override");
            } catch (java.io.IOException expected) {
                for (ClientEvent event : events) assertTrue(event.toString(), event.kind != ClientEvent.Kind.DEBUG_PROXY_BYPASS);
            }
            events.clear();
            DebugProxyOverride override = DebugProxyOverride.builder().proxyCaCertificate(PinningClientTest.pki.cert("proxyca"))
                    .domains("api.example.test").build();
            OkHttpClient debug = client.pinnedOkHttpUnsafeAllowingDebugProxy(new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS)
                    .dns(h -> List.of(InetAddress.getByName("127.0.0.1"))), override);
            assertEquals(200, get(debug, proxy.port));
            assertTrue(events.toString(), !events.isEmpty());
            for (ClientEvent event : events) assertEquals(ClientEvent.Kind.DEBUG_PROXY_BYPASS, event.kind);
        }
    }
}
