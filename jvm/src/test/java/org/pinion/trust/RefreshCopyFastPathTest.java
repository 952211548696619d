// The refresh's copy-free paths (ASCII slices, in-place base64, exact PAE, lazy pin hash, owned manifest) against the slow ones.
package org.pinion.trust;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.Test;

public class RefreshCopyFastPathTest {
    static byte[] ascii(String s) { return s.getBytes(StandardCharsets.ISO_8859_1); }

    /** Characters a mutation puts into base64 text: the alphabet, padding, the URL alphabet, whitespace, others. */
    static final String MUTATIONS = "AQgw+/=-_ \n.\u00e9";

    static String mutate(String text, Random random) {
        StringBuilder b = new StringBuilder(text);
        int edits = 1 + random.nextInt(3);
        for (int k = 0; k < edits; k++) {
            int op = random.nextInt(4);
            int at = b.length() == 0 ? 0 : random.nextInt(b.length());
            char c = MUTATIONS.charAt(random.nextInt(MUTATIONS.length()));
            if (op == 0 && b.length() > 0) {
                b.setCharAt(at, c);
            } else if (op == 1) {
                b.insert(at, c);
            } else if (op == 2 && b.length() > 0) {
                b.deleteCharAt(at);
            } else if (b.length() > 0) {
                // Flip the last data character before the padding (non-zero bits under it).
                int last = b.length() - 1;
                while (last > 0 && b.charAt(last) == '=') last--;
                b.setCharAt(last, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charAt(random.nextInt(64)));
            }
        }
        return b.toString();
    }

    /** The byte-range decoder agrees with the String decoder (the rule tested in FastPathRefusalTest) on every input. */
    @Test
    public void byteRangeBase64AgreesWithTheStringRule() {
        Random random = new Random(20261202);
        int refused = 0;
        for (int n = 0; n < 20_000; n++) {
            byte[] data = new byte[random.nextInt(n % 50 == 0 ? 6000 : 80)];
            random.nextBytes(data);
            String text = Base64.getEncoder().encodeToString(data);
            boolean mutated = random.nextBoolean();
            if (mutated) text = mutate(text, random);
            byte[] expected = Codec.decodeBase64Canonical(text);
            if (expected == null) refused++;
            // In a larger array, at an offset, as the slice of a document is.
            byte[] chars = text.getBytes(StandardCharsets.UTF_8);
            byte[] document = new byte[chars.length + 7];
            Arrays.fill(document, (byte) '"');
            System.arraycopy(chars, 0, document, 3, chars.length);
            byte[] actual = Codec.decodeBase64Canonical(document, 3, 3 + chars.length);
            assertArrayEquals(text, expected, actual);
            if (!mutated) assertArrayEquals(data, actual);
        }
        assertTrue("the mutations must produce refusals: " + refused, refused > 3_000);
    }

    @Test
    public void byteRangeBase64RefusesEachNonCanonicalForm() {
        String good = Base64.getEncoder().encodeToString(new byte[5000]);
        assertNotNull(Codec.decodeBase64Canonical(ascii(good), 0, good.length()));
        String[] bad = {
            good.substring(0, good.length() - 1),             // missing padding
            good.substring(0, good.length() - 2) + "B=",       // non-zero bits under one '='
            good.substring(0, 100) + "-" + good.substring(101), // URL alphabet
            good.substring(0, 100) + " " + good.substring(101), // whitespace
            good.substring(0, 100) + "=" + good.substring(101), // '=' inside
            "====",
        };
        for (int k = 0; k < bad.length; k++) assertNull("case " + k, Codec.decodeBase64Canonical(ascii(bad[k]), 0, bad[k].length()));
        String twoPad = Base64.getEncoder().encodeToString(new byte[4999]);
        assertTrue(twoPad.endsWith("=="));
        assertNotNull(Codec.decodeBase64Canonical(ascii(twoPad), 0, twoPad.length()));
        String nonZero = twoPad.substring(0, twoPad.length() - 3) + "B==";
        assertNull(Codec.decodeBase64Canonical(ascii(nonZero), 0, nonZero.length()));
        // A byte from 0x80 (never in a slice, still refused).
        byte[] high = ascii(good);
        high[10] = (byte) 0xC3;
        assertNull(Codec.decodeBase64Canonical(high, 0, high.length));
    }

    static JsonValue parse(String json) throws FormatException {
        return StrictJsonParser.parseWithSlices(json.getBytes(StandardCharsets.UTF_8), Limits.STANDARD.json());
    }

    static String repeat(char c, int count) {
        char[] chars = new char[count];
        Arrays.fill(chars, c);
        return new String(chars);
    }

