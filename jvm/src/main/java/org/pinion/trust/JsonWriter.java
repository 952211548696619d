// Deterministic JSON output, byte-identical to the Swift JSONWriter (two-space indent, final newline).
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Writes a {@link JsonValue} as the Swift {@code JSONWriter} does: members in order, {@code /} unescaped. */
public final class JsonWriter {
    private JsonWriter() {}

    /** @param value the value @return UTF-8 bytes, two-space indented, ending in a newline */
    public static byte[] write(JsonValue value) {
        StringBuilder out = new StringBuilder();
        append(value, 0, out);
        out.append('\n');
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** @param text any string @return the JSON string literal */
    public static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }

    private static void indent(StringBuilder out, int level) {
        for (int i = 0; i < level; i++) out.append("  ");
    }

    private static void append(JsonValue value, int level, StringBuilder out) {
        switch (value.kind()) {
            case NULL: out.append("null"); return;
            case BOOL: out.append(value.flag() ? "true" : "false"); return;
            case NUMBER: out.append(value.text()); return;
            case STRING: out.append(quote(value.text())); return;
            case ARRAY: {
                List<JsonValue> elements = value.elements();
                if (elements.isEmpty()) {
                    out.append("[]");
                    return;
                }
                out.append("[\n");
                for (int i = 0; i < elements.size(); i++) {
                    indent(out, level + 1);
                    append(elements.get(i), level + 1, out);
                    out.append(i + 1 < elements.size() ? ",\n" : "\n");
                }
                indent(out, level);
                out.append(']');
                return;
            }
            default: {
                List<JsonValue.Member> members = value.members();
                if (members.isEmpty()) {
                    out.append("{}");
                    return;
                }
                out.append("{\n");
                for (int i = 0; i < members.size(); i++) {
                    indent(out, level + 1);
                    out.append(quote(members.get(i).name)).append(": ");
                    append(members.get(i).value, level + 1, out);
                    out.append(i + 1 < members.size() ? ",\n" : "\n");
                }
                indent(out, level);
                out.append('}');
            }
        }
    }
}
