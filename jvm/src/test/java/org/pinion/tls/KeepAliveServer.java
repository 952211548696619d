// A minimal HTTP/1.1 keep-alive TLS server (JSSE) for the pooled-connection test; s_server -www closes after each response.
package org.pinion.tls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

final class KeepAliveServer implements AutoCloseable {
    private final SSLServerSocket server;
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicInteger requests = new AtomicInteger();

    KeepAliveServer(TestPki pki) throws Exception {
        pki.run("pkcs12", "-export", "-in", "leaf.pem", "-inkey", "leaf.key", "-certfile", "int.pem", "-out", "leaf.p12", "-passout", "pass:test");
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = java.nio.file.Files.newInputStream(pki.path("leaf.p12"))) {
            store.load(in, "test".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, "test".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 8, InetAddress.getByName("127.0.0.1"));
        Thread accept = new Thread(this::acceptLoop, "keep-alive-server");
        accept.setDaemon(true);
        accept.start();
    }

    int port() { return server.getLocalPort(); }

    /** @return connections accepted (each one a full handshake: the client never resumes) */
    int handshakes() { return handshakes.get(); }

    int requests() { return requests.get(); }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                SSLSocket socket = (SSLSocket) server.accept();
                handshakes.incrementAndGet();
                Thread t = new Thread(() -> serve(socket));
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(SSLSocket socket) {
        try (socket) {
            socket.startHandshake();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            OutputStream out = socket.getOutputStream();
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isEmpty()) continue;
                requests.incrementAndGet();
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            }
        } catch (IOException e) {
            return;
        }
    }

    @Override
    public void close() throws IOException { server.close(); }
}
