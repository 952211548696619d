// Deterministic JSON output for the payloads and envelopes Pinion writes.
//
// Written here rather than with JSONSerialization because Pinion's payload bytes are
// signed as produced and must read well: members in the schema's order (not hashed or
// sorted), `/` unescaped in pins, integers never formatted through Double, and the same
// bytes on every platform.

/// Serialises a `JSONValue` with two-space indentation and a final newline.
public enum JSONWriter {
    /// - Returns: UTF-8 bytes of `value`, indented, ending with `\n`.
    public static func write(_ value: JSONValue) -> [UInt8] {
        var output = ""
        append(value, indent: 0, to: &output)
        output += "\n"
        return Array(output.utf8)
    }

    /// A JSON string literal for `text` (RFC 8259 §7 escapes; non-ASCII left as UTF-8).
    public static func quote(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
    }

    private static func append(_ value: JSONValue, indent: Int, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): output += quote(text)
        case .array(let elements):
            if elements.isEmpty {
                output += "[]"
                return
            }
            // Arrays of scalars stay on one line per element; nested containers indent.
            output += "[\n"
            for (position, element) in elements.enumerated() {
                output += String(repeating: "  ", count: indent + 1)
                append(element, indent: indent + 1, to: &output)
                output += position + 1 < elements.count ? ",\n" : "\n"
            }
            output += String(repeating: "  ", count: indent) + "]"
        case .object(let object):
            if object.members.isEmpty {
                output += "{}"
                return
            }
            output += "{\n"
            for (position, member) in object.members.enumerated() {
                output += String(repeating: "  ", count: indent + 1) + quote(member.name) + ": "
                append(member.value, indent: indent + 1, to: &output)
                output += position + 1 < object.members.count ? ",\n" : "\n"
            }
            output += String(repeating: "  ", count: indent) + "}"
        }
    }
}
