// Encodings for pins and labels: subjects, key types and SubjectPublicKeyInfo DER with OpenSSL.

import COpenSSL
import CPinionShims
import PinionCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Encodings

/// Encodings of pins and descriptions of keys and names (OpenSSL error text, DER
/// encoding and SHA-256 are in `OpenSSLSupport`).
enum SPKIEncoding {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Canonical padded base64 (RFC 4648 §4).
    static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(triple >> 18 & 0x3f)])
            out.append(alphabet[Int(triple >> 12 & 0x3f)])
            out.append(remaining > 1 ? alphabet[Int(triple >> 6 & 0x3f)] : 0x3d)
            out.append(remaining > 2 ? alphabet[Int(triple & 0x3f)] : 0x3d)
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 6-bit value of a base64 alphabet character (RFC 4648 §4), nil otherwise.
    static func base64Value(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x41...0x5a: return UInt32(byte - 0x41)
        case 0x61...0x7a: return UInt32(byte - 0x61 + 26)
        case 0x30...0x39: return UInt32(byte - 0x30 + 52)
        case 0x2b: return 62
        case 0x2f: return 63
        default: return nil
        }
    }

    /// Lowercase hex.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Key type of a SubjectPublicKeyInfo; `unknown (<algorithm>)` when OpenSSL does not
    /// decode the key.
    static func keyType(ofSPKI pubkey: OpaquePointer) -> String {
        ERR_set_mark()
        defer { ERR_pop_to_mark() }
        if let key = X509_PUBKEY_get0(pubkey) { return keyType(ofKey: key) }
        var algorithm: OpaquePointer?
        guard X509_PUBKEY_get0_param(&algorithm, nil, nil, nil, pubkey) == 1, let algorithm else {
            return "unknown"
        }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), algorithm, 0)
        guard length > 0 else { return "unknown" }
        return "unknown (\(cString(buffer)))"
    }

    /// Key type of an `EVP_PKEY`: `RSA 2048`, `EC P-256`, `Ed25519`, ...
    static func keyType(ofKey key: OpaquePointer) -> String {
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_RSA_PSS: return "RSA-PSS \(bits)"
        case EVP_PKEY_DSA: return "DSA \(bits)"
        case EVP_PKEY_ED25519: return "Ed25519"
        case EVP_PKEY_ED448: return "Ed448"
        case EVP_PKEY_X25519: return "X25519"
        case EVP_PKEY_X448: return "X448"
        case EVP_PKEY_EC:
            var buffer = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
                return "EC \(bits)-bit (explicit parameters)"
            }
            switch cString(buffer) {
            case "prime256v1", "P-256", "secp256r1": return "EC P-256"
            case "secp384r1", "P-384": return "EC P-384"
            case "secp521r1", "P-521": return "EC P-521"
            case let name: return "EC \(name)"
            }
        default:
            if let name = EVP_PKEY_get0_type_name(key) { return String(cString: name) }
            return "unknown"
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF")

    /// An `X509_NAME` as an RFC 2253 one-line string with UTF-8 text; control, format
    /// (bidirectional overrides) and line separator characters are escaped as `\XX` per
    /// UTF-8 byte so that a subject cannot drive a terminal.
    static func subject(_ name: OpaquePointer?) -> String {
        guard let name, let bio = OwnedBIO(taking: BIO_new(BIO_s_mem())) else { return "(unreadable subject)" }
        return bio.withPointer { bio in subject(name, printedInto: bio) }
    }

    /// `subject(_:)` with the memory BIO the name is printed into.
    private static func subject(_ name: OpaquePointer, printedInto bio: OpaquePointer) -> String {
        guard X509_NAME_print_ex(bio, name, 0, pinion_x509_name_flags_rfc2253_utf8()) >= 0 else {
            ERR_clear_error()
            return "(unreadable subject)"
        }
        var data: UnsafeMutablePointer<CChar>?
        let length = pinion_x509_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return "(empty subject)" }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                // RFC 2253 §2.4 hex pairs, one per UTF-8 byte: no terminal control or
                // bidirectional override reaches the operator's screen.
                for byte in String(scalar).utf8 {
                    escaped += "\\" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0x0f)])
                }
            default:
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    static func cString(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
