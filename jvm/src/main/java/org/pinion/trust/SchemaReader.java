// Typed, path-aware access to one JSON object for a document schema; unknown members refused at finish().
package org.pinion.trust;

import java.util.List;

/** Reads one object's members with types checked; {@link #finish()} refuses unread non-{@code x-} members. */
final class SchemaReader {
    final JsonValue object;
    /** The object's path, or null until first needed when it is element {@link #elementIndex} of {@link #arrayPath}. */
    private String path;
    private final String arrayPath;
    private final int elementIndex;
    /**
     * Which members were read, by position in {@code object.members()} (a member is read when
     * one of the readers below asked for its name); {@link #finish()} refuses the others.
     */
    private final boolean[] read;

    SchemaReader(JsonValue value, String path) throws FormatException {
        if (value.kind() != JsonValue.Kind.OBJECT) throw new FormatException(path, FormatRule.WRONG_TYPE, "expected an object");
        this.object = value;
        this.path = path;
        this.arrayPath = null;
        this.elementIndex = 0;
        this.read = new boolean[value.members().size()];
    }

    /**
     * A reader of element {@code index} of the array at {@code arrayPath}; its path
     * ({@code arrayPath[index]}) is only built when an error or a child path needs it.
     */
    SchemaReader(JsonValue value, String arrayPath, int index) throws FormatException {
        if (value.kind() != JsonValue.Kind.OBJECT) {
            throw new FormatException(arrayPath + "[" + index + "]", FormatRule.WRONG_TYPE, "expected an object");
        }
        this.object = value;
        this.path = null;
        this.arrayPath = arrayPath;
        this.elementIndex = index;
        this.read = new boolean[value.members().size()];
    }

    /** @return the object's path, e.g. {@code domains[3]} */
    String path() {
        if (path == null) path = arrayPath + "[" + elementIndex + "]";
        return path;
    }

    String childPath(String name) {
        String own = path();
        return own.isEmpty() ? name : own + "." + name;
    }

    String elementPath(String name, int index) { return childPath(name) + "[" + index + "]"; }

    FormatException error(String name, FormatRule rule, String detail) {
        return new FormatException(childPath(name), rule, detail);
    }

    JsonValue optional(String name) {
        List<JsonValue.Member> members = object.members();
        JsonValue found = null;
        // Every member of that name is marked, as a set of read names would (the parser never
        // makes two; an object built by hand might).
        for (int i = 0; i < read.length; i++) {
            JsonValue.Member member = members.get(i);
            if (member.name.equals(name)) {
                read[i] = true;
                if (found == null) found = member.value;
            }
        }
        return found;
    }

    JsonValue required(String name) throws FormatException {
        JsonValue value = optional(name);
        if (value == null) {
            throw new FormatException(path(), FormatRule.MISSING_MEMBER, "required member \"" + name + "\" is missing");
        }
        return value;
    }

    String string(String name) throws FormatException {
        JsonValue value = required(name);
        if (value.kind() != JsonValue.Kind.STRING) throw error(name, FormatRule.WRONG_TYPE, "expected a string");
        return value.text();
    }

    /** {@link #string} as the JSON value itself (an {@link JsonValue#asciiSlice} stays a slice). */
    JsonValue stringValue(String name) throws FormatException {
        JsonValue value = required(name);
        if (value.kind() != JsonValue.Kind.STRING) throw error(name, FormatRule.WRONG_TYPE, "expected a string");
        return value;
    }

    String optionalString(String name) throws FormatException {
        JsonValue value = optional(name);
        if (value == null) return null;
        if (value.kind() != JsonValue.Kind.STRING) throw error(name, FormatRule.WRONG_TYPE, "expected a string");
        return value.text();
    }

    boolean bool(String name, boolean defaultValue) throws FormatException {
        JsonValue value = optional(name);
        if (value == null) return defaultValue;
        if (value.kind() != JsonValue.Kind.BOOL) throw error(name, FormatRule.WRONG_TYPE, "expected true or false");
        return value.flag();
    }

    long integer(String name) throws FormatException {
        return integer(required(name), childPath(name), 1, Limits.MAX_INTEGER);
    }

    static long integer(JsonValue value, String path, long min, long max) throws FormatException {
        if (value.kind() != JsonValue.Kind.NUMBER) throw new FormatException(path, FormatRule.WRONG_TYPE, "expected an integer");
        String text = value.text();
        if (text.indexOf('.') >= 0 || text.indexOf('e') >= 0 || text.indexOf('E') >= 0) {
            throw new FormatException(path, FormatRule.NOT_AN_INTEGER, "expected an integer without fraction or exponent");
        }
        long number;
        try {
            number = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw outOfRange(path, min, max);
        }
        if (number < min || number > max) throw outOfRange(path, min, max);
        return number;
    }

    private static FormatException outOfRange(String path, long min, long max) {
        return new FormatException(path, FormatRule.INTEGER_OUT_OF_RANGE, "integer out of range " + min + "..." + max);
    }

    Timestamp time(String name) throws FormatException {
        String text = string(name);
        try {
            return Timestamp.parse(text);
        } catch (FormatException e) {
            throw e.at(childPath(name));
        }
    }

    List<JsonValue> array(String name, int maxCount) throws FormatException {
        JsonValue value = required(name);
        if (value.kind() != JsonValue.Kind.ARRAY) throw error(name, FormatRule.WRONG_TYPE, "expected an array");
        if (value.elements().size() > maxCount) {
            throw error(name, FormatRule.TOO_MANY_ELEMENTS, "more than " + maxCount + " elements");
        }
        return value.elements();
    }

    List<JsonValue> optionalArray(String name, int maxCount) throws FormatException {
        if (object.get(name) == null) return null;
        return array(name, maxCount);
    }

    void documentHeader(String expected) throws FormatException {
        String type = string("type");
        if (!type.equals(expected)) {
            throw error("type", FormatRule.WRONG_DOCUMENT_TYPE, "type is \"" + type + "\", expected \"" + expected + "\"");
        }
        long version = integer("specVersion");
        if (version != Limits.SPEC_VERSION) {
            throw error("specVersion", FormatRule.UNSUPPORTED_SPEC_VERSION,
                    "specVersion " + version + " is not supported (this build supports " + Limits.SPEC_VERSION + ")");
        }
    }

    void finish() throws FormatException {
        List<JsonValue.Member> members = object.members();
        for (int i = 0; i < read.length; i++) {
            JsonValue.Member member = members.get(i);
            if (!read[i] && !member.name.startsWith("x-")) {
                throw new FormatException(path(), FormatRule.UNKNOWN_MEMBER,
                        "unknown member \"" + member.name + "\" (extensions must start with \"x-\")");
            }
        }
    }
}
