// A static-file HTTPS server (JSSE, keep-alive) for tests of the update channel and the CLI: 404s, ETags, 304s.
package org.pinion.tls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.pinion.crypto.Sha256;
import org.pinion.trust.Codec;

/** Serves files of a directory at their relative paths; GET only; records request lines. */
public final class StaticHttpsServer implements AutoCloseable {
    private final SSLServerSocket server;
    private final Path root;
    /** Request lines and If-None-Match values received, in order. */
    public final List<String> requests = new CopyOnWriteArrayList<>();
    /** Bodies of POST requests (pin-failure reports), in order. */
    public final List<String> posts = new CopyOnWriteArrayList<>();
    /** Status to answer for every path under this prefix instead of the file (e.g. a 500), or null. */
    public volatile String failPrefix;

    /**
     * @param pki test certificates (leaf for api.example.test)
     * @param root the directory served
     * @throws Exception when the key store cannot be made
     */
    public StaticHttpsServer(TestPki pki, Path root) throws Exception {
        this.root = root;
        if (!Files.exists(pki.path("leaf.p12"))) {
            pki.run("pkcs12", "-export", "-in", "leaf.pem", "-inkey", "leaf.key", "-certfile", "int.pem", "-out", "leaf.p12", "-passout", "pass:test");
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(pki.path("leaf.p12"))) {
            store.load(in, "test".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, "test".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 8, InetAddress.getByName("127.0.0.1"));
        Thread accept = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    SSLSocket socket = (SSLSocket) server.accept();
                    Thread t = new Thread(() -> serve(socket));
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "static-https");
        accept.setDaemon(true);
        accept.start();
    }

    /** @return the bound port on 127.0.0.1 */
    public int port() { return server.getLocalPort(); }

    private void serve(SSLSocket socket) {
        try (socket) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            OutputStream out = socket.getOutputStream();
            String requestLine;
            while ((requestLine = in.readLine()) != null) {
                String ifNoneMatch = null;
                int contentLength = 0;
                String line;
                while ((line = in.readLine()) != null && !line.isEmpty()) {
                    String lower = line.toLowerCase(java.util.Locale.ROOT);
                    if (lower.startsWith("if-none-match:")) ifNoneMatch = line.substring(14).trim();
                    if (lower.startsWith("content-length:")) contentLength = Integer.parseInt(line.substring(15).trim());
                }
                if (requestLine.startsWith("POST ")) {
                    char[] posted = new char[contentLength];
                    int read = 0;
                    while (read < contentLength) {
                        int n = in.read(posted, read, contentLength - read);
                        if (n < 0) break;
                        read += n;
                    }
                    posts.add(new String(posted, 0, read));
                    requests.add(requestLine);
                    out.write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    continue;
                }
                requests.add(requestLine + (ifNoneMatch == null ? "" : " If-None-Match: " + ifNoneMatch));
                String target = requestLine.split(" ")[1];
                String path = target.indexOf('?') < 0 ? target : target.substring(0, target.indexOf('?'));
                Path file = root.resolve(path.substring(1)).normalize();
                byte[] body = new byte[0];
                String status;
                String etag = null;
                if (failPrefix != null && path.startsWith(failPrefix)) {
                    status = "500 Internal Server Error";
                } else if (!file.startsWith(root) || !Files.isRegularFile(file)) {
                    status = "404 Not Found";
                } else {
                    body = Files.readAllBytes(file);
                    etag = "\"" + Codec.hex(Sha256.digest(body)) + "\"";
                    status = etag.equals(ifNoneMatch) ? "304 Not Modified" : "200 OK";
                    if (status.startsWith("304")) body = new byte[0];
                }
                String head = "HTTP/1.1 " + status + "\r\nContent-Length: " + body.length + "\r\n" + (etag == null ? "" : "ETag: " + etag + "\r\n")
                        + "Cache-Control: no-cache\r\n\r\n";
                out.write(head.getBytes(StandardCharsets.ISO_8859_1));
                out.write(body);
                out.flush();
            }
        } catch (IOException e) {
            return;
        }
    }

    @Override
    public void close() throws IOException { server.close(); }
}
