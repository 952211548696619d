// The parser's and merge's fast paths (bench/NOTES.md) refuse what the slow ones refused: differential and hostile cases.
package org.pinion.trust;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.Test;

public class FastPathRefusalTest {
    static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    static FormatException refusal(String json) {
        try {
            StrictJsonParser.parse(utf8(json), Limits.STANDARD.json());
        } catch (FormatException e) {
            return e;
        }
        fail("accepted: " + json);
        return null;
    }

    /** The canonical-form rule as it was written before the one-pass decoder: decode, re-encode, compare. */
    static byte[] referenceCanonical(String text) {
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(text.getBytes(StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            return null;
        }
        return Base64.getEncoder().encodeToString(decoded).equals(text) ? decoded : null;
    }

    @Test
    public void onePassBase64AgreesWithDecodeAndReEncodeOnMutatedInputs() {
        Random random = new Random(15);
        String noise = "ABCXYZabcxyz0189+/=-_ \n.\u00e9\u212a\u0000";
        int accepted = 0;
        int refused = 0;
        for (int round = 0; round < 20_000; round++) {
            byte[] raw = new byte[round % 10 == 0 ? random.nextInt(2000) : random.nextInt(40)];
            random.nextBytes(raw);
            StringBuilder text = new StringBuilder(Base64.getEncoder().encodeToString(raw));
            int edits = random.nextInt(3);
            for (int e = 0; e < edits && text.length() > 0; e++) {
                int at = random.nextInt(text.length());
                switch (random.nextInt(4)) {
                    case 0: text.setCharAt(at, noise.charAt(random.nextInt(noise.length()))); break;
                    case 1: text.deleteCharAt(at); break;
                    case 2: text.insert(at, noise.charAt(random.nextInt(noise.length()))); break;
                    default: text.setLength(Math.max(0, text.length() - 1)); break;
                }
            }
            String candidate = text.toString();
            byte[] expected = referenceCanonical(candidate);
            byte[] actual = Codec.decodeBase64Canonical(candidate);
            if (expected == null) {
                assertNull("accepted non-canonical \"" + candidate + "\"", actual);
                refused++;
            } else {
                assertArrayEquals("decoded \"" + candidate + "\" differently", expected, actual);
                accepted++;
            }
        }
        assertTrue("too few canonical cases: " + accepted, accepted > 5_000);
        assertTrue("too few refused cases: " + refused, refused > 5_000);
    }

    @Test
    public void base64TrailingBitsPaddingAndAlphabetAreRefused() {
        assertArrayEquals(new byte[] {0x41}, Codec.decodeBase64Canonical("QQ=="));
        assertArrayEquals(new byte[0], Codec.decodeBase64Canonical(""));
        for (String bad : new String[] {"QR==", "QUJ=", "QQ", "QQ=", "QQ===", "Q===", "====", "QQ==QQ==", "Q=Q=", "-_8=", "QQ ==", "QUJD\n"}) {
            assertNull(bad, Codec.decodeBase64Canonical(bad));
        }
        // The same spellings after a long prefix (over SHORT_BASE64 characters: the JDK decoder's path).
        String prefix = "QUJD".repeat(Codec.SHORT_BASE64);
        assertArrayEquals(("ABC".repeat(Codec.SHORT_BASE64) + "A").getBytes(StandardCharsets.US_ASCII), Codec.decodeBase64Canonical(prefix + "QQ=="));
        for (String bad : new String[] {"QR==", "QUJ=", "QQ", "QQ=", "Q===", "====", "QQ==QQ==", "Q=Q=", "-_8=", "QQ ==", "QUJD\n", "QUJ\u00e9",
            "QUJ\u0141"}) {
            assertNull(bad, Codec.decodeBase64Canonical(prefix + bad));
            assertNull(bad, Codec.decodeBase64Canonical(bad + prefix));
        }
        // The range form reads only its range.
        assertArrayEquals(new byte[] {0x41}, Codec.decodeBase64Canonical("xxQQ==yy", 2, 6));
        assertNull(Codec.decodeBase64Canonical("xxQR==yy", 2, 6));
    }

    @Test
    public void pinsWithNonCanonicalBase64OrTheWrongLengthAreRefused() throws FormatException {
        byte[] digest = new byte[32];
        java.util.Arrays.fill(digest, (byte) 0xfb); // base64 "+/v7...": both characters the URL alphabet replaces
        Pin pin = Pin.ofDigest(digest);
        String good = pin.toString();
        assertTrue(good, good.startsWith("sha256/+/v7"));
        assertEquals(pin, Pin.parse(good));
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        int last = alphabet.indexOf(good.charAt(good.length() - 2));
        // 32 bytes leave 2 bits under the padding; setting one gives a spelling that decodes to the same
        // digest under a lenient decoder.
        String nonZeroBits = good.substring(0, good.length() - 2) + alphabet.charAt(last | 1) + "=";
        String[] bad = {nonZeroBits, good.substring(0, good.length() - 1), good.replace('+', '-').replace('/', '_').replace("sha256_", "sha256/"),
            "sha256/" + Codec.base64(new byte[31]), "sha256/" + Codec.base64(new byte[33]), "SHA256/" + good.substring(7), "sha256/"};
        for (String text : bad) {
            try {
                Pin.parse(text);
                fail("accepted " + text);
            } catch (FormatException e) {
                assertEquals(text, FormatRule.INVALID_PIN, e.rule());
            }
        }
    }

    @Test
    public void pinHashIsCachedButEqualityStillComparesDigests() throws FormatException {
        Pin a = Fixtures.pin(1);
        Pin b = Pin.parse(a.toString());
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertFalse(a.equals(Fixtures.pin(2)));
        byte[] digest = a.digest();
        digest[0] ^= 1;
        assertEquals("the digest copy does not reach the pin", a, Pin.parse(a.toString()));
        assertFalse(Pin.ofDigest(digest).equals(a));
    }

    /** An object of {@code count} members {@code "mN": N}, then the given extra member text. */
    static String object(int count, String extra) {
        StringBuilder text = new StringBuilder("{");
        for (int i = 0; i < count; i++) text.append("\"m").append(i).append("\":").append(i).append(',');
        return text.append(extra).append('}').toString();
    }

    @Test
    public void duplicateMembersAreRefusedInSmallAndLargeObjects() {
        int[] sizes = {0, 3, StrictJsonParser.LINEAR_DUPLICATE_SCAN_MEMBERS - 2, StrictJsonParser.LINEAR_DUPLICATE_SCAN_MEMBERS - 1,
            StrictJsonParser.LINEAR_DUPLICATE_SCAN_MEMBERS, 40};
        for (int size : sizes) {
            String[][] pairs = {
                {"\"m0\":1", "m0"}, // plain duplicate (not for size 0: nothing to repeat)
                {"\"k\":1,\"\\u006b\":2", "k"}, // through an escape
                {"\"\u00e9\":1,\"e\u0301\":2", "e\u0301"}, // NFC and NFD
                {"\"e\u0301\":1,\"\u00e9\":2", "\u00e9"},
                {"\"K\":1,\"\u212a\":2", "\u212a"}, // KELVIN SIGN: non-ASCII whose NFC is ASCII "K"
                {"\"\u212a\":1,\"K\":2", "K"},
                {"\"\\u212a\":1,\"K\":2", "K"}, // the same, the non-ASCII name escaped
                {"\"\u212b\":1,\"\u00c5\":2", "\u00c5"}, // ANGSTROM SIGN and A WITH RING
            };
            for (String[] pair : pairs) {
                if (size == 0 && pair[1].equals("m0")) continue;
                FormatException e = refusal(object(size, pair[0]));
                assertEquals(size + " " + pair[0], FormatRule.DUPLICATE_KEY, e.rule());
                assertEquals(size + " " + pair[0], "duplicate member \"" + pair[1] + "\"", e.detail());
            }
        }
    }

    @Test
    public void distinctNamesThatLookAlikeAreKept() throws FormatException {
        for (int size : new int[] {0, 20}) {
            JsonValue value = StrictJsonParser.parse(utf8(object(size, "\"e\":1,\"\u00e9\":2,\"\u00c9\":3,\"k\":4,\"\u212a\":5")), Limits.STANDARD.json());
            assertEquals(size + 5, value.members().size());
            assertEquals("5", value.get("\u212a").text());
            assertEquals("2", value.get("\u00e9").text());
        }
    }

    @Test
    public void stringsDecodeTheSameOnEveryPath() throws FormatException {
        String[][] cases = {
            {"\"plain ascii\"", "plain ascii"},
            {"\"caf\u00e9 \u2603 \ud83d\ude00\"", "caf\u00e9 \u2603 \ud83d\ude00"},
            {"\"a\\nb\\u00e9c\u00e9\\\"\"", "a\nb\u00e9c\u00e9\""},
            {"\"\u00e9\\u0041\"", "\u00e9A"},
            {"\"\\u0000\"", "\u0000"},
            {"\"\"", ""},
        };
        for (String[] c : cases) assertEquals(c[0], c[1], StrictJsonParser.parse(utf8(c[0]), Limits.STANDARD.json()).text());
        assertEquals(FormatRule.SYNTAX, refusal("\"a\u0001b\"").rule());
        assertEquals(FormatRule.SYNTAX, refusal("\"\u00e9\u0001\"").rule());
        assertEquals(FormatRule.LONE_SURROGATE, refusal("\"\u00e9\\ud800\"").rule());
        assertEquals(FormatRule.SYNTAX, refusal("\"\u00e9").rule());
    }

    @Test
    public void errorPathsNameTheElementWithoutEagerPaths() {
        StringBuilder domains = new StringBuilder();
        for (int i = 0; i < 4; i++) domains.append(i == 0 ? "" : ",").append(StrictParserTest.domain("d" + i + ".example.com"));
        String base = StrictParserTest.BASE.replace(StrictParserTest.domain("api.example.com"), domains.toString());
        String p1 = StrictParserTest.PIN1;
        String p2 = StrictParserTest.PIN2;
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d3.example.com"),
                "{\"name\":\"d3.example.com\",\"pins\":[\"" + p1 + "\",\"" + p1 + "\"]}"), "domains[3].pins[1]", FormatRule.DUPLICATE_PIN);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d2.example.com"),
                "{\"name\":\"d2.example.com\",\"pins\":[\"" + p1 + "\",7]}"), "domains[2].pins[1]", FormatRule.WRONG_TYPE);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d1.example.com"),
                "{\"name\":\"d1.example.com\",\"pins\":[\"" + p1 + "\",\"" + p2 + "\"],\"pinz\":1}"), "domains[1]", FormatRule.UNKNOWN_MEMBER);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d1.example.com"), "{\"pins\":[\"" + p1 + "\"]}"),
                "domains[1]", FormatRule.MISSING_MEMBER);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d1.example.com"), "[]"), "domains[1]", FormatRule.WRONG_TYPE);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d3.example.com"), StrictParserTest.domain("d0.example.com")),
                "domains[3].name", FormatRule.DUPLICATE_DOMAIN);
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d2.example.com"), StrictParserTest.domain("D2.example.com")),
                "domains[2].name", FormatRule.INVALID_HOST_NAME);
        // A long pin list (checked with a set) and revokedPins still refuse duplicates.
        StringBuilder pins = new StringBuilder();
        for (int i = 0; i < 30; i++) pins.append('"').append(Fixtures.pin(i + 1)).append("\",");
        pins.append('"').append(Fixtures.pin(7)).append('"');
        StrictParserTest.expect(base.replace(StrictParserTest.domain("d0.example.com"), "{\"name\":\"d0.example.com\",\"pins\":[" + pins + "]}"),
                "domains[0].pins[30]", FormatRule.DUPLICATE_PIN);
        StrictParserTest.expect(base.replace("\"revokedPins\":[]", "\"revokedPins\":[" + pins + "]"), "revokedPins[30]", FormatRule.DUPLICATE_PIN);
        StrictParserTest.expect(base.replace("\"revokedPins\":[]", "\"revokedPins\":[\"" + p1 + "\",\"" + p1 + "\"]"), "revokedPins[1]",
                FormatRule.DUPLICATE_PIN);
    }

    @Test
    public void schemaReaderStillRefusesUnreadMembersOfHandBuiltObjects() throws FormatException {
        JsonValue twice = JsonValue.object(List.of(new JsonValue.Member("a", JsonValue.number(1)), new JsonValue.Member("a", JsonValue.number(2)),
                new JsonValue.Member("x-note", JsonValue.NULL)));
        SchemaReader reader = new SchemaReader(twice, "");
        assertEquals("1", reader.optional("a").text());
        reader.finish();
        SchemaReader unread = new SchemaReader(JsonValue.object(List.of(new JsonValue.Member("a", JsonValue.number(1)),
                new JsonValue.Member("b", JsonValue.number(2)))), "outer");
        assertNull(unread.optionalArray("c", 3));
        unread.optional("a");
        try {
            unread.finish();
            fail("unread member accepted");
        } catch (FormatException e) {
            assertEquals(FormatRule.UNKNOWN_MEMBER, e.rule());
            assertEquals("outer", e.path());
        }
    }

    @Test
    public void hostNameFastPathAgreesWithTheRuleByRuleCheck() {
        Random random = new Random(1035);
        String alphabet = "abcz09-.-..xA*:[_\u00e9";
        int valid = 0;
        int invalid = 0;
        for (int round = 0; round < 30_000; round++) {
            StringBuilder name = new StringBuilder();
            int length = random.nextInt(round % 100 == 0 ? 300 : 24);
            for (int i = 0; i < length; i++) name.append(alphabet.charAt(random.nextInt(alphabet.length())));
            if (round % 3 == 0) name.append(random.nextBoolean() ? ".com" : ".0x1f");
            String text = name.toString();
            boolean reasonedValid;
            try {
                Names.validateHostNameReasoned(text);
                reasonedValid = true;
            } catch (FormatException e) {
                reasonedValid = false;
                assertEquals(FormatRule.INVALID_HOST_NAME, e.rule());
            }
            assertEquals("\"" + text + "\"", reasonedValid, Names.isPlainHostName(text));
            if (reasonedValid) valid++; else invalid++;
        }
        String[] edges = {"a".repeat(63) + ".com", "a".repeat(64) + ".com", "a.b", "a", "a-.com", "-a.com", "a..com", "a.com.", "1.2.3.4", "a.0x1F",
            "a.0xff", "a.0x", ("a".repeat(61) + ".").repeat(4) + "ab", ("a".repeat(61) + ".").repeat(4) + "abc"};
        for (String text : edges) {
            boolean reasonedValid;
            try {
                Names.validateHostNameReasoned(text);
                reasonedValid = true;
            } catch (FormatException e) {
                reasonedValid = false;
            }
            assertEquals(text, reasonedValid, Names.isPlainHostName(text));
        }
        assertTrue("too few valid names: " + valid, valid > 100);
        assertTrue("too few invalid names: " + invalid, invalid > 500);
    }

    @Test
    public void mergeStillRemovesRevokedPinsFromReusedEntries() throws FormatException {
        Baseline base = MergeTest.baseline(MergeTest.entry("b.example.com", false, true, 1, 2));
        ManifestPayload m = MergeTest.manifest(MergeTest.entry("m.example.com", false, true, 3, 4) + ","
                + MergeTest.entry("b.example.com", true, false, 2, 5), "");
        PolicySnapshot snap = MergeTest.snap(base, m, true, Set.of(Fixtures.pin(4), Fixtures.pin(1)), 0);
        assertEquals(List.of(Fixtures.pin(3)), snap.current.entry("m.example.com").pins);
        assertEquals("the manifest's own entry is unchanged", List.of(Fixtures.pin(3), Fixtures.pin(4)), m.domains.get(0).pins);
        PinnedDomain merged = snap.current.entry("b.example.com");
        assertEquals(List.of(Fixtures.pin(2), Fixtures.pin(5)), merged.pins);
        assertTrue("flags ORed", merged.includeSubdomains && merged.enforce);
        assertEquals(List.of(Fixtures.pin(2)), snap.expired.entry("b.example.com").pins);
        assertTrue(snap.expired.entry("m.example.com").pins.isEmpty());
        assertTrue(snap.expired.entry("m.example.com").enforce);
        PolicySnapshot none = MergeTest.snap(base, m, true, Set.of(), 0);
        assertEquals(List.of(Fixtures.pin(3), Fixtures.pin(4)), none.current.entry("m.example.com").pins);
        assertNotNull(none.current.hostPolicy("x.b.example.com"));
        assertEquals("expired: B's pins that M grants, flags still ORed", List.of(Fixtures.pin(2)),
                none.expired.hostPolicy("x.b.example.com").entry.pins);
        try {
            none.current.entry("m.example.com").pins.add(Fixtures.pin(9));
            fail("a merged entry's pins can be changed");
        } catch (UnsupportedOperationException expected) {
            assertEquals(2, m.domains.get(0).pins.size());
        }
    }

    static boolean plainByte(int b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

    @Test
    public void wordSkipFindsEverySpecialByteAtEveryPosition() {
        for (int b = 0; b < 256; b++) {
            for (int position = 0; position < 8; position++) {
                long word = 0x6161616161616161L;
                word = (word & ~(0xffL << (8 * position))) | ((long) b << (8 * position));
                assertEquals("byte " + b + " at " + position, plainByte(b), StrictJsonParser.plainStringWord(word));
            }
        }
        Random random = new Random(8259);
        for (int round = 0; round < 200_000; round++) {
            long word = random.nextLong();
            if (round % 2 == 0) word &= 0x7f7f7f7f7f7f7f7fL;
            boolean plain = true;
            for (int k = 0; k < 8; k++) plain &= plainByte((int) (word >>> (8 * k)) & 0xff);
            assertEquals(Long.toHexString(word), plain, StrictJsonParser.plainStringWord(word));
        }
    }

    @Test
    public void longStringsAreCheckedAtEveryOffset() throws FormatException {
        String run = "abcdefghijklmnopqrstuvwxyz0123456789";
        for (int at = 0; at <= run.length(); at++) {
            String head = run.substring(0, at);
            String tail = run.substring(at);
            assertEquals(head + "\"" + tail, StrictJsonParser.parse(utf8("\"" + head + "\\\"" + tail + "\""), Limits.STANDARD.json()).text());
            assertEquals(head + "\u00e9" + tail, StrictJsonParser.parse(utf8("\"" + head + "\u00e9" + tail + "\""), Limits.STANDARD.json()).text());
            assertEquals(head, StrictJsonParser.parse(utf8("\"" + head + "\""), Limits.STANDARD.json()).text());
            assertEquals(at + "", FormatRule.SYNTAX, refusal("\"" + head + "\u0007" + tail + "\"").rule());
            assertEquals(at + "", FormatRule.SYNTAX, refusal("\"" + head + tail).rule());
            byte[] bad = utf8("\"" + head + "\u00e9" + tail + "\"");
            bad[1 + at + 1] = (byte) 0x41; // the continuation byte of the é: a lone lead byte
            assertEquals(at + "", 1 + at, StrictJsonParser.firstInvalidUtf8Offset(bad));
            byte[] high = utf8("\"" + head + "x" + tail + "\"");
            high[1 + at] = (byte) 0xff;
            assertEquals(at + "", 1 + at, StrictJsonParser.firstInvalidUtf8Offset(high));
        }
    }
}
