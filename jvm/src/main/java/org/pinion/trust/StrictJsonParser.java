// Strict RFC 8259 JSON parser with the same rules, limits and errors as the Swift one (DESIGN.md §5).
//
// Written here rather than taken from a library: org.json, Jackson and Gson all accept what
// Pinion must refuse (duplicate member names, lone surrogates) or lose the exact text of
// integers. Limits are enforced while reading, so hostile input cannot cause unbounded work.
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;

/**
 * Parses JSON strictly: valid UTF-8 (no BOM), no duplicate member names (compared as Swift
 * compares strings, by canonical equivalence), no lone surrogates, no leading zeros, only
 * whitespace after the value; byte, depth and element limits checked while reading.
 */
public final class StrictJsonParser {
    private final byte[] bytes;
    private final JsonLimits limits;
    private int index;
    /**
     * The path of the value being read, for error messages only: component k is the member name
     * {@code pathNames[k]}, or the array index {@code pathIndexes[k]} when that name is null.
     */
    private String[] pathNames = new String[16];
    private int[] pathIndexes = new int[16];
    private int pathLength;
    /** Whether the last string {@link #parseString(int)} returned is all ASCII (then it is its own NFC form). */
    private boolean lastStringAscii;

    /** Objects with fewer members are checked for duplicates by a scan of the names read (no set). */
    static final int LINEAR_DUPLICATE_SCAN_MEMBERS = 16;

    /** Whether long plain ASCII string values become {@link JsonValue#asciiSlice} values (see {@link #parseWithSlices}). */
    private final boolean slices;

    private StrictJsonParser(byte[] bytes, JsonLimits limits, boolean slices) {
        this.bytes = bytes;
        this.slices = slices;
        this.limits = limits;
    }

    /**
     * Reads 8 bytes of a {@code byte[]} at any offset as one little-endian long, to skip runs of plain
     * characters. Written with shifts rather than a byte-array view {@code VarHandle}, which Android
     * lacks before API 33; HotSpot and ART both merge the loads. Offsets are always checked
     * {@code i + 8 <= length} first, and an out-of-range offset still throws.
     */
    private static long word(byte[] bytes, int offset) {
        return (bytes[offset] & 0xFFL)
                | (bytes[offset + 1] & 0xFFL) << 8
                | (bytes[offset + 2] & 0xFFL) << 16
                | (bytes[offset + 3] & 0xFFL) << 24
                | (bytes[offset + 4] & 0xFFL) << 32
                | (bytes[offset + 5] & 0xFFL) << 40
                | (bytes[offset + 6] & 0xFFL) << 48
                | (bytes[offset + 7] & 0xFFL) << 56;
    }

    private static final long ONES = 0x0101010101010101L;
    private static final long HIGH_BITS = 0x8080808080808080L;

