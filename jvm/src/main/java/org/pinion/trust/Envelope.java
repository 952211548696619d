// DSSE v1 envelopes (secure-systems-lab/dsse protocol.md) and their PAE signing input (DESIGN.md §3).
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A parsed DSSE envelope; the payload bytes are kept exactly as received. */
public final class Envelope {
    /** One signature: key id (64 lowercase hex) and signature bytes. */
    public static final class Signature {
        /** Lowercase hex SHA-256 of the signer's raw public key. */
        public final String keyId;
        private final byte[] signature;

        Signature(String keyId, byte[] signature) {
            this.keyId = keyId;
            this.signature = signature;
        }

        /** @return a copy of the signature bytes (64 for Ed25519) */
        public byte[] signature() { return signature.clone(); }
    }

    /** The payload type. */
    public final PayloadKind kind;
    private final byte[] payload;
    /** The signatures in envelope order. */
    public final List<Signature> signatures;

    private Envelope(PayloadKind kind, byte[] payload, List<Signature> signatures) {
        this.kind = kind;
        this.payload = payload;
        this.signatures = Collections.unmodifiableList(signatures);
    }

    /** @return a copy of the exact payload bytes */
    public byte[] payload() { return payload.clone(); }

    /**
     * The exact payload bytes without a copy, for this package's verifiers, which only read them
     * (a manifest's payload is megabytes: a copy for the parse and another for the hash cost more
     * than the hash). Callers must never write into the array.
     *
     * @return the envelope's own payload array
     */
    byte[] payloadBytes() { return payload; }

    /**
     * Parses an envelope strictly (DESIGN.md §3, §5 limits).
     *
     * @param bytes the envelope file, at most {@code limits.maxEnvelopeBytes}
     * @param limits size, depth and signature limits
     * @return the envelope
     * @throws FormatException naming the member and rule
     */
    public static Envelope parse(byte[] bytes, Limits limits) throws FormatException {
        // The tree is read here and dropped: the payload's base64 is decoded from a slice of bytes.
        SchemaReader reader = new SchemaReader(StrictJsonParser.parseWithSlices(bytes, limits.json()), "");
        String typeText = reader.string("payloadType");
        PayloadKind kind = PayloadKind.of(typeText);
        if (kind == null) {
            throw reader.error("payloadType", FormatRule.WRONG_PAYLOAD_TYPE, "payloadType is \"" + typeText + "\", expected "
                    + PayloadKind.ROOT.mediaType + " or " + PayloadKind.PINS.mediaType);
        }
        byte[] payload = Codec.decodeBase64Canonical(reader.stringValue("payload"));
        if (payload == null) throw reader.error("payload", FormatRule.INVALID_BASE64, "not canonical padded base64");
        List<JsonValue> values = reader.array("signatures", limits.maxSignatures);
        List<Signature> signatures = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            SchemaReader entry = new SchemaReader(values.get(i), reader.elementPath("signatures", i));
            String keyId = entry.string("keyid");
            try {
                Names.validateKeyId(keyId);
            } catch (FormatException e) {
                throw e.at(entry.childPath("keyid"));
            }
            byte[] sig = Codec.decodeBase64Canonical(entry.string("sig"));
            if (sig == null) throw entry.error("sig", FormatRule.INVALID_BASE64, "not canonical padded base64");
            entry.finish();
            signatures.add(new Signature(keyId, sig));
        }
        reader.finish();
        return new Envelope(kind, payload, signatures);
    }

    /** @return the bytes every signature covers: {@code PAE(payloadType, payload)} */
    public byte[] signingInput() { return pae(kind.mediaType, payload); }

    /**
     * DSSE v1 Pre-Authentication Encoding: {@code "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body}.
     *
     * @param type the payloadType
     * @param body the payload bytes
     * @return the PAE bytes
     */
    public static byte[] pae(String type, byte[] body) {
        byte[] typeBytes = type.getBytes(StandardCharsets.UTF_8);
        byte[] head = ("DSSEv1 " + typeBytes.length + " ").getBytes(StandardCharsets.US_ASCII);
        byte[] middle = (" " + body.length + " ").getBytes(StandardCharsets.US_ASCII);
        // One array of the exact size (a growing stream copied the megabyte body twice more).
        byte[] out = new byte[head.length + typeBytes.length + middle.length + body.length];
        int at = 0;
        System.arraycopy(head, 0, out, at, head.length);
        at += head.length;
        System.arraycopy(typeBytes, 0, out, at, typeBytes.length);
        at += typeBytes.length;
        System.arraycopy(middle, 0, out, at, middle.length);
        at += middle.length;
        System.arraycopy(body, 0, out, at, body.length);
        return out;
    }
}
