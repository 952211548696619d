// SHA-256 (FIPS 180-4) from the platform's MessageDigest, present on every JVM and Android.
package org.pinion.crypto;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 digests. */
public final class Sha256 {
    private Sha256() {}

    /** @param bytes any bytes @return the 32-byte digest */
    public static byte[] digest(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            // Every Java SE and Android platform must provide SHA-256 (MessageDigest spec).
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
