// Test helpers: fixture bytes, a scripted update channel, and times.
package org.pinion.trust;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.pinion.crypto.StrictEd25519;

final class Fixtures {
    static final String SCOPE = "com.example.app";
    static final CryptoProvider CRYPTO = StrictEd25519.INSTANCE;

    private Fixtures() {}

    static byte[] bytes(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name)) {
            if (in == null) throw new IllegalStateException("missing fixture " + name);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Timestamp at(String text) {
        try {
            return Timestamp.parse(text);
        } catch (FormatException e) {
            throw new IllegalStateException(e);
        }
    }

    static Pin pin(int fill) {
        byte[] digest = new byte[32];
        java.util.Arrays.fill(digest, (byte) fill);
        try {
            return Pin.ofDigest(digest);
        } catch (FormatException e) {
            throw new IllegalStateException(e);
        }
    }

    static TrustCore core() throws ClientException { return core("root-1.json"); }

    static TrustCore core(String root) throws ClientException {
        return new TrustCore(SCOPE, bytes(root), CRYPTO, Limits.STANDARD);
    }

    /** A scripted publisher: roots by version, one manifest answer, and a record of requests. */
    static final class Channel implements Fetch.Source {
        final Map<Long, Fetch> roots = new HashMap<>();
        Fetch manifest = Fetch.notModified();
        final List<String> requests = new ArrayList<>();

        Channel serveRoot(long version, String fixture) {
            roots.put(version, Fetch.found(bytes(fixture)));
            return this;
        }

        Channel serveManifest(String fixture) {
            manifest = Fetch.found(bytes(fixture), "\"etag-" + fixture + "\"", -1);
            return this;
        }

        @Override
        public Fetch root(long version) {
            requests.add("root/" + version + ".json");
            return roots.getOrDefault(version, Fetch.notFound());
        }

        @Override
        public Fetch manifest(String ifNoneMatch) {
            requests.add("manifest.json If-None-Match: " + ifNoneMatch);
            return manifest;
        }
    }
}