    @Test
    public void onlyLongPlainAsciiStringValuesBecomeSlicesAndReadTheSame() throws FormatException {
        int min = StrictJsonParser.ASCII_SLICE_MIN_BYTES;
        String longText = repeat('a', min) + "~ !#";
        JsonValue slice = parse("{\"v\": \"" + longText + "\"}").get("v");
        assertTrue(slice.isAsciiSlice());
        assertEquals(JsonValue.Kind.STRING, slice.kind());
        assertEquals(longText, slice.text());
        assertEquals("the text is made once", System.identityHashCode(slice.text()), System.identityHashCode(slice.text()));
        assertFalse(parse("{\"v\": \"" + repeat('a', min - 1) + "\"}").get("v").isAsciiSlice());
        // The public parse never leaves a slice: its tree owns all its text, whatever the caller does to the bytes.
        byte[] document = ("{\"v\": \"" + longText + "\"}").getBytes(StandardCharsets.UTF_8);
        JsonValue owned = StrictJsonParser.parse(document, Limits.STANDARD.json()).get("v");
        assertFalse(owned.isAsciiSlice());
        Arrays.fill(document, (byte) 'z');
        assertEquals(longText, owned.text());
        JsonValue escaped = parse("{\"v\": \"" + repeat('a', min) + "\\n\"}").get("v");
        assertFalse(escaped.isAsciiSlice());
        assertEquals(repeat('a', min) + "\n", escaped.text());
        JsonValue accented = parse("{\"v\": \"" + repeat('a', min) + "\u00e9\"}").get("v");
        assertFalse(accented.isAsciiSlice());
        assertEquals(repeat('a', min) + "\u00e9", accented.text());
        JsonValue inArray = parse("[\"" + longText + "\"]").elements().get(0);
        assertTrue(inArray.isAsciiSlice());
        assertEquals(longText, inArray.text());
        // A long member name is a name, never a slice, and is still checked for duplicates.
        String name = repeat('n', min + 10);
        JsonValue object = parse("{\"" + name + "\": 1}");
        assertEquals(name, object.members().get(0).name);
        try {
            parse("{\"" + name + "\": 1, \"" + name + "\": 2}");
            fail("a duplicate long member name was accepted");
        } catch (FormatException e) {
            assertEquals(FormatRule.DUPLICATE_KEY, e.rule());
        }
    }

    @Test
    public void longStringsStillRefuseControlCharactersAndAnUnterminatedEnd() {
        int min = StrictJsonParser.ASCII_SLICE_MIN_BYTES;
        for (String json : new String[] {
            "{\"v\": \"" + repeat('a', min) + "\u0001" + repeat('a', 20) + "\"}",
            "{\"v\": \"" + repeat('a', min + 100),
            "{\"v\": \"" + repeat('a', min) + "\\x\"}",
        }) {
            try {
                parse(json);
                fail("accepted a bad long string");
            } catch (FormatException e) {
                assertEquals(FormatRule.SYNTAX, e.rule());
            }
        }
    }

    static byte[] envelopeWithPayloadText(String payloadText) {
        String json = "{\"payloadType\": \"" + PayloadKind.PINS.mediaType + "\", \"payload\": \"" + payloadText
                + "\", \"signatures\": []}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    public void envelopeDecodesALongPayloadInPlaceAndRefusesNonCanonicalOnes() throws FormatException {
        byte[] payload = new byte[9000];
        new Random(7).nextBytes(payload);
        String text = Base64.getEncoder().encodeToString(payload);
        Envelope envelope = Envelope.parse(envelopeWithPayloadText(text), Limits.STANDARD);
        assertArrayEquals(payload, envelope.payload());
        assertArrayEquals(payload, envelope.payloadBytes());
        // "\/" is "/" in JSON: not a slice, decoded from the unescaped String as before.
        int slash = text.indexOf('/');
        assertTrue(slash > 0);
        String escaped = text.substring(0, slash) + "\\/" + text.substring(slash + 1);
        assertArrayEquals(payload, Envelope.parse(envelopeWithPayloadText(escaped), Limits.STANDARD).payload());
        Random random = new Random(11);
        for (int n = 0; n < 200; n++) {
            String bad = mutate(text, random);
            if (Codec.decodeBase64Canonical(bad) != null) continue;
            if (bad.indexOf('\n') >= 0 || bad.indexOf('\u00e9') >= 0) continue; // JSON-level refusals, tested above
            try {
                Envelope.parse(envelopeWithPayloadText(bad), Limits.STANDARD);
                fail("accepted a non-canonical payload");
            } catch (FormatException e) {
                assertEquals(FormatRule.INVALID_BASE64, e.rule());
                assertEquals("payload", e.path());
            }
        }
    }

