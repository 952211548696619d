// The strict parser's refusals (DESIGN.md §5): the table of Tests/PinionCoreTests/StrictParserTests.swift, same paths and words.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

public class StrictParserTest {
    static final String PIN1 = Fixtures.pin(1).toString();
    static final String PIN2 = Fixtures.pin(2).toString();
    static final String BASE = "{\"type\":\"pinion.pins\",\"specVersion\":1,\"scope\":\"com.example.app\",\"rootVersion\":1,\"version\":7,"
            + "\"issuedAt\":\"2026-12-01T09:00:00Z\",\"expiresAt\":\"2026-12-31T09:00:00Z\","
            + "\"domains\":[{\"name\":\"api.example.com\",\"pins\":[\"" + PIN1 + "\",\"" + PIN2 + "\"]}],\"revokedPins\":[]}";
    static final String MAX = "integer out of range 1...9007199254740991";

    static String domain(String name) { return "{\"name\":\"" + name + "\",\"pins\":[\"" + PIN1 + "\",\"" + PIN2 + "\"]}"; }

    static final class Bad {
        final String name;
        final byte[] bytes;
        final String path;
        final FormatRule rule;
        final String detail;
        Limits limits = Limits.STANDARD;

        Bad(String name, byte[] bytes, String path, FormatRule rule, String detail) {
            this.name = name;
            this.bytes = bytes;
            this.path = path;
            this.rule = rule;
            this.detail = detail;
        }
    }

    static final List<Bad> TABLE = new ArrayList<>();

