// PKCS#11 URIs (RFC 7512): a pure parser and printer for the URIs that name hardware keys.

/// Why a text is not a PKCS#11 URI Pinion accepts (RFC 7512 §2.3, restricted as
/// docs/DESIGN.md §13 says).
public enum PKCS11URIError: Error, Equatable, CustomStringConvertible {
    /// The text does not start with `pkcs11:`.
    case notAPKCS11URI
    /// Longer than `PKCS11URI.maximumLength` bytes.
    case tooLong(limit: Int)
    /// A `%` not followed by two hex digits, or a byte RFC 7512 does not allow unescaped.
    case badEncoding(attribute: String)
    /// An attribute (path or query) RFC 7512 does not define and that does not start with
    /// `x-`; carries its name.
    case unknownAttribute(String)
    /// The same attribute twice; carries its name.
    case duplicateAttribute(String)
    /// A component without `=`, or with an empty name.
    case malformedComponent(String)
    /// `type=` other than private, public, cert, secret-key or data.
    case badObjectType(String)
    /// `pin-value=` in the URI: a PIN in a command line or a file of URIs leaks into
    /// shell history and process listings, so it is refused.
    case pinValueRefused
    /// A `pin-source` that is not `file:` with an absolute path (a command source such as
    /// `|/bin/prog` runs a program: refused); carries the value.
    case pinSourceRefused(String)
    /// A `slot-id` that is not a decimal number.
    case badSlotID(String)

    /// A one-line message for the user.
    public var description: String {
        switch self {
        case .notAPKCS11URI: return "not a PKCS#11 URI (RFC 7512): it must start with pkcs11:"
        case .tooLong(let limit): return "the PKCS#11 URI is longer than \(limit) bytes"
        case .badEncoding(let attribute):
            return "PKCS#11 URI attribute \(attribute): bad percent-encoding or a character that must be escaped"
        case .unknownAttribute(let name): return "PKCS#11 URI attribute \(name) is not defined by RFC 7512"
        case .duplicateAttribute(let name): return "PKCS#11 URI attribute \(name) is given twice"
        case .malformedComponent(let text): return "PKCS#11 URI component \"\(text)\" is not NAME=VALUE"
        case .badObjectType(let value):
            return "PKCS#11 URI type=\(value): expected private, public, cert, secret-key or data"
        case .pinValueRefused:
            return
                "PKCS#11 URI pin-value is refused (the PIN would sit in shell history and process listings); use pin-source=file:/PATH, PINION_PKCS11_PIN or the terminal"
        case .pinSourceRefused(let value):
            return
                "PKCS#11 URI pin-source=\(value) is refused: only pin-source=file:/ABSOLUTE/PATH is accepted (no commands)"
        case .badSlotID(let value): return "PKCS#11 URI slot-id=\(value) is not a decimal number"
        }
    }
}

/// A parsed PKCS#11 URI (RFC 7512): which token (path attributes `token`, `manufacturer`,
/// `serial`, `model`, `slot-id`), which object (`object` = CKA_LABEL, `id` = CKA_ID bytes,
/// `type`) and where the PIN comes from (`pin-source`, a file only).
///
/// Values are percent-decoded. Attributes Pinion does not use but RFC 7512 defines
/// (`library-*`, `slot-*`, `module-name`, `module-path`) and vendor attributes (`x-...`)
/// are accepted and kept out of matching; unknown ones, duplicates, `pin-value` and command
/// PIN sources are refused.
public struct PKCS11URI: Sendable, Equatable, CustomStringConvertible {
    /// Longest URI accepted, in bytes.
    public static let maximumLength = 4096

    /// CKA_LABEL of the token (`token=`), up to 32 bytes in the token, compared exactly.
    public var token: String?
    /// Token manufacturerID (`manufacturer=`).
    public var manufacturer: String?
    /// Token serialNumber (`serial=`).
    public var serial: String?
    /// Token model (`model=`).
    public var model: String?
    /// The slot id (`slot-id=`, decimal).
    public var slotID: UInt64?
    /// The object's CKA_LABEL (`object=`).
    public var object: String?
    /// The object's CKA_ID bytes (`id=`, percent-encoded bytes).
    public var id: [UInt8]?
    /// The object class (`type=`): private, public, cert, secret-key or data.
    public var type: String?
    /// The absolute path of the file holding the PIN (`pin-source=file:...`).
    public var pinSourceFile: String?
    /// `module-path=`: the module the URI names. Used when neither --pkcs11-module nor
    /// PINION_PKCS11_MODULE is given; when one is, it must name the same path
    /// (`PKCS11Module.path(option:uri:)`).
    public var modulePath: String?

    /// A URI with no attributes (`pkcs11:`: every token, every object).
    public init() {}

    private static let pathAttributes: Set<String> = [
        "token", "manufacturer", "serial", "model", "object", "id", "type",
        "library-manufacturer", "library-description", "library-version",
        "slot-manufacturer", "slot-description", "slot-id",
    ]
    private static let queryAttributes: Set<String> = ["pin-source", "pin-value", "module-name", "module-path"]

    /// Whether `text` looks like a PKCS#11 URI (starts with `pkcs11:`), so a command can
    /// tell a URI from a file name before parsing.
    public static func isURI(_ text: String) -> Bool { text.hasPrefix("pkcs11:") }

