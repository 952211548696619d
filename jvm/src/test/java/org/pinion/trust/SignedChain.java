// Test-side signer: roots and manifests signed with BouncyCastle from fixed seeds, for what the CLI cannot make.
//
// The Swift CLI does not write pinsRoleSince yet and takes seconds per document, so the
// pinsRoleSince and 256-rotation scenarios sign their documents here, deterministically.
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.math.ec.rfc8032.Ed25519;

public final class SignedChain {
    public static final String SCOPE = "org.pinion.test";
    private final List<byte[]> roots = new ArrayList<>();

    static byte[] seed(int n) {
        byte[] seed = new byte[32];
        java.util.Arrays.fill(seed, (byte) n);
        return seed;
    }

    static byte[] publicKey(int n) {
        byte[] pk = new byte[32];
        Ed25519.generatePublicKey(seed(n), 0, pk, 0);
        return pk;
    }

    static String keyId(int n) { return Codec.hex(Fixtures.CRYPTO.sha256(publicKey(n))); }

    public static byte[] envelope(PayloadKind kind, byte[] payload, int... signers) {
        byte[] pae = Envelope.pae(kind.mediaType, payload);
        List<JsonValue> sigs = new ArrayList<>();
        for (int signer : signers) {
            byte[] sig = new byte[64];
            Ed25519.sign(seed(signer), 0, pae, 0, pae.length, sig, 0);
            sigs.add(JsonValue.object(List.of(new JsonValue.Member("keyid", JsonValue.string(keyId(signer))),
                    new JsonValue.Member("sig", JsonValue.string(Codec.base64(sig))))));
        }
        return JsonWriter.write(JsonValue.object(List.of(new JsonValue.Member("payloadType", JsonValue.string(kind.mediaType)),
                new JsonValue.Member("payload", JsonValue.string(Codec.base64(payload))),
                new JsonValue.Member("signatures", JsonValue.array(sigs)))));
    }

    static JsonValue role(int[] keys, int threshold) {
        List<JsonValue> ids = new ArrayList<>();
        for (int k : keys) ids.add(JsonValue.string(keyId(k)));
        return JsonValue.object(List.of(new JsonValue.Member("keyids", JsonValue.array(ids)),
                new JsonValue.Member("threshold", JsonValue.number(threshold))));
    }

    /** A root payload; pinsRoleSince 0 means absent. */
    public static byte[] rootPayload(String scope, long version, long pinsRoleSince, long cap, int[] rootKeys, int[] pinsKeys) {
        List<JsonValue.Member> keys = new ArrayList<>();
        java.util.Set<Integer> all = new java.util.TreeSet<>();
        for (int k : rootKeys) all.add(k);
        for (int k : pinsKeys) all.add(k);
        for (int k : all) {
            keys.add(new JsonValue.Member(keyId(k), JsonValue.object(List.of(new JsonValue.Member("type", JsonValue.string("ed25519")),
                    new JsonValue.Member("public", JsonValue.string(Codec.base64(publicKey(k))))))));
        }
        List<JsonValue.Member> members = new ArrayList<>(List.of(new JsonValue.Member("type", JsonValue.string("pinion.root")),
                new JsonValue.Member("specVersion", JsonValue.number(1)), new JsonValue.Member("scope", JsonValue.string(scope)),
                new JsonValue.Member("version", JsonValue.number(version)),
                new JsonValue.Member("issuedAt", JsonValue.string("2026-01-01T00:00:00Z")),
                new JsonValue.Member("expiresAt", JsonValue.string("2028-01-01T00:00:00Z")),
                new JsonValue.Member("maxManifestLifetime", JsonValue.number(cap))));
        if (pinsRoleSince > 0) members.add(new JsonValue.Member("pinsRoleSince", JsonValue.number(pinsRoleSince)));
        members.add(new JsonValue.Member("keys", JsonValue.object(keys)));
        members.add(new JsonValue.Member("roles", JsonValue.object(List.of(new JsonValue.Member("root", role(rootKeys, 1)),
                new JsonValue.Member("pins", role(pinsKeys, 1))))));
        return JsonWriter.write(JsonValue.object(members));
    }

    static byte[] manifestPayload(String scope, long rootVersion, long version, String revoked) {
        String text = "{\"type\": \"pinion.pins\", \"specVersion\": 1, \"scope\": \"" + scope + "\", \"rootVersion\": " + rootVersion
                + ", \"version\": " + version + ", \"issuedAt\": \"2026-06-01T00:00:00Z\", \"expiresAt\": \"2026-06-30T00:00:00Z\","
                + " \"domains\": [{\"name\": \"api.example.com\", \"pins\": [\"" + Fixtures.pin(1) + "\"]}],"
                + " \"revokedPins\": [" + (revoked == null ? "" : "\"" + revoked + "\"") + "]}";
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Roots 1 ... n of one scope: root key 1, pins key 2, pinsRoleSince 1 throughout. */
    static SignedChain create(int n) {
        SignedChain chain = new SignedChain();
        for (int v = 1; v <= n; v++) {
            chain.roots.add(envelope(PayloadKind.ROOT, rootPayload(SCOPE, v, 1, 2_592_000, new int[] {1}, new int[] {2}), 1));
        }
        return chain;
    }

    byte[] root(long version) { return roots.get((int) version - 1); }
}
