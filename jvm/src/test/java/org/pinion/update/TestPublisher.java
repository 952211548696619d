// An HTTPS publisher for update-channel tests (JSSE, 127.0.0.1, port 0) that can close connections the way real servers do.
package org.pinion.update;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyStore;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.pinion.tls.TestPki;
import org.pinion.trust.UpdateAnswer;

/**
 * Serves whatever its handler answers, over HTTP/1.1 with the test PKI's leaf (api.example.test,
 * 127.0.0.1). {@link Mode#CLOSE_SILENTLY} closes every connection after one response without a
 * {@code Connection: close} header, as an HTTP/1.0 server or a dropped keep-alive does: a client that
 * pools the connection finds it dead at its next request. {@link #dropIdleConnections()} closes every
 * connection waiting for its next request, as a server's idle timeout does, at a moment the test picks.
 * A 3xx the handler answers carries no {@code Location} (a redirect no client follows); redirects to
 * follow come from {@link #redirect}.
 */
public final class TestPublisher implements AutoCloseable {
    /** How connections end. */
    public enum Mode {
        /** Kept alive until the client closes them. */
        KEEP_ALIVE,
        /** Closed after each response, without saying so. */
        CLOSE_SILENTLY
    }

    /** One request as received. */
    public static final class Received {
        /** The method. */
        public final String method;
        /** The request target (path and query). */
        public final String target;
        /** Header names in lower case. */
        public final Map<String, String> headers;

        Received(String method, String target, Map<String, String> headers) {
            this.method = method;
            this.target = target;
            this.headers = headers;
        }

        @Override
        public String toString() { return method + " " + target; }
    }

    private final SSLServerSocket server;
    private final Function<Received, UpdateAnswer> handler;
    /** How connections end; may be changed between requests. */
    public volatile Mode mode;
    /** Every request, in order. */
    public final CopyOnWriteArrayList<Received> requests = new CopyOnWriteArrayList<>();
    /**
     * When set, asked first for every request: a non-null answer is the {@code Location} of a redirect
     * with status {@link #redirectStatus} (the handler is not asked); null lets the handler answer.
     */
    public volatile Function<Received, String> redirect;
    /** The status of {@link #redirect}'s answers. */
    public volatile int redirectStatus = 307;
    private final AtomicInteger connections = new AtomicInteger();
    private final Set<SSLSocket> idle = ConcurrentHashMap.newKeySet();

    /**
     * @param pki the test certificates
     * @param mode how connections end
     * @param handler the answer to each request
     * @throws Exception when the key store cannot be made or the port bound
     */
    public TestPublisher(TestPki pki, Mode mode, Function<Received, UpdateAnswer> handler) throws Exception {
        this.mode = mode;
        this.handler = handler;
        if (!Files.exists(pki.path("leaf.p12"))) {
            pki.run("pkcs12", "-export", "-in", "leaf.pem", "-inkey", "leaf.key", "-certfile", "int.pem", "-out", "leaf.p12", "-passout", "pass:test");
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(pki.path("leaf.p12"))) {
            store.load(in, "test".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, "test".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 16, InetAddress.getByName("127.0.0.1"));
        Thread accept = new Thread(this::acceptLoop, "test-publisher");
        accept.setDaemon(true);
        accept.start();
    }

    /** @return the bound port on 127.0.0.1 */
    public int port() { return server.getLocalPort(); }

    /** @return TCP connections accepted so far */
    public int connections() { return connections.get(); }

    /** Closes every connection that is waiting for its next request (a server's idle timeout firing now). */
    public void dropIdleConnections() {
        for (SSLSocket socket : idle) {
            try {
                socket.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                SSLSocket socket = (SSLSocket) server.accept();
                // As nginx does: a response is not held back waiting for the ACK of the one before.
                socket.setTcpNoDelay(true);
                connections.incrementAndGet();
                Thread t = new Thread(() -> serve(socket), "test-publisher-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(SSLSocket socket) {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            OutputStream out = socket.getOutputStream();
            while (true) {
                idle.add(socket);
                String requestLine = in.readLine();
                idle.remove(socket);
                if (requestLine == null) return;
                Map<String, String> headers = new TreeMap<>();
                String line;
                while ((line = in.readLine()) != null && !line.isEmpty()) {
                    int colon = line.indexOf(':');
                    if (colon > 0) headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
                }
                String[] parts = requestLine.split(" ");
                Received received = new Received(parts[0], parts.length > 1 ? parts[1] : "", headers);
                int length = headers.containsKey("content-length") ? Integer.parseInt(headers.get("content-length")) : 0;
                for (int i = 0; i < length; i++) in.read();
                requests.add(received);
                Function<Received, String> redirecting = redirect;
                String location = redirecting == null ? null : redirecting.apply(received);
                UpdateAnswer answer = location != null ? new UpdateAnswer(redirectStatus, null, new byte[0], -1) : handler.apply(received);
                byte[] body = answer.body();
                StringBuilder head = new StringBuilder("HTTP/1.1 ").append(answer.status).append(' ').append(reason(answer.status)).append("\r\n");
                head.append("Content-Length: ").append(body.length).append("\r\n");
                if (answer.etag != null) head.append("ETag: ").append(answer.etag).append("\r\n");
                if (answer.maxAge >= 0) head.append("Cache-Control: max-age=").append(answer.maxAge).append("\r\n");
                if (location != null) head.append("Location: ").append(location).append("\r\n");
                head.append("\r\n");
                out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
                out.write(body);
                out.flush();
                if (mode == Mode.CLOSE_SILENTLY) return;
            }
        } catch (IOException | RuntimeException e) {
            return;
        } finally {
            idle.remove(socket);
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    private static String reason(int status) {
        switch (status) {
            case 200: return "OK";
            case 304: return "Not Modified";
            case 404: return "Not Found";
            case 410: return "Gone";
            default: return "Status";
        }
    }

    @Override
    public void close() throws IOException { server.close(); }
}
