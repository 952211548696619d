// The JSON value tree of the strict parser: ordered members, numbers kept as their exact text.
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A parsed JSON value. Objects keep member order; numbers keep their text (no double rounding). */
public final class JsonValue {
    /** The JSON type of a value. */
    public enum Kind { NULL, BOOL, NUMBER, STRING, ARRAY, OBJECT }

    /** One {@code "name": value} pair of an object. */
    public static final class Member {
        /** The member name. */
        public final String name;
        /** The member value. */
        public final JsonValue value;

        /**
         * @param name member name
         * @param value member value
         */
        public Member(String name, JsonValue value) {
            this.name = name;
            this.value = value;
        }
    }

    /** The JSON null. */
    public static final JsonValue NULL = new JsonValue(Kind.NULL, null, false, null, null);
    private final Kind kind;
    /** The string or number text; for an ASCII slice, null until {@link #text()} first makes it. */
    private String text;
    private final boolean flag;
    private final List<JsonValue> elements;
    private final List<Member> members;
    /** For an ASCII slice (see {@link #asciiSlice}): the document and the string's byte range; else null. */
    private final byte[] source;
    private final int sourceStart;
    private final int sourceEnd;

    private JsonValue(Kind kind, String text, boolean flag, List<JsonValue> elements, List<Member> members) {
        this.kind = kind;
        this.text = text;
        this.flag = flag;
        this.elements = elements;
        this.members = members;
        this.source = null;
        this.sourceStart = 0;
        this.sourceEnd = 0;
    }

    private JsonValue(byte[] source, int start, int end) {
        this.kind = Kind.STRING;
        this.text = null;
        this.flag = false;
        this.elements = null;
        this.members = null;
        this.source = source;
        this.sourceStart = start;
        this.sourceEnd = end;
    }

    /**
     * A string value that is the bytes {@code source[start..<end]} read as ASCII (only
     * {@link StrictJsonParser#parseWithSlices} makes one, for a long string of ASCII without escapes,
     * such as an envelope's base64 payload): its {@link #text()} is made on first use, and {@link Codec#decodeBase64Canonical(JsonValue)}
     * decodes the bytes in place, so a megabyte payload is neither copied into a String nor back.
     *
     * @param source the parsed document, never changed while this value is in use
     * @param start first byte of the string's content (after the opening quote)
     * @param end one past its last byte (the closing quote)
     * @return the JSON string
     */
    static JsonValue asciiSlice(byte[] source, int start, int end) { return new JsonValue(source, start, end); }

    /** @return whether this is an {@link #asciiSlice} */
    boolean isAsciiSlice() { return source != null; }

    /** @return the document of an {@link #asciiSlice}, else null (never to be written into) */
    byte[] sliceSource() { return source; }

    /** @return the first byte of an {@link #asciiSlice} */
    int sliceStart() { return sourceStart; }

    /** @return one past the last byte of an {@link #asciiSlice} */
    int sliceEnd() { return sourceEnd; }

    /** @param value a boolean @return the JSON boolean */
    public static JsonValue bool(boolean value) { return new JsonValue(Kind.BOOL, null, value, null, null); }

    /** @param text the number as written (RFC 8259 §6 grammar) @return the JSON number */
    public static JsonValue number(String text) { return new JsonValue(Kind.NUMBER, text, false, null, null); }

    /** @param value an integer @return the JSON number */
    public static JsonValue number(long value) { return number(Long.toString(value)); }

    /** @param text the string @return the JSON string */
    public static JsonValue string(String text) { return new JsonValue(Kind.STRING, text, false, null, null); }

    /** @param elements the elements @return the JSON array */
    public static JsonValue array(List<JsonValue> elements) { return ownedArray(new ArrayList<>(elements)); }

    /** @param members the members, unique names @return the JSON object */
    public static JsonValue object(List<Member> members) { return ownedObject(new ArrayList<>(members)); }

    /** @param elements a list no one else holds (the parser's, not copied) @return the JSON array */
    static JsonValue ownedArray(ArrayList<JsonValue> elements) {
        return new JsonValue(Kind.ARRAY, null, false, Collections.unmodifiableList(elements), null);
    }

    /** @param members a list no one else holds, unique names (the parser's, not copied) @return the JSON object */
    static JsonValue ownedObject(ArrayList<Member> members) {
        return new JsonValue(Kind.OBJECT, null, false, null, Collections.unmodifiableList(members));
    }

    /** @return the JSON type */
    public Kind kind() { return kind; }

    /** @return the string value or the number text; null for other kinds */
    public String text() {
        String t = text;
        if (t == null && source != null) {
            // Racy but safe: every thread makes the same immutable String.
            t = new String(source, sourceStart, sourceEnd - sourceStart, StandardCharsets.ISO_8859_1);
            text = t;
        }
        return t;
    }

    /** @return the boolean value (false for other kinds) */
    public boolean flag() { return flag; }

    /** @return the array elements; empty for other kinds */
    public List<JsonValue> elements() { return elements == null ? Collections.emptyList() : elements; }

    /** @return the object members in order; empty for other kinds */
    public List<Member> members() { return members == null ? Collections.emptyList() : members; }

    /** @param name member name @return the member's value, or null when absent or not an object */
    public JsonValue get(String name) {
        int i = indexOf(name);
        return i < 0 ? null : members.get(i).value;
    }

    /** @param name member name @return the index of the first member of that name, or -1 (also when not an object) */
    int indexOf(String name) {
        if (members == null) return -1;
        for (int i = 0, count = members.size(); i < count; i++) {
            if (members.get(i).name.equals(name)) return i;
        }
        return -1;
    }

    /** @return a short name of the type for messages */
    public String typeName() {
        switch (kind) {
            case NULL: return "null";
            case BOOL: return "boolean";
            case NUMBER: return "number";
            case STRING: return "string";
            case ARRAY: return "array";
            default: return "object";
        }
    }
}