    /// Parses a PKCS#11 URI.
    ///
    /// - Parameter text: `pkcs11:` then `;`-separated path attributes, optionally `?` and
    ///   `&`-separated query attributes (RFC 7512 §2.3).
    /// - Throws: `PKCS11URIError`.
    public init(parsing text: String) throws(PKCS11URIError) {
        guard text.utf8.count <= Self.maximumLength else { throw .tooLong(limit: Self.maximumLength) }
        guard Self.isURI(text) else { throw .notAPKCS11URI }
        let rest = Substring(text.dropFirst("pkcs11:".count))
        let pathPart: Substring
        let queryPart: Substring?
        if let mark = rest.firstIndex(of: "?") {
            pathPart = rest[..<mark]
            queryPart = rest[rest.index(after: mark)...]
        } else {
            pathPart = rest
            queryPart = nil
        }
        var seen = Set<String>()
        for component in pathPart.split(separator: ";", omittingEmptySubsequences: true) {
            let (name, raw) = try Self.split(component)
            guard Self.pathAttributes.contains(name) || name.hasPrefix("x-") else { throw .unknownAttribute(name) }
            guard seen.insert(name).inserted else { throw .duplicateAttribute(name) }
            let bytes = try Self.percentDecode(raw, attribute: name)
            try assign(name, bytes: bytes)
        }
        if let queryPart {
            for component in queryPart.split(separator: "&", omittingEmptySubsequences: true) {
                let (name, raw) = try Self.split(component)
                guard Self.queryAttributes.contains(name) || name.hasPrefix("x-") else {
                    throw .unknownAttribute(name)
                }
                guard seen.insert(name).inserted else { throw .duplicateAttribute(name) }
                let bytes = try Self.percentDecode(raw, attribute: name)
                try assign(name, bytes: bytes)
            }
        }
    }

    private mutating func assign(_ name: String, bytes: [UInt8]) throws(PKCS11URIError) {
        func text() throws(PKCS11URIError) -> String {
            guard let value = String(validating: bytes, as: UTF8.self) else { throw .badEncoding(attribute: name) }
            return value
        }
        switch name {
        case "token": token = try text()
        case "manufacturer": manufacturer = try text()
        case "serial": serial = try text()
        case "model": model = try text()
        case "object": object = try text()
        case "id": id = bytes
        case "type":
            let value = try text()
            guard ["private", "public", "cert", "secret-key", "data"].contains(value) else {
                throw .badObjectType(value)
            }
            type = value
        case "slot-id":
            let value = try text()
            guard !value.isEmpty, value.utf8.count <= 20, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = UInt64(value)
            else { throw .badSlotID(value) }
            slotID = number
        case "pin-value": throw .pinValueRefused
        case "pin-source":
            let value = try text()
            pinSourceFile = try Self.pinSourcePath(value)
        case "module-path": modulePath = try text()
        default: break  // defined but unused by Pinion (library-*, slot-*, module-name, x-*)
        }
    }

    /// `file:/abs`, `file:///abs` and `file://localhost/abs` give `/abs`; anything else is
    /// refused (RFC 7512 §2.3 lets pin-source be any URI; Pinion reads files only).
    private static func pinSourcePath(_ value: String) throws(PKCS11URIError) -> String {
        var path: Substring
        if value.hasPrefix("file://localhost/") {
            path = value.dropFirst("file://localhost".count)
        } else if value.hasPrefix("file:///") {
            path = value.dropFirst("file://".count)
        } else if value.hasPrefix("file:/"), !value.hasPrefix("file://") {
            path = value.dropFirst("file:".count)
        } else {
            throw .pinSourceRefused(value)
        }
        while path.hasPrefix("//") { path = path.dropFirst() }
        guard path.count > 1, !path.utf8.contains(0) else { throw .pinSourceRefused(value) }
        return String(path)
    }

    private static func split(_ component: Substring) throws(PKCS11URIError) -> (String, Substring) {
        guard let equals = component.firstIndex(of: "="), equals != component.startIndex else {
            throw .malformedComponent(String(component))
        }
        return (String(component[..<equals]), component[component.index(after: equals)...])
    }

    /// Percent-decodes one value (RFC 3986 §2.1). Unescaped bytes must be printable ASCII
    /// other than the delimiters `;`, `?`, `&`, `#`, `%` and space.
    static func percentDecode(_ raw: Substring, attribute: String) throws(PKCS11URIError) -> [UInt8] {
        var out: [UInt8] = []
        let bytes = Array(raw.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { throw .badEncoding(attribute: attribute) }
                out.append(high << 4 | low)
                index += 3
                continue
            }
            guard byte > 0x20, byte < 0x7F, !Array(";?&#% \"<>[]\\^`{|}".utf8).contains(byte) else {
                throw .badEncoding(attribute: attribute)
            }
            out.append(byte)
            index += 1
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The URI in RFC 7512 form: path attributes in the order model, manufacturer, serial,
    /// token, slot-id, object, id, type; `pin-source` as a query. `id` is printed as
    /// `%XX` for every byte; other values escape everything outside RFC 3986 unreserved
    /// characters.
    public var description: String {
        var parts: [String] = []
        func add(_ name: String, _ value: String?) {
            if let value { parts.append(name + "=" + Self.percentEncode(Array(value.utf8))) }
        }
        add("model", model)
        add("manufacturer", manufacturer)
        add("serial", serial)
        add("token", token)
        if let slotID { parts.append("slot-id=\(slotID)") }
        add("object", object)
        if let id { parts.append("id=" + id.map { Self.hexByte($0) }.joined()) }
        add("type", type)
        var text = "pkcs11:" + parts.joined(separator: ";")
        if let pinSourceFile { text += "?pin-source=" + Self.percentEncode(Array(("file:" + pinSourceFile).utf8)) }
        return text
    }

    private static func percentEncode(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            let isUnreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":")
            text += isUnreserved ? String(UnicodeScalar(byte)) : hexByte(byte)
        }
        return text
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