    /** The PAE as it was built before: a growing stream. */
    static byte[] referencePae(String type, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] typeBytes = type.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(("DSSEv1 " + typeBytes.length + " ").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(typeBytes);
        out.writeBytes((" " + body.length + " ").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(body);
        return out.toByteArray();
    }

    @Test
    public void paeIsTheSameBytesAsBefore() {
        Random random = new Random(3);
        for (String type : new String[] {PayloadKind.PINS.mediaType, PayloadKind.ROOT.mediaType, "", "t\u00e9st"}) {
            for (int length : new int[] {0, 1, 9, 10, 99, 100, 5000}) {
                byte[] body = new byte[length];
                random.nextBytes(body);
                assertArrayEquals(type + " " + length, referencePae(type, body), Envelope.pae(type, body));
            }
        }
    }

    @Test
    public void lazyPinHashIsArraysHashCodeAndEqualityFollowsTheDigest() throws FormatException {
        Random random = new Random(5);
        Set<Pin> set = new HashSet<>();
        for (int n = 0; n < 2000; n++) {
            byte[] digest = new byte[32];
            random.nextBytes(digest);
            if (n % 100 == 0) Arrays.fill(digest, (byte) 0); // Arrays.hashCode of 32 zero bytes is not 0, but check it recomputes
            Pin parsed = Pin.parse("sha256/" + Base64.getEncoder().encodeToString(digest));
            Pin made = Pin.ofDigest(digest);
            assertEquals(parsed, made);
            assertEquals(Arrays.hashCode(digest), parsed.hashCode());
            assertEquals(parsed.hashCode(), parsed.hashCode());
            assertEquals(made.hashCode(), parsed.hashCode());
            set.add(parsed);
            assertTrue(set.contains(made));
            byte[] other = digest.clone();
            other[n % 32] ^= (byte) (1 << (n % 8));
            assertFalse(parsed.equals(Pin.ofDigest(other)));
        }
    }

    @Test
    public void acceptManifestKeepsItsOwnCopyOfTheCallersArray() throws Exception {
        TrustCore core = Fixtures.core();
        byte[] original = Fixtures.bytes("manifest-1.json");
        byte[] callers = original.clone();
        TrustCore.ManifestStep step = core.acceptManifest(callers, "\"e\"", core.initialState(List.of()), TrustCoreTest.T0);
        assertNotNull(step.state);
        Arrays.fill(callers, (byte) 'x');
        assertArrayEquals(original, step.state.persisted().manifest);
        // The refresh path keeps the body it fetched, unchanged by later changes to the source's array.
        byte[] served = original.clone();
        Fixtures.Channel channel = new Fixtures.Channel();
        channel.manifest = Fetch.found(served, "\"e\"", -1);
        RefreshedState result = core.refresh(core.initialState(List.of()), TrustCoreTest.T0, channel);
        assertEquals(RefreshedState.Outcome.UPDATED, result.outcome);
        Arrays.fill(served, (byte) 'x');
        assertArrayEquals(original, result.state.persisted().manifest);
    }

    /** Names a generated object draws from: ASCII, the KELVIN SIGN (NFC "K"), precomposed and decomposed e-acute. */
    static final String[] MEMBER_NAMES = {"K", "\u212a", "\u00e9", "e\u0301", "a", "b", "x-k", "\u00c9", "k"};

    /**
     * Duplicate member names (compared in NFC) are refused exactly when the plain rule says so, in
     * objects of 1-40 members: ASCII names scanned in place, the switch to NFC keys when the first
     * non-ASCII name comes (before or after 16 members), and the set from 16 on.
     */
    @Test
    public void duplicateMemberNamesAreRefusedExactlyAsTheNfcSetRuleSays() {
        Random random = new Random(99);
        int duplicates = 0;
        for (int n = 0; n < 20_000; n++) {
            int size = 1 + random.nextInt(n % 10 == 0 ? 40 : 20);
            StringBuilder json = new StringBuilder("{");
            Set<String> seen = new HashSet<>();
            boolean expectDuplicate = false;
            for (int i = 0; i < size; i++) {
                // Mostly unique filler names, so duplicates come late in some objects and early in others.
                String name = random.nextInt(4) == 0 ? MEMBER_NAMES[random.nextInt(MEMBER_NAMES.length)] : "m" + i;
                if (!seen.add(java.text.Normalizer.normalize(name, java.text.Normalizer.Form.NFC))) expectDuplicate = true;
                json.append(i > 0 ? "," : "").append('"').append(name).append("\":").append(i);
            }
            json.append('}');
            try {
                StrictJsonParser.parse(json.toString().getBytes(StandardCharsets.UTF_8), Limits.STANDARD.json());
                assertFalse("accepted a duplicate: " + json, expectDuplicate);
            } catch (FormatException e) {
                assertTrue("refused without a duplicate: " + json + " " + e.getMessage(), expectDuplicate);
                assertEquals(FormatRule.DUPLICATE_KEY, e.rule());
                duplicates++;
            }
        }
        assertTrue("the generator must make duplicates: " + duplicates, duplicates > 5_000);
        assertTrue("and objects without: " + duplicates, duplicates < 15_000);
    }
}
