// Canonical padded base64 (RFC 4648 §4) and lowercase hex, the only spellings documents use.
package org.pinion.trust;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;

/** Canonical base64 and lowercase hex: one value has exactly one accepted spelling. */
public final class Codec {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Codec() {}

    /** The 6-bit value of each byte of the RFC 4648 §4 alphabet; -1 for every other byte. */
    private static final byte[] BASE64_VALUES = base64Values();

    private static byte[] base64Values() {
        byte[] values = new byte[256];
        Arrays.fill(values, (byte) -1);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int i = 0; i < alphabet.length(); i++) values[alphabet.charAt(i)] = (byte) i;
        return values;
    }

    /**
     * @param text candidate base64
     * @return the bytes, or null unless {@code text} is canonical padded base64 (re-encoding gives
     *     back the exact text: no missing padding, non-zero trailing bits, whitespace or URL alphabet)
     */
    public static byte[] decodeBase64Canonical(String text) {
        return decodeBase64Canonical(text, 0, text.length());
    }

    /**
     * Decodes {@code text[start..<end]} checking canonical form directly (the length a multiple of
     * 4, only the RFC 4648 §4 alphabet, one or two {@code =} only at the end, zero bits under the
     * padding) instead of decoding, re-encoding and comparing; it accepts exactly the spellings
     * {@link java.util.Base64} re-encodes to themselves (tested against that rule).
     *
     * @param text holds the candidate base64
     * @param start first character, 0-based
     * @param end one past the last character
     * @return the bytes, or null unless that range is canonical padded base64
     */
    static byte[] decodeBase64Canonical(String text, int start, int end) {
        int length = end - start;
        if (length % 4 != 0) return null;
        if (length == 0) return new byte[0];
        if (length <= SHORT_BASE64) return decodeShortBase64Canonical(text, start, end);
        // Long inputs (an envelope's payload) go through the JDK's decoder, the fastest here. It
        // refuses every character outside the alphabet and '=' anywhere but a 4-character unit's
        // end, and accepts missing padding (excluded by the length) and non-zero bits under the
        // padding, which are checked here.
        int padding = text.charAt(end - 1) != '=' ? 0 : text.charAt(end - 2) != '=' ? 1 : 2;
        if (padding == 1 && (value(text.charAt(end - 2)) & 0x03) != 0) return null;
        if (padding == 2 && (value(text.charAt(end - 3)) & 0x0f) != 0) return null;
        try {
            return Base64.getDecoder().decode(start == 0 && end == text.length() ? text : text.substring(start, end));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * {@link #decodeBase64Canonical(String)} of a JSON string value; an {@link JsonValue#asciiSlice}
     * (an envelope's payload) is decoded from the document's bytes in place, with the same rule.
     *
     * @param value a JSON string
     * @return the bytes, or null unless the string is canonical padded base64
     */
    static byte[] decodeBase64Canonical(JsonValue value) {
        if (!value.isAsciiSlice()) return decodeBase64Canonical(value.text());
        return decodeBase64Canonical(value.sliceSource(), value.sliceStart(), value.sliceEnd());
    }

    /**
     * {@link #decodeBase64Canonical(String, int, int)} over ASCII bytes {@code bytes[start..<end]}
     * (each byte is the character of that code): the same checks, then the JDK's decoder reading
     * the array in place through a ByteBuffer (the same decoder as for a String, without the copy).
     *
     * @param bytes holds the candidate base64, never written
     * @param start first byte, 0-based
     * @param end one past the last byte
     * @return the bytes, or null unless that range is canonical padded base64
     */
    static byte[] decodeBase64Canonical(byte[] bytes, int start, int end) {
        int length = end - start;
        if (length % 4 != 0) return null;
        if (length == 0) return new byte[0];
        int padding = bytes[end - 1] != '=' ? 0 : bytes[end - 2] != '=' ? 1 : 2;
        if (padding == 1 && (BASE64_VALUES[bytes[end - 2] & 0xff] & 0x03) != 0) return null;
        if (padding == 2 && (BASE64_VALUES[bytes[end - 3] & 0xff] & 0x0f) != 0) return null;
        ByteBuffer decoded;
        try {
            decoded = Base64.getDecoder().decode(ByteBuffer.wrap(bytes, start, length));
        } catch (IllegalArgumentException e) {
            return null;
        }
        byte[] out = decoded.array();
        if (decoded.arrayOffset() == 0 && decoded.position() == 0 && decoded.remaining() == out.length) return out;
        return Arrays.copyOfRange(out, decoded.arrayOffset() + decoded.position(),
                decoded.arrayOffset() + decoded.position() + decoded.remaining());
    }

    /** Up to this many characters (a pin's 44 among them) are read in place, with no copy as bytes. */
    static final int SHORT_BASE64 = 64;

    /** {@link #decodeBase64Canonical(String, int, int)} reading characters in place (a non-empty multiple of 4). */
    private static byte[] decodeShortBase64Canonical(String text, int start, int end) {
        int padding = text.charAt(end - 1) != '=' ? 0 : text.charAt(end - 2) != '=' ? 1 : 2;
        byte[] out = new byte[(end - start) / 4 * 3 - padding];
        int fullEnd = padding == 0 ? end : end - 4;
        int o = 0;
        for (int i = start; i < fullEnd; i += 4) {
            int a = value(text.charAt(i));
            int b = value(text.charAt(i + 1));
            int c = value(text.charAt(i + 2));
            int d = value(text.charAt(i + 3));
            if ((a | b | c | d) < 0) return null;
            int group = (a << 18) | (b << 12) | (c << 6) | d;
            out[o] = (byte) (group >> 16);
            out[o + 1] = (byte) (group >> 8);
            out[o + 2] = (byte) group;
            o += 3;
        }
        if (padding == 0) return out;
        int a = value(text.charAt(end - 4));
        int b = value(text.charAt(end - 3));
        if ((a | b) < 0) return null;
        if (padding == 2) {
            if ((b & 0x0f) != 0) return null;
            out[o] = (byte) ((a << 2) | (b >> 4));
            return out;
        }
        int c = value(text.charAt(end - 2));
        if (c < 0 || (c & 0x03) != 0) return null;
        int group = (a << 12) | (b << 6) | c;
        out[o] = (byte) (group >> 10);
        out[o + 1] = (byte) (group >> 2);
        return out;
    }

    private static int value(char c) { return c < 256 ? BASE64_VALUES[c] : -1; }

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
