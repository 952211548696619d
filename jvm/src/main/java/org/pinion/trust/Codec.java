// Canonical padded base64 (RFC 4648 §4) and lowercase hex, the only spellings documents use.
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/** Canonical base64 and lowercase hex: one value has exactly one accepted spelling. */
public final class Codec {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Codec() {}

    /**
     * @param text candidate base64
     * @return the bytes, or null unless {@code text} is canonical padded base64 (re-encoding gives
     *     back the exact text: no missing padding, non-zero trailing bits, whitespace or URL alphabet)
     */
    public static byte[] decodeBase64Canonical(String text) {
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(text.getBytes(StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (!Base64.getEncoder().encodeToString(decoded).equals(text)) return null;
        return decoded;
    }

    /** @param bytes any bytes @return padded base64 */
    public static String base64(byte[] bytes) { return Base64.getEncoder().encodeToString(bytes); }

    /** @param bytes any bytes @return two lowercase hex digits per byte */
    public static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    /** @param text candidate hex @return the bytes, or null unless lowercase hex of even length */
    public static byte[] decodeHexLowercase(String text) {
        if (text.length() % 2 != 0) return null;
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int high = nibble(text.charAt(2 * i));
            int low = nibble(text.charAt(2 * i + 1));
            if (high < 0 || low < 0) return null;
            out[i] = (byte) ((high << 4) | low);
        }
        return out;
    }

    private static int nibble(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    }

    /** @param a bytes @param b bytes @return whether equal */
    public static boolean same(byte[] a, byte[] b) { return Arrays.equals(a, b); }
}
