// The update channel's transport over OkHttp: GETs of tree files, size-limited, https redirects on the publisher's host, one retry on a stale connection.
package org.pinion.update;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketException;
import java.security.cert.CertificateException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLKeyException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLProtocolException;
import javax.net.ssl.X509TrustManager;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.pinion.tls.PinionOkHttp;
import org.pinion.tls.PinningException;
import org.pinion.trust.Pin;
import org.pinion.trust.TreeFile;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateFetchError;
import org.pinion.trust.UpdateFetcher;
import org.pinion.trust.UpdateRequest;

/**
 * GETs {@code {base}v1/{scope}/{file}} (docs/DESIGN.md §6, §9, §12) with the update channel's own client
 * (X.509 plus the publisher pins; manifest pins never apply). The manifest
 * request carries the poll token as its query ({@code manifest.json?have=V&base=B}) and
 * {@code If-None-Match} when an ETag is held; the proof request {@code Cache-Control: no-cache}. A body
 * is read up to the request's limit and refused past it; a compressed body is refused.
 *
 * <p>Stale connections: a server may close a kept-alive connection without saying so (HTTP/1.0 style,
 * or an idle timeout), and OkHttp's own retry is off on this client. A GET that fails with an I/O error
 * other than a TLS or certificate failure, a timeout or a cancellation is sent once more on a new connection, within
 * what is left of the call timeout. These GETs are idempotent reads of signed files; nothing else (the
 * pin failure report's POST) goes through this class.
 *
 * <p>Redirects (docs/ARCHITECTURE.md, "The update-channel seam"; the Swift SDK's transport does the
 * same): a 301, 302, 303, 307 or 308 with a {@code Location} is followed, at most
 * {@link #MAX_REDIRECTS} times, when it stays on https and on the publisher's host (any port), with the
 * same request headers; a redirect to another scheme or another host is refused before any connection to
 * it, and so is one past the limit. A 3xx without {@code Location} (or any other 3xx) is returned as the
 * final answer, which {@code UpdateStatus.classify} refuses.
 */
public final class OkHttpUpdateFetcher implements UpdateFetcher {
    private final OkHttpClient client;
    private final HttpUrl scopeUrl;
    private final long callTimeoutMillis;

    /** Redirects followed at most for one request (the Swift SDK's {@code PinnedHTTPSClient} default). */
    public static final int MAX_REDIRECTS = 3;
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    /**
     * @param client the update channel's client (its call timeout bounds both attempts of a request)
     * @param baseUrl the publisher's server root (https)
     * @param scope the scope
     */
    public OkHttpUpdateFetcher(OkHttpClient client, HttpUrl baseUrl, String scope) {
        this.client = client;
        this.scopeUrl = baseUrl.newBuilder().addPathSegment("v1").addPathSegment(scope).build();
        this.callTimeoutMillis = client.callTimeoutMillis();
    }

    /**
     * The update channel's client: X.509 with {@code platform} plus the publisher pins (never manifest
     * pins), a fresh TLS context per connection, OkHttp's own redirects off (this class follows them under
     * its checks) and OkHttp's own retry off (this class retries GETs itself; the report POST must not be
     * repeated, nor redirected).
     *
     * @param timeoutSeconds the connect and read timeout; the call timeout is twice it
     * @param platform the X.509 trust manager (system store or the app's CA file)
     * @param publisherPins the publisher pins, or empty
     * @return the builder, for a resolver or other additions
     */
    public static OkHttpClient.Builder clientBuilder(long timeoutSeconds, X509TrustManager platform, List<Pin> publisherPins) {
        OkHttpClient.Builder builder = new OkHttpClient.Builder().connectTimeout(timeoutSeconds, TimeUnit.SECONDS)
                .readTimeout(timeoutSeconds, TimeUnit.SECONDS).callTimeout(timeoutSeconds * 2, TimeUnit.SECONDS)
                .followRedirects(false).followSslRedirects(false).retryOnConnectionFailure(false);
        PinionOkHttp.installUpdateChannel(builder, platform, publisherPins);
        return builder;
    }

