// The update channel over OkHttp: root/{n}.json, a conditional GET of manifest.json and manifest.proof, size-limited while reading.
package org.pinion.update;

import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.pinion.trust.Fetch;
import org.pinion.trust.log.TlogProof;

/**
 * Fetches {@code {base}v1/{scope}/root/{n}.json} and {@code manifest.json} (DESIGN.md §6, §9) with
 * the update channel's own client (X.509 plus optional publisher pins; manifest pins never apply).
 * Bodies are read up to the envelope limit and refused past it; a compressed body is a failure.
 */
public final class HttpFetcher implements Fetch.Source {
    private final OkHttpClient client;
    private final HttpUrl scopeUrl;
    private final int maxBytes;

    /**
     * @param client the update channel's client
     * @param baseUrl the publisher's server root (https)
     * @param scope the scope
     * @param maxBytes the envelope limit
     */
    public HttpFetcher(OkHttpClient client, HttpUrl baseUrl, String scope, int maxBytes) {
        this.client = client;
        this.scopeUrl = baseUrl.newBuilder().addPathSegment("v1").addPathSegment(scope).build();
        this.maxBytes = maxBytes;
    }

    @Override
    public Fetch root(long version) {
        return get(scopeUrl.newBuilder().addPathSegment("root").addPathSegment(version + ".json").build(), null, true);
    }

    @Override
    public Fetch manifest(String ifNoneMatch) {
        return get(scopeUrl.newBuilder().addPathSegment("manifest.json").build(), ifNoneMatch, false);
    }

    /**
     * {@code manifest.proof} (docs/DESIGN.md §12), never conditional and with {@code Cache-Control: no-cache}.
     * At most {@link TlogProof#DEFAULT_MAX_BYTES} + 1 bytes are read: a longer body reaches the trust core
     * cut there, which refuses it as {@code log-proof-too-large} without reading the rest.
     */
    @Override
    public Fetch proof() {
        return get(scopeUrl.newBuilder().addPathSegment("manifest.proof").build(), null, true, TlogProof.DEFAULT_MAX_BYTES, true);
    }

    private Fetch get(HttpUrl url, String ifNoneMatch, boolean notFoundEndsChain) {
        return get(url, ifNoneMatch, notFoundEndsChain, maxBytes, false);
    }

    private Fetch get(HttpUrl url, String ifNoneMatch, boolean notFoundEndsChain, int maxBytes, boolean cutOversized) {
        Request.Builder request = new Request.Builder().url(url).header("Accept-Encoding", "identity");
        if (ifNoneMatch != null) request.header("If-None-Match", ifNoneMatch);
        if (cutOversized) request.header("Cache-Control", "no-cache");
        try (Response response = client.newCall(request.build()).execute()) {
            int code = response.code();
            if (code == 404) return notFoundEndsChain ? Fetch.notFound() : Fetch.failed("HTTP 404");
            if (code == 304 && ifNoneMatch != null) return Fetch.notModified();
            if (code != 200) return Fetch.failed("HTTP " + code);
            String encoding = response.header("Content-Encoding");
            if (encoding != null && !encoding.equalsIgnoreCase("identity")) {
                return Fetch.failed("compressed body (Content-Encoding " + encoding + ") refused");
            }
            ResponseBody body = response.body();
            if (body == null) return Fetch.failed("no body");
            if (!cutOversized && body.contentLength() > maxBytes) {
                return Fetch.failed("body of " + body.contentLength() + " bytes is over the limit of " + maxBytes);
            }
            byte[] bytes = readLimited(body.byteStream(), maxBytes, cutOversized);
            if (bytes == null) return Fetch.failed("body over the limit of " + maxBytes + " bytes");
            return Fetch.found(bytes, response.header("ETag"), maxAge(response.header("Cache-Control")));
        } catch (IOException e) {
            return Fetch.failed(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** @return the body, null past maxBytes, or with {@code cut} its first maxBytes + 1 bytes */
    private static byte[] readLimited(InputStream in, int maxBytes, boolean cut) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buffer = new byte[16384];
        int total = 0;
        int n;
        while ((n = in.read(buffer)) >= 0) {
            total += n;
            if (total > maxBytes) {
                if (!cut) return null;
                out.write(buffer, 0, n - (total - maxBytes - 1));
                return out.toByteArray();
            }
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
