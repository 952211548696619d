// The RFC 9110 byte classes both HTTP/1.1 parsers share: token characters and field-value bytes.

/// Byte classes of HTTP semantics (RFC 9110), used by the SDK's response parser
/// (`HTTPResponseParser`), `pinion serve`'s request parser and the HTTPS client's request
/// header checks.
public enum HTTPSyntax {
    /// RFC 9110 §5.6.2 tchar: `!#$%&'*+-.^_`|~`, digits and letters.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: return true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2a, 0x2b, 0x2d, 0x2e, 0x5e, 0x5f, 0x60, 0x7c, 0x7e: return true
        default: return false
        }
    }

    /// RFC 9110 §5.5 field-vchar, SP or HTAB: no control character (CR, LF, NUL, DEL
    /// included) other than tab; obs-text (0x80-0xFF) allowed.
    public static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7f)
    }
}
