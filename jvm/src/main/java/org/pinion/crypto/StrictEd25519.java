// Ed25519 verification with libsodium 1.0.18's verdicts: strict pre-checks, then BouncyCastle's RFC 8032 verify.
package org.pinion.crypto;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.pinion.trust.CryptoProvider;

/**
 * The {@link CryptoProvider} of the JVM SDK. Verification refuses, before BouncyCastle's
 * cofactorless RFC 8032 check, exactly what libsodium's {@code crypto_sign_verify_detached} refuses
 * and BouncyCastle accepts: wrong lengths, S >= L, non-canonical or small-order A, non-canonical or
 * small-order R. Key usability is libsodium's {@code crypto_core_ed25519_is_valid_point}.
 */
public final class StrictEd25519 implements CryptoProvider {
    /** The shared instance (thread-safe; its only state is the cache of checked public keys below). */
    public static final StrictEd25519 INSTANCE = new StrictEd25519();

    /** At most this many public keys are remembered as checked; the cache is emptied when full. */
    static final int CHECKED_KEYS_MAX = 64;

    /**
     * Public keys that passed the A checks (canonical encoding, decodes to a point, not of small
     * order), by their 32 bytes. Those checks are a pure function of the bytes, so remembering a
     * pass changes no verdict; it saves the two BigInteger point operations (about 60 µs, as much
     * as the rest of a small manifest's verification) on every manifest signed by the same root key.
     * Only passes are stored, a refused key is checked again each time.
     */
    private final ConcurrentHashMap<ByteBuffer, Boolean> checkedKeys = new ConcurrentHashMap<>();

    /** A verifier with an empty key cache (the tests use one to compare cold and warm verdicts). */
    StrictEd25519() {}

    @Override
    public boolean isValidSignature(byte[] signature, byte[] message, byte[] publicKey) {
        if (signature == null || message == null || publicKey == null) return false;
        if (signature.length != 64 || publicKey.length != 32) return false;
        byte[] r = java.util.Arrays.copyOfRange(signature, 0, 32);
        byte[] s = java.util.Arrays.copyOfRange(signature, 32, 64);
        if (!Ed25519Points.isCanonicalScalar(s)) return false;
        if (!Ed25519Points.isCanonical(r)) return false;
        BigInteger[] rPoint = Ed25519Points.decode(r);
        if (rPoint == null || Ed25519Points.hasSmallOrder(rPoint)) return false;
        if (!isCheckedPublicKey(publicKey)) return false;
        try {
            return Ed25519.verify(signature, 0, publicKey, 0, message, 0, message.length);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** @return whether A is canonical, decodes and is not of small order (remembered when it is) */
    private boolean isCheckedPublicKey(byte[] publicKey) {
        ByteBuffer key = ByteBuffer.wrap(publicKey.clone());
        if (checkedKeys.containsKey(key)) return true;
        if (!Ed25519Points.isCanonical(publicKey)) return false;
        BigInteger[] a = Ed25519Points.decode(publicKey);
        if (a == null || Ed25519Points.hasSmallOrder(a)) return false;
        if (checkedKeys.size() >= CHECKED_KEYS_MAX) checkedKeys.clear();
        checkedKeys.put(key, Boolean.TRUE);
        return true;
    }

    /** @return how many public keys are remembered as checked (for tests) */
    int checkedKeyCount() { return checkedKeys.size(); }

    @Override
    public boolean isUsablePublicKey(byte[] publicKey) {
        if (publicKey == null || publicKey.length != 32 || !Ed25519Points.isCanonical(publicKey)) return false;
        BigInteger[] point = Ed25519Points.decode(publicKey);
        return point != null && !Ed25519Points.hasSmallOrder(point) && Ed25519Points.inPrimeOrderSubgroup(point);
    }

    @Override
    public byte[] sha256(byte[] bytes) { return Sha256.digest(bytes); }
}