    static void replace(String name, String old, String replacement, String path, FormatRule rule, String detail) {
        if (!BASE.contains(old)) throw new IllegalStateException("fixture text not found: " + old);
        TABLE.add(new Bad(name, BASE.replaceFirst(java.util.regex.Pattern.quote(old), java.util.regex.Matcher.quoteReplacement(replacement))
                .getBytes(StandardCharsets.UTF_8), path, rule, detail));
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) out.writeBytes(p);
        return out.toByteArray();
    }

    static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    static {
        byte[] prefix = utf8("{\"type\":\"pinion.pins\",\"scope\":\"com.exa");
        int n = utf8(BASE).length;
        replace("duplicate member", "\"version\":7,", "\"version\":7,\"version\":8,", "", FormatRule.DUPLICATE_KEY, "duplicate member \"version\"");
        TABLE.add(new Bad("trailing bytes", utf8(BASE + " x"), "", FormatRule.TRAILING_BYTES, "unexpected bytes after the JSON value at byte " + (n + 1)));
        TABLE.add(new Bad("second JSON value", utf8(BASE + "{}"), "", FormatRule.TRAILING_BYTES, "unexpected bytes after the JSON value at byte " + n));
        TABLE.add(new Bad("invalid UTF-8", concat(prefix, new byte[] {(byte) 0xFF}, utf8("mple\"}")), "", FormatRule.INVALID_UTF8, "invalid UTF-8 at byte " + prefix.length));
        TABLE.add(new Bad("overlong UTF-8", concat(prefix, new byte[] {(byte) 0xC0, (byte) 0xAF}, utf8("mple\"}")), "", FormatRule.INVALID_UTF8, "invalid UTF-8 at byte " + prefix.length));
        TABLE.add(new Bad("encoded surrogate", concat(prefix, new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, utf8("mple\"}")), "", FormatRule.INVALID_UTF8, "invalid UTF-8 at byte " + prefix.length));
        replace("lone high surrogate", "\"com.example.app\"", "\"com\\ud800\"", "scope", FormatRule.LONE_SURROGATE, "lone UTF-16 surrogate in \\u escape");
        replace("lone low surrogate", "\"com.example.app\"", "\"\\udc00x\"", "scope", FormatRule.LONE_SURROGATE, "lone UTF-16 surrogate in \\u escape");
        replace("version 2^53", "\"version\":7", "\"version\":9007199254740992", "version", FormatRule.INTEGER_OUT_OF_RANGE, MAX);
        replace("version 2^64", "\"version\":7", "\"version\":18446744073709551616", "version", FormatRule.INTEGER_OUT_OF_RANGE, MAX);
        replace("version 0", "\"version\":7", "\"version\":0", "version", FormatRule.INTEGER_OUT_OF_RANGE, MAX);
        replace("negative version", "\"version\":7", "\"version\":-7", "version", FormatRule.INTEGER_OUT_OF_RANGE, MAX);
        replace("fractional version", "\"version\":7", "\"version\":7.5", "version", FormatRule.NOT_AN_INTEGER, "expected an integer without fraction or exponent");
        replace("version 7.0", "\"version\":7", "\"version\":7.0", "version", FormatRule.NOT_AN_INTEGER, "expected an integer without fraction or exponent");
        replace("exponent version", "\"version\":7", "\"version\":7e0", "version", FormatRule.NOT_AN_INTEGER, "expected an integer without fraction or exponent");
        replace("leading zero", "\"version\":7", "\"version\":07", "version", FormatRule.LEADING_ZERO, "number with a leading zero");
        replace("version as a string", "\"version\":7", "\"version\":\"7\"", "version", FormatRule.WRONG_TYPE, "expected an integer");
        String time = "not an RFC 3339 UTC time like 2026-11-30T09:00:00Z (";
        replace("malformed time", "2026-12-01T09:00:00Z", "2026-12-01 09:00:00Z", "issuedAt", FormatRule.INVALID_TIME, time + "separators must be - T :)");
        replace("non-UTC time", "2026-12-01T09:00:00Z", "2026-12-01T09:00:00+01:00", "issuedAt", FormatRule.INVALID_TIME, time + "fractions and offsets are not allowed)");
        replace("lowercase z", "2026-12-01T09:00:00Z", "2026-12-01T09:00:00z", "issuedAt", FormatRule.INVALID_TIME, time + "must end with Z (UTC))");
        replace("fractional seconds", "2026-12-01T09:00:00Z", "2026-12-01T09:00:00.5Z", "issuedAt", FormatRule.INVALID_TIME, time + "fractions and offsets are not allowed)");
        replace("February 30", "2026-12-01T09:00:00Z", "2026-02-30T09:00:00Z", "issuedAt", FormatRule.INVALID_TIME, time + "no such date or time)");
        replace("hour 24", "2026-12-01T09:00:00Z", "2026-12-01T24:00:00Z", "issuedAt", FormatRule.INVALID_TIME, time + "no such date or time)");
        replace("second 60", "2026-12-01T09:00:00Z", "2026-12-31T23:59:60Z", "issuedAt", FormatRule.INVALID_TIME, time + "no such date or time)");
        replace("year before 1970", "2026-12-01T09:00:00Z", "1582-10-10T00:00:00Z", "issuedAt", FormatRule.INVALID_TIME, time + "years before 1970 are not allowed)");
        replace("expiry before issue", "2026-12-31T09:00:00Z", "2026-11-01T09:00:00Z", "expiresAt", FormatRule.EXPIRES_NOT_AFTER_ISSUED, "expiresAt is not after issuedAt");
        replace("missing member", "\"rootVersion\":1,", "", "", FormatRule.MISSING_MEMBER, "required member \"rootVersion\" is missing");
        replace("unknown member", "\"version\":7,", "\"version\":7,\"extra\":1,", "", FormatRule.UNKNOWN_MEMBER, "unknown member \"extra\" (extensions must start with \"x-\")");
        replace("unknown domain member", "{\"name\":\"api.example.com\",", "{\"name\":\"api.example.com\",\"Enforce\":false,", "domains[0]", FormatRule.UNKNOWN_MEMBER, "unknown member \"Enforce\" (extensions must start with \"x-\")");
        replace("specVersion 2", "\"specVersion\":1", "\"specVersion\":2", "specVersion", FormatRule.UNSUPPORTED_SPEC_VERSION, "specVersion 2 is not supported (this build supports 1)");
        replace("root type", "\"pinion.pins\"", "\"pinion.root\"", "type", FormatRule.WRONG_DOCUMENT_TYPE, "type is \"pinion.root\", expected \"pinion.pins\"");
        replace("scope with slash", "\"com.example.app\"", "\"com/example\"", "scope", FormatRule.INVALID_SCOPE, "invalid scope: only a-z 0-9 . _ - are allowed");
        replace("scope ..", "\"com.example.app\"", "\"..\"", "scope", FormatRule.INVALID_SCOPE, "invalid scope: .. is not allowed");
        replace("empty scope", "\"com.example.app\"", "\"\"", "scope", FormatRule.INVALID_SCOPE, "invalid scope: must be 1 to 128 characters");
        String host = "invalid host name: ";
        replace("uppercase host", "\"api.example.com\"", "\"API.example.com\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "uppercase letters; host names are listed in lowercase");
        replace("trailing-dot host", "\"api.example.com\"", "\"api.example.com.\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "trailing dot");
        replace("wildcard host", "\"api.example.com\"", "\"*.example.com\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "wildcards are not allowed; use includeSubdomains");
        replace("IPv4 host", "\"api.example.com\"", "\"192.0.2.1\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "IP addresses cannot be pinned by name");
        replace("IPv6 host", "\"api.example.com\"", "\"2001:db8::1\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "IP addresses cannot be pinned by name");
        replace("hex IPv4 host", "\"api.example.com\"", "\"0x7f.0x1\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "IP addresses cannot be pinned by name");
        replace("single-label host", "\"api.example.com\"", "\"localhost\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "a single label; at least two are required");
        replace("U-label host", "\"api.example.com\"", "\"bücher.example\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "non-ASCII; write internationalised names as A-labels (xn--...)");
        replace("empty label", "\"api.example.com\"", "\"api..example.com\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "empty label");
        replace("hyphen label", "\"api.example.com\"", "\"-api.example.com\"", "domains[0].name", FormatRule.INVALID_HOST_NAME, host + "a label starts or ends with a hyphen");
        String pin31 = "sha256/" + Codec.base64(new byte[31]);
        replace("31-byte pin", PIN1, pin31, "domains[0].pins[0]", FormatRule.INVALID_PIN, "invalid pin: not 32 bytes after base64 decoding (got 31)");
        replace("unpadded pin", PIN1, PIN1.substring(0, PIN1.length() - 1), "domains[0].pins[0]", FormatRule.INVALID_PIN, "invalid pin: not canonical padded base64");
        replace("non-canonical pin", PIN1, PIN1.substring(0, PIN1.length() - 2) + "F=", "domains[0].pins[0]", FormatRule.INVALID_PIN, "invalid pin: not canonical padded base64");
        replace("URL-safe pin", PIN1, "sha256/" + "_".repeat(43) + "=", "domains[0].pins[0]", FormatRule.INVALID_PIN, "invalid pin: not canonical padded base64");
        replace("pin without prefix", PIN1, PIN1.substring(7), "domains[0].pins[0]", FormatRule.INVALID_PIN, "invalid pin: must start with sha256/");
        replace("duplicate pins", PIN2, PIN1, "domains[0].pins[1]", FormatRule.DUPLICATE_PIN, "duplicate pin " + PIN1);
        replace("empty pins", "[\"" + PIN1 + "\",\"" + PIN2 + "\"]", "[]", "domains[0].pins", FormatRule.EMPTY, "must not be empty");
        replace("duplicate domains", domain("api.example.com"), domain("api.example.com") + "," + domain("api.example.com"), "domains[1].name", FormatRule.DUPLICATE_DOMAIN, "duplicate domain api.example.com");
        String deep = "[".repeat(16) + "]".repeat(16);
        replace("nesting deeper than 16", "\"version\":7,", "\"version\":7,\"x-deep\":" + deep + ",", "x-deep" + "[0]".repeat(15), FormatRule.NESTING_TOO_DEEP, "nesting deeper than 16 levels");
        replace("enforce as a string", "{\"name\":\"api.example.com\",", "{\"name\":\"api.example.com\",\"enforce\":\"true\",", "domains[0].enforce", FormatRule.WRONG_TYPE, "expected true or false");
        replace("bad previous hash", "\"version\":7,", "\"version\":7,\"previous\":\"sha256:ABC\",", "previous", FormatRule.INVALID_PREVIOUS_HASH, "\"sha256:ABC\" is not sha256: plus 64 lowercase hex characters");
        int controlAt = utf8("{\"type\":\"pinion.pins\",\"specVersion\":1,\"scope\":\"com").length;
        replace("unescaped control character", "\"com.example.app\"", "\"com\u0001\"", "scope", FormatRule.SYNTAX, "JSON syntax error at byte " + controlAt + ": expected an escaped control character");
        replace("revoked pin duplicate", "\"revokedPins\":[]", "\"revokedPins\":[\"" + PIN1 + "\",\"" + PIN1 + "\"]", "revokedPins[1]", FormatRule.DUPLICATE_PIN, "duplicate pin " + PIN1);
        replace("duplicate member by canonical equivalence", "\"version\":7,", "\"version\":7,\"x-\u00e9\":1,\"x-e\u0301\":2,", "", FormatRule.DUPLICATE_KEY, "duplicate member \"x-e\u0301\"");
        replace("bad escape", "\"com.example.app\"", "\"com\\x\"", "scope", FormatRule.SYNTAX, "JSON syntax error at byte " + (controlAt + 1) + ": expected a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        TABLE.add(new Bad("empty input", new byte[0], "", FormatRule.SYNTAX, "JSON syntax error at byte 0: expected a value"));
        TABLE.add(new Bad("byte order mark", concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, utf8(BASE)), "", FormatRule.SYNTAX, "JSON syntax error at byte 0: expected a value"));
        TABLE.add(new Bad("not an object", utf8("[]"), "", FormatRule.WRONG_TYPE, "expected an object"));
        Bad overLimit = new Bad("over-limit domain count", utf8(BASE.replace(domain("api.example.com"),
                domain("a.example.com") + "," + domain("b.example.com") + "," + domain("c.example.com"))), "domains", FormatRule.TOO_MANY_ELEMENTS, "more than 2 elements");
        overLimit.limits = new Limits(4 * 1024 * 1024, 2, 64, 32, 16);
        TABLE.add(overLimit);
        Bad tooLarge = new Bad("over the byte limit", utf8(BASE), "", FormatRule.TOO_LARGE, n + " bytes is over the limit of 100 bytes");
        tooLarge.limits = Limits.STANDARD.withMaxEnvelopeBytes(100);
        TABLE.add(tooLarge);
    }

    @Test
    public void baseManifestIsValid() throws Exception {
        ManifestPayload payload = ManifestPayload.parse(utf8(BASE), Limits.STANDARD);
        assertEquals(7, payload.version);
        assertEquals(List.of(Fixtures.pin(1), Fixtures.pin(2)), payload.domains.get(0).pins);
        assertTrue(payload.domains.get(0).enforce);
    }

    @Test
    public void everyBadInputGivesItsPathRuleAndWords() {
        List<String> failures = new ArrayList<>();
        for (Bad bad : TABLE) {
            try {
                ManifestPayload.parse(bad.bytes, bad.limits);
                failures.add(bad.name + ": accepted");
            } catch (FormatException e) {
                if (!e.path().equals(bad.path) || e.rule() != bad.rule || !e.detail().equals(bad.detail)) {
                    failures.add(bad.name + ": got " + e.path() + " / " + e.rule() + " / " + e.detail());
                }
            }
        }
        assertEquals(String.join("\n", failures), 0, failures.size());
        assertTrue(TABLE.size() >= 60);
    }

    @Test
    public void extensionsWhitespaceAndLargestIntegerAreAccepted() throws Exception {
        ManifestPayload.parse(utf8(" \n" + BASE.replace("\"version\":7,", "\"version\":7,\"x-comment\":\"rotation\",") + "\r\n\t"), Limits.STANDARD);
        assertEquals(9007199254740991L, ManifestPayload.parse(utf8(BASE.replace("\"version\":7", "\"version\":9007199254740991")), Limits.STANDARD).version);
    }

    @Test
    public void defaultDomainAndPinLimitsAreEnforcedWhileParsing() {
        StringBuilder many = new StringBuilder();
        for (int i = 0; i <= 10_000; i++) many.append(i == 0 ? "" : ",").append(domain("d" + i + ".example.com"));
        expect(BASE.replace(domain("api.example.com"), many.toString()), "domains", FormatRule.TOO_MANY_ELEMENTS);
        StringBuilder pins = new StringBuilder();
        for (int i = 0; i < 65; i++) {
            byte[] d = new byte[32];
            d[0] = (byte) i;
            d[1] = (byte) 9;
            pins.append(i == 0 ? "" : ",").append('"').append("sha256/").append(Codec.base64(d)).append('"');
        }
        expect(BASE.replace("[\"" + PIN1 + "\",\"" + PIN2 + "\"]", "[" + pins + "]"), "domains[0].pins", FormatRule.TOO_MANY_ELEMENTS);
    }

    static void expect(String text, String path, FormatRule rule) {
        try {
            ManifestPayload.parse(utf8(text), Limits.STANDARD);
            fail("accepted");
        } catch (FormatException e) {
            assertEquals(path, e.path());
            assertEquals(rule, e.rule());
        }
    }

    @Test
    public void validSurrogatePairIsDecodedAndControlCharactersInMessagesAreEscaped() throws Exception {
        JsonValue value = StrictJsonParser.parse(utf8("\"\\ud83d\\ude00\""), Limits.STANDARD.json());
        assertEquals("\uD83D\uDE00", value.text());
        FormatException e = new FormatException("x", FormatRule.EMPTY, "bad\u001b[31m\u202e");
        assertEquals("x: bad\\u{1B}[31m\\u{202E}", e.getMessage());
    }

    @Test
    public void envelopeRefusals() {
        String good = new String(Fixtures.bytes("manifest-1.json"), StandardCharsets.UTF_8);
        String[][] cases = {
            {good.replace("application/vnd.pinion.pins+json", "text/plain"), "payloadType", "WRONG_PAYLOAD_TYPE"},
            {good.replaceFirst("\"keyid\": \"[0-9a-f]+\"", "\"keyid\": \"ABC\""), "signatures[0].keyid", "INVALID_KEY_ID"},
            {good.replaceFirst("\"sig\": \"", "\"sig\": \"*"), "signatures[0].sig", "INVALID_BASE64"},
            {good.replaceFirst("\"payload\": \"", "\"payload\": \" "), "payload", "INVALID_BASE64"},
            {good.replaceFirst("\"signatures\"", "\"x\": 1, \"signatures\""), "", "UNKNOWN_MEMBER"},
        };
        for (String[] c : cases) {
            try {
                Envelope.parse(utf8(c[0]), Limits.STANDARD);
                fail(c[2] + " accepted");
            } catch (FormatException e) {
                assertEquals(c[2], c[1], e.path());
                assertEquals(c[2], FormatRule.valueOf(c[2]), e.rule());
            }
        }
        StringBuilder sigs = new StringBuilder();
        for (int i = 0; i < 33; i++) sigs.append(i == 0 ? "" : ",").append("{\"keyid\":\"").append("a".repeat(64)).append("\",\"sig\":\"AA==\"}");
        try {
            Envelope.parse(utf8("{\"payloadType\":\"application/vnd.pinion.pins+json\",\"payload\":\"\",\"signatures\":[" + sigs + "]}"), Limits.STANDARD);
            fail("33 signatures accepted");
        } catch (FormatException e) {
            assertEquals("signatures", e.path());
            assertEquals(FormatRule.TOO_MANY_ELEMENTS, e.rule());
        }
    }
}