    /** @param request the request @return its URL: the scope URL, the file's path, the poll token's query for the manifest */
    HttpUrl url(UpdateRequest request) {
        HttpUrl.Builder url = scopeUrl.newBuilder();
        if (request.file.kind == TreeFile.Kind.ROOT) url.addPathSegment("root");
        url.addPathSegment(request.file.kind == TreeFile.Kind.ROOT ? request.file.version + ".json" : request.file.path());
        if (request.pollToken != null) url.encodedQuery(request.pollToken.query());
        return url.build();
    }

    @Override
    public UpdateAnswer fetch(UpdateRequest request) throws UpdateFetchError {
        HttpUrl url = url(request);
        for (int redirects = 0; ; redirects++) {
            Hop hop = get(url, request);
            if (hop.location == null) return hop.answer;
            if (redirects == MAX_REDIRECTS) throw UpdateFetchError.refused("refused: more than " + MAX_REDIRECTS + " redirects");
            url = redirectTarget(url, hop.location);
        }
    }

    /**
     * @param from the URL that answered with a redirect
     * @param location its {@code Location}
     * @return the URL to follow: https, on the publisher's host
     * @throws UpdateFetchError REFUSED for another scheme or host, NETWORK for a Location that is no URL
     */
    private HttpUrl redirectTarget(HttpUrl from, String location) throws UpdateFetchError {
        HttpUrl next = from.resolve(location);
        if (next == null) {
            boolean otherScheme = SCHEME.matcher(location).find() && !location.regionMatches(true, 0, "https:", 0, 6);
            if (otherScheme) throw UpdateFetchError.refused("refused redirect to " + printable(location) + ": not https");
            throw UpdateFetchError.network("invalid Location \"" + printable(location) + "\"");
        }
        if (!next.isHttps()) throw UpdateFetchError.refused("refused redirect to http (" + printable(next.toString()) + ")");
        if (!next.host().equals(scopeUrl.host())) {
            throw UpdateFetchError.refused("refused redirect to " + printable(next.host()) + ": the update channel stays on the publisher's host");
        }
        return next;
    }