    /**
     * Whether none of the 8 bytes of {@code word} ends or escapes a string or needs a check: no
     * {@code "}, no backslash, no control character (below 0x20), no byte from 0x80 (so the word is
     * ASCII). Exact when it says true: with no high bit set, {@code (x - ONES) & ~x & HIGH_BITS} is
     * non-zero exactly when some byte of x is zero, and {@code (x - 0x20 * ONES) & ~x} when some byte is
     * below 0x20 (the classic "has zero byte" / "has less than" tests; borrows only add false alarms).
     */
    static boolean plainStringWord(long word) {
        long quote = word ^ (0x22 * ONES);
        long backslash = word ^ (0x5C * ONES);
        long special = ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) | ((word - 0x20 * ONES) & ~word) | word;
        return (special & HIGH_BITS) == 0;
    }

    /**
     * @param bytes the document, UTF-8
     * @param limits byte, depth and element limits
     * @return the value tree
     * @throws FormatException with the path of the offending value and the rule broken
     */
    public static JsonValue parse(byte[] bytes, JsonLimits limits) throws FormatException {
        return parse(bytes, limits, false);
    }

    /**
     * {@link #parse} for a caller that reads the tree before anyone changes {@code bytes} and then
     * drops it (Envelope.parse): string values of at least {@link #ASCII_SLICE_MIN_BYTES} plain ASCII
     * bytes are left as {@link JsonValue#asciiSlice} values of {@code bytes} instead of copies.
     * The public {@link #parse} never does this, so its tree owns all its text.
     *
     * @param bytes the document, UTF-8, not changed while the tree is in use
     * @param limits byte, depth and element limits
     * @return the value tree
     * @throws FormatException as {@link #parse}
     */
    static JsonValue parseWithSlices(byte[] bytes, JsonLimits limits) throws FormatException {
        return parse(bytes, limits, true);
    }

    private static JsonValue parse(byte[] bytes, JsonLimits limits, boolean slices) throws FormatException {
        if (bytes.length > limits.maxBytes) {
            throw new FormatException("", FormatRule.TOO_LARGE,
                    bytes.length + " bytes is over the limit of " + limits.maxBytes + " bytes");
        }
        int bad = firstInvalidUtf8Offset(bytes);
        if (bad >= 0) throw new FormatException("", FormatRule.INVALID_UTF8, "invalid UTF-8 at byte " + bad);
        StrictJsonParser parser = new StrictJsonParser(bytes, limits, slices);
        parser.skipWhitespace();
        JsonValue value = parser.parseValue(1);
        parser.skipWhitespace();
        if (parser.index < bytes.length) {
            throw new FormatException("", FormatRule.TRAILING_BYTES,
                    "unexpected bytes after the JSON value at byte " + parser.index);
        }
        return value;
    }

    /** @param bytes any bytes @return offset of the first byte breaking RFC 3629 UTF-8, or -1 */
    static int firstInvalidUtf8Offset(byte[] bytes) {
        int i = 0;
        int count = bytes.length;
        while (i < count) {
            // ASCII runs 8 bytes at a time.
            while (i + 8 <= count && (word(bytes, i) & HIGH_BITS) == 0) i += 8;
            if (i >= count) break;
            int lead = bytes[i] & 0xff;
            if (lead < 0x80) {
                i++;
                continue;
            }
            int length;
            int lower = 0x80;
            int upper = 0xBF;
            if (lead >= 0xC2 && lead <= 0xDF) {
                length = 2;
            } else if (lead == 0xE0) {
                length = 3;
                lower = 0xA0;
            } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
                length = 3;
            } else if (lead == 0xED) {
                length = 3;
                upper = 0x9F;
            } else if (lead == 0xF0) {
                length = 4;
                lower = 0x90;
            } else if (lead >= 0xF1 && lead <= 0xF3) {
                length = 4;
            } else if (lead == 0xF4) {
                length = 4;
                upper = 0x8F;
            } else {
                return i;
            }
            if (i + length > count) return i;
            int second = bytes[i + 1] & 0xff;
            if (second < lower || second > upper) return i;
            for (int k = 2; k < length; k++) {
                if ((bytes[i + k] & 0xC0) != 0x80) return i;
            }
            i += length;
        }
        return -1;
    }

    private String pathText() {
        StringBuilder text = new StringBuilder();
        for (int k = 0; k < pathLength; k++) {
            if (pathNames[k] != null) {
                if (text.length() > 0) text.append('.');
                text.append(pathNames[k]);
            } else {
                text.append('[').append(pathIndexes[k]).append(']');
            }
        }
        return text.toString();
    }

    private void pushPath(String name, int arrayIndex) {
        if (pathLength == pathNames.length) {
            pathNames = java.util.Arrays.copyOf(pathNames, pathLength * 2);
            pathIndexes = java.util.Arrays.copyOf(pathIndexes, pathLength * 2);
        }
        pathNames[pathLength] = name;
        pathIndexes[pathLength] = arrayIndex;
        pathLength++;
    }

    private FormatException fail(FormatRule rule, String detail) {
        return new FormatException(pathText(), rule, detail);
    }

    private FormatException syntax(String expected) {
        return fail(FormatRule.SYNTAX, "JSON syntax error at byte " + index + ": expected " + expected);
    }

    private static final long EIGHT_SPACES = 0x2020202020202020L;

    private void skipWhitespace() {
        // Indentation 8 spaces at a time.
        while (index + 8 <= bytes.length && word(bytes, index) == EIGHT_SPACES) index += 8;
        while (index < bytes.length) {
            byte b = bytes[index];
            if (b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D) {
                index++;
            } else {
                return;
            }
        }
    }

    private JsonValue parseValue(int depth) throws FormatException {
        if (index >= bytes.length) throw syntax("a value");
        byte b = bytes[index];
        switch (b) {
            case '{': return parseObject(depth);
            case '[': return parseArray(depth);
            case '"': {
                int start = index + 1;
                String text = parseString(slices ? ASCII_SLICE_MIN_BYTES : Integer.MAX_VALUE);
                return text != null ? JsonValue.string(text) : JsonValue.asciiSlice(bytes, start, index - 1);
            }
            case 't':
                expectLiteral("true");
                return JsonValue.bool(true);
            case 'f':
                expectLiteral("false");
                return JsonValue.bool(false);
            case 'n':
                expectLiteral("null");
                return JsonValue.NULL;
            default:
                if (b == '-' || (b >= '0' && b <= '9')) return JsonValue.number(parseNumber());
                throw syntax("a value");
        }
    }

    private void expectLiteral(String literal) throws FormatException {
        byte[] expected = literal.getBytes(StandardCharsets.US_ASCII);
        if (index + expected.length > bytes.length) throw syntax(literal);
        for (int k = 0; k < expected.length; k++) {
            if (bytes[index + k] != expected[k]) throw syntax(literal);
        }
        index += expected.length;
    }

    private JsonValue parseObject(int depth) throws FormatException {
        if (depth > limits.maxDepth) {
            throw fail(FormatRule.NESTING_TOO_DEEP, "nesting deeper than " + limits.maxDepth + " levels");
        }
        index++;
        ArrayList<JsonValue.Member> members = new ArrayList<>();
        // The names compared for duplicates, each in NFC (Swift compares strings by canonical
        // equivalence; NFC makes Java agree). An ASCII name is its own NFC form, but a non-ASCII
        // one can normalise to ASCII (U+212A KELVIN SIGN is "K"), so every key is NFC, never raw.
        // A scan of this list for small objects, a set from LINEAR_DUPLICATE_SCAN_MEMBERS on, so
        // a hostile object stays linear.
        ArrayList<String> keys = new ArrayList<>();
        Set<String> keySet = null;
        skipWhitespace();
        if (index < bytes.length && bytes[index] == '}') {
            index++;
            return JsonValue.ownedObject(members);
        }
        while (true) {
            skipWhitespace();
            if (index >= bytes.length || bytes[index] != '"') throw syntax("a member name");
            String name = parseString(Integer.MAX_VALUE);
            String key = lastStringAscii ? name : Normalizer.normalize(name, Normalizer.Form.NFC);
            boolean duplicate;
            if (keySet != null) {
                duplicate = !keySet.add(key);
            } else {
                duplicate = keys.contains(key);
                keys.add(key);
                if (keys.size() >= LINEAR_DUPLICATE_SCAN_MEMBERS) keySet = new HashSet<>(keys);
            }
            if (duplicate) {
                throw fail(FormatRule.DUPLICATE_KEY, "duplicate member \"" + name + "\"");
            }
            if (members.size() >= limits.maxElements) {
                throw fail(FormatRule.TOO_MANY_ELEMENTS, "more than " + limits.maxElements + " elements");
            }
            skipWhitespace();
            if (index >= bytes.length || bytes[index] != ':') throw syntax("':'");
            index++;
            skipWhitespace();
            pushPath(name, 0);
            JsonValue value = parseValue(depth + 1);
            pathLength--;
            members.add(new JsonValue.Member(name, value));
            skipWhitespace();
            if (index >= bytes.length) throw syntax("',' or '}'");
            if (bytes[index] == ',') {
                index++;
                continue;
            }
            if (bytes[index] == '}') {
                index++;
                return JsonValue.ownedObject(members);
            }
            throw syntax("',' or '}'");
        }
    }

    private int arrayLimit() {
        if (pathLength > 0 && pathNames[pathLength - 1] != null) {
            Integer limit = limits.maxElementsByMember.get(pathNames[pathLength - 1]);
            if (limit != null) return Math.min(limit, limits.maxElements);
        }
        return limits.maxElements;
    }

    private JsonValue parseArray(int depth) throws FormatException {
        int limit = arrayLimit();
        if (depth > limits.maxDepth) {
            throw fail(FormatRule.NESTING_TOO_DEEP, "nesting deeper than " + limits.maxDepth + " levels");
        }
        index++;
        ArrayList<JsonValue> elements = new ArrayList<>();
        skipWhitespace();
        if (index < bytes.length && bytes[index] == ']') {
            index++;
            return JsonValue.ownedArray(elements);
        }
        while (true) {
            skipWhitespace();
            if (elements.size() >= limit) {
                throw fail(FormatRule.TOO_MANY_ELEMENTS, "more than " + limit + " elements");
            }
            pushPath(null, elements.size());
            JsonValue value = parseValue(depth + 1);
            pathLength--;
            elements.add(value);
            skipWhitespace();
            if (index >= bytes.length) throw syntax("',' or ']'");
            if (bytes[index] == ',') {
                index++;
                continue;
            }
            if (bytes[index] == ']') {
                index++;
                return JsonValue.ownedArray(elements);
            }
            throw syntax("',' or ']'");
        }
    }

    private static boolean isDigit(byte b) { return b >= '0' && b <= '9'; }

    private String parseNumber() throws FormatException {
        int start = index;
        if (bytes[index] == '-') index++;
        if (index >= bytes.length || !isDigit(bytes[index])) throw syntax("a digit");
        if (bytes[index] == '0') {
            index++;
            if (index < bytes.length && isDigit(bytes[index])) {
                throw fail(FormatRule.LEADING_ZERO, "number with a leading zero");
            }
        } else {
            while (index < bytes.length && isDigit(bytes[index])) index++;
        }
        if (index < bytes.length && bytes[index] == '.') {
            index++;
            if (index >= bytes.length || !isDigit(bytes[index])) throw syntax("a digit after '.'");
            while (index < bytes.length && isDigit(bytes[index])) index++;
        }
        if (index < bytes.length && (bytes[index] == 'e' || bytes[index] == 'E')) {
            index++;
            if (index < bytes.length && (bytes[index] == '+' || bytes[index] == '-')) index++;
            if (index >= bytes.length || !isDigit(bytes[index])) throw syntax("a digit in the exponent");
            while (index < bytes.length && isDigit(bytes[index])) index++;
        }
        return new String(bytes, start, index - start, StandardCharsets.US_ASCII);
    }

    /**
     * String values of at least this many bytes, all ASCII and without escapes, become
     * {@link JsonValue#asciiSlice} values of the document (an envelope's payload), not Strings.
     */
    static final int ASCII_SLICE_MIN_BYTES = 4096;

    /**
     * Reads a string; sets {@link #lastStringAscii}. Returns null, with {@link #index} after the
     * closing quote, for a string of at least {@code sliceMinBytes} ASCII bytes without escapes
     * (the caller keeps it as a slice of the document). A string without escapes is one {@code new
     * String} of its bytes (Latin-1 when all ASCII: the same characters, no UTF-8 decoding), with
     * no {@code StringBuilder}; escaped strings append whole runs between escapes. The input was
     * UTF-8-validated up front and a run always ends at an ASCII byte, so each run decodes alone.
     */
    private String parseString(int sliceMinBytes) throws FormatException {
        index++;
        StringBuilder text = null;
        boolean ascii = true;
        int runStart = index;
        while (true) {
            while (index + 8 <= bytes.length && plainStringWord(word(bytes, index))) index += 8;
            if (index >= bytes.length) throw syntax("'\"' to end the string");
            byte b = bytes[index];
            if (b == '"') {
                if (text == null && ascii && index - runStart >= sliceMinBytes) {
                    // Left as a slice of the document: the caller makes an asciiSlice value.
                    index++;
                    lastStringAscii = true;
                    return null;
                }
                String run = new String(bytes, runStart, index - runStart,
                        ascii ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
                index++;
                lastStringAscii = ascii;
                if (text == null) return run;
                return text.append(run).toString();
            }
            if (b < 0) {
                ascii = false;
            } else if (b < 0x20) {
                throw syntax("an escaped control character");
            } else if (b == '\\') {
                if (text == null) text = new StringBuilder();
                text.append(new String(bytes, runStart, index - runStart, StandardCharsets.UTF_8));
                index++;
                if (!parseEscape(text)) ascii = false;
                runStart = index;
                continue;
            }
            index++;
        }
    }

    /** @return whether the escaped character is ASCII */
    private boolean parseEscape(StringBuilder text) throws FormatException {
        if (index >= bytes.length) throw syntax("an escape character");
        byte b = bytes[index];
        index++;
        switch (b) {
            case '"': text.append('"'); return true;
            case '\\': text.append('\\'); return true;
            case '/': text.append('/'); return true;
            case 'b': text.append('\b'); return true;
            case 'f': text.append('\f'); return true;
            case 'n': text.append('\n'); return true;
            case 'r': text.append('\r'); return true;
            case 't': text.append('\t'); return true;
            case 'u': {
                int first = parseHex4();
                if (first >= 0xDC00 && first <= 0xDFFF) {
                    throw fail(FormatRule.LONE_SURROGATE, "lone UTF-16 surrogate in \\u escape");
                }
                if (first >= 0xD800 && first <= 0xDBFF) {
                    if (!(index + 1 < bytes.length && bytes[index] == '\\' && bytes[index + 1] == 'u')) {
                        throw fail(FormatRule.LONE_SURROGATE, "lone UTF-16 surrogate in \\u escape");
                    }
                    index += 2;
                    int second = parseHex4();
                    if (second < 0xDC00 || second > 0xDFFF) {
                        throw fail(FormatRule.LONE_SURROGATE, "lone UTF-16 surrogate in \\u escape");
                    }
                    text.append((char) first).append((char) second);
                    return false;
                }
                text.append((char) first);
                return first < 0x80;
            }
            default:
                index--;
                throw syntax("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        }
    }

    private int parseHex4() throws FormatException {
        if (index + 4 > bytes.length) throw syntax("4 hex digits");
        int value = 0;
        for (int k = 0; k < 4; k++) {
            byte b = bytes[index];
            int digit;
            if (b >= '0' && b <= '9') {
                digit = b - '0';
            } else if (b >= 'a' && b <= 'f') {
                digit = b - 'a' + 10;
            } else if (b >= 'A' && b <= 'F') {
                digit = b - 'A' + 10;
            } else {
                throw syntax("4 hex digits");
            }
            value = (value << 4) | digit;
            index++;
        }
        return value;
    }
}
