// Typed, path-aware access to one JSON object for a document schema; unknown members refused at finish().
package org.pinion.trust;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Reads one object's members with types checked; {@link #finish()} refuses unread non-{@code x-} members. */
final class SchemaReader {
    final JsonValue object;
    final String path;
    private final Set<String> read = new HashSet<>();

    SchemaReader(JsonValue value, String path) throws FormatException {
        if (value.kind() != JsonValue.Kind.OBJECT) throw new FormatException(path, FormatRule.WRONG_TYPE, "expected an object");
        this.object = value;
        this.path = path;
    }

    String childPath(String name) { return path.isEmpty() ? name : path + "." + name; }

    String elementPath(String name, int index) { return childPath(name) + "[" + index + "]"; }

    FormatException error(String name, FormatRule rule, String detail) {
        return new FormatException(childPath(name), rule, detail);
    }

    JsonValue optional(String name) {
        read.add(name);
        return object.get(name);
    }

    JsonValue required(String name) throws FormatException {
        JsonValue value = optional(name);
        if (value == null) {
            throw new FormatException(path, FormatRule.MISSING_MEMBER, "required member \"" + name + "\" is missing");
        }
        return value;
    }

    String string(String name) throws FormatException {
        JsonValue value = required(name);
        if (value.kind() != JsonValue.Kind.STRING) throw error(name, FormatRule.WRONG_TYPE, "expected a string");
        return value.text();
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
        if (object.get(name) == null) {
            read.add(name);
            return null;
        }
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
        for (JsonValue.Member member : object.members()) {
            if (!read.contains(member.name) && !member.name.startsWith("x-")) {
                throw new FormatException(path, FormatRule.UNKNOWN_MEMBER,
                        "unknown member \"" + member.name + "\" (extensions must start with \"x-\")");
            }
        }
    }
}
