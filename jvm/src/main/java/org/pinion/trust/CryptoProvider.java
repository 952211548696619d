// The two primitives the trust core needs, so it stays pure: strict Ed25519 verification and SHA-256.
package org.pinion.trust;

/** Ed25519 verification with libsodium's strictness, key-usability checks, and SHA-256 (FIPS 180-4). */
public interface CryptoProvider {
    /**
     * @param signature 64-byte Ed25519 signature (other lengths fail)
     * @param message the signed bytes
     * @param publicKey 32-byte raw public key (other lengths fail)
     * @return whether the signature verifies with libsodium {@code crypto_sign_verify_detached}'s verdict
     */
    boolean isValidSignature(byte[] signature, byte[] message, byte[] publicKey);

    /**
     * @param publicKey raw key bytes
     * @return whether the key is 32 bytes, canonical, on the curve, not of small order and in the
     *     prime-order subgroup (libsodium {@code crypto_core_ed25519_is_valid_point})
     */
    boolean isUsablePublicKey(byte[] publicKey);

    /** @param bytes any bytes @return the 32-byte SHA-256 digest */
    byte[] sha256(byte[] bytes);
}