    /** @param text server-chosen text @return it with control characters replaced, for messages and logs */
    private static String printable(String text) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length() && i < 200; i++) {
            char c = text.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return out.toString();
    }

    /** One GET (and its retry on a stale connection) of {@code url}. */
    private Hop get(HttpUrl url, UpdateRequest request) throws UpdateFetchError {
        Request.Builder http = new Request.Builder().url(url).get().header("Accept-Encoding", "identity");
        if (request.ifNoneMatch != null) http.header("If-None-Match", request.ifNoneMatch);
        if (request.file.kind == TreeFile.Kind.MANIFEST_PROOF) http.header("Cache-Control", "no-cache");
        Request built = http.build();
        long start = System.nanoTime();
        Call call = client.newCall(built);
        try {
            return execute(call, request.maxBytes);
        } catch (IOException first) {
            // A cancelled call (Updater.stop) is never sent again.
            if (call.isCanceled() || !retryable(first)) throw failure(first);
            OkHttpClient retry = retryClient(start);
            if (retry == null) throw failure(first);
            // The other idle connections are as old as the one that died: close them all, so the retry dials anew.
            client.connectionPool().evictAll();
            try {
                return execute(retry.newCall(built), request.maxBytes);
            } catch (IOException second) {
                throw failure(second);
            }
        }
    }

    /**
     * @return this client (same pool, which the caller empties first) with a call timeout of what is left
     *     of the first attempt's; null when none is left
     */
    private OkHttpClient retryClient(long startNanos) {
        OkHttpClient.Builder builder = client.newBuilder();
        if (callTimeoutMillis > 0) {
            long left = callTimeoutMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
            if (left <= 0) return null;
            builder.callTimeout(left, TimeUnit.MILLISECONDS);
        }
        return builder.build();
    }

    /**
     * @param e the first attempt's failure
     * @return whether a stale connection may explain it: never a timeout or a refusal of this class, never
     *     a handshake, certificate, key or TLS protocol failure (a handshake that failed once is refused, not
     *     retried), never another TLS failure unless it is a reset or end of stream of the socket under an
     *     established connection (how a dropped connection surfaces through the TLS layer)
     */
    static boolean retryable(IOException e) {
        if (e instanceof InterruptedIOException || e instanceof Refusal) return false;
        boolean tls = false;
        boolean socket = false;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SSLHandshakeException || t instanceof SSLPeerUnverifiedException || t instanceof SSLKeyException
                    || t instanceof SSLProtocolException || t instanceof CertificateException) {
                return false;
            }
            if (t instanceof SSLException) tls = true;
            if (t instanceof SocketException || t instanceof EOFException) socket = true;
            if (t.getCause() == t) break;
        }
        return !tls || socket;
    }

    private static UpdateFetchError failure(IOException e) {
        if (e instanceof Refusal) return ((Refusal) e).error;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PinningException) return UpdateFetchError.refused("publisher pins: " + t.getMessage());
        }
        return UpdateFetchError.network(e.getClass().getSimpleName() + ": " + e.getMessage());
    }

    /** Carries a refusal of this class out of {@link #execute} without a retry. */
    private static final class Refusal extends IOException {
        private static final long serialVersionUID = 1L;
        final transient UpdateFetchError error;

        Refusal(UpdateFetchError error) {
            super(error.getMessage());
            this.error = error;
        }
    }

    /** One response: the answer, or a redirect to follow. */
    private static final class Hop {
        final UpdateAnswer answer;
        /** The Location of a 301, 302, 303, 307 or 308, else null. */
        final String location;

        Hop(UpdateAnswer answer, String location) {
            this.answer = answer;
            this.location = location;
        }
    }

    private static Hop execute(Call call, int maxBytes) throws IOException {
        try (Response response = call.execute()) {
            int code = response.code();
            String etag = response.header("ETag");
            long maxAge = maxAge(response.header("Cache-Control"));
            String location = response.header("Location");
            boolean redirect = code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
            // The redirect's body is never read.
            if (redirect && location != null) return new Hop(null, location);
            if (code != 200) return new Hop(new UpdateAnswer(code, etag, new byte[0], maxAge), null);
            String encoding = response.header("Content-Encoding");
            if (encoding != null && !encoding.equalsIgnoreCase("identity")) {
                throw new Refusal(UpdateFetchError.refused("compressed body (Content-Encoding " + encoding + ")"));
            }
            ResponseBody body = response.body();
            if (body == null) return new Hop(new UpdateAnswer(code, etag, new byte[0], maxAge), null);
            if (body.contentLength() > maxBytes) throw new Refusal(UpdateFetchError.tooLarge(maxBytes));
            byte[] bytes = readLimited(body.byteStream(), maxBytes);
            if (bytes == null) throw new Refusal(UpdateFetchError.tooLarge(maxBytes));
            return new Hop(new UpdateAnswer(code, etag, bytes, maxAge), null);
        }
    }

    /** @return the body, or null past maxBytes (the rest is not read) */
    private static byte[] readLimited(InputStream in, int maxBytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[16384];
        int total = 0;
        int n;
        while ((n = in.read(buffer)) >= 0) {
            total += n;
            if (total > maxBytes) return null;
            out.write(buffer, 0, n);
        }
        return out.toByteArray();
    }

    /** @param cacheControl the header @return max-age seconds, or -1 */
    static long maxAge(String cacheControl) {
        if (cacheControl == null) return -1;
        for (String part : cacheControl.toLowerCase(Locale.ROOT).split(",")) {
            String p = part.trim();
            if (p.startsWith("max-age=")) {
                try {
                    return Math.max(0, Long.parseLong(p.substring(8).trim()));
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }
}
