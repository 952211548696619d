// Typed, path-aware access to a parsed JSON object, used by every document schema.

/// Reads the members of one JSON object for a schema: required and optional members with
/// types checked, and, at `finish()`, an error for any member the schema did not read
/// (names starting with `x-` are extensions and are ignored, docs/DESIGN.md §5).
struct SchemaReader {
    let object: JSONObject
    let path: String
    private var read = Set<String>()

    init(_ value: JSONValue, path: String) throws(FormatError) {
        guard case .object(let object) = value else {
            throw FormatError(path: path, rule: .wrongType(expected: "an object"))
        }
        self.object = object
        self.path = path
    }

    func childPath(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func error(_ name: String, _ rule: FormatRule) -> FormatError {
        FormatError(path: childPath(name), rule: rule)
    }

    mutating func optional(_ name: String) -> JSONValue? {
        read.insert(name)
        return object[name]
    }

    mutating func required(_ name: String) throws(FormatError) -> JSONValue {
        guard let value = optional(name) else {
            throw FormatError(path: path, rule: .missingMember(name))
        }
        return value
    }

    mutating func string(_ name: String) throws(FormatError) -> String {
        guard case .string(let text) = try required(name) else {
            throw error(name, .wrongType(expected: "a string"))
        }
        return text
    }

    mutating func optionalString(_ name: String) throws(FormatError) -> String? {
        guard let value = optional(name) else { return nil }
        guard case .string(let text) = value else {
            throw error(name, .wrongType(expected: "a string"))
        }
        return text
    }

    mutating func bool(_ name: String, default defaultValue: Bool) throws(FormatError) -> Bool {
        guard let value = optional(name) else { return defaultValue }
        guard case .bool(let flag) = value else {
            throw error(name, .wrongType(expected: "true or false"))
        }
        return flag
    }

    mutating func integer(_ name: String, in range: ClosedRange<Int64> = 1...Limits.maxInteger)
        throws(FormatError)
        -> Int64
    {
        try SchemaReader.integer(try required(name), path: childPath(name), in: range)
    }

    static func integer(_ value: JSONValue, path: String, in range: ClosedRange<Int64>)
        throws(FormatError) -> Int64
    {
        guard case .number(let text) = value else {
            throw FormatError(path: path, rule: .wrongType(expected: "an integer"))
        }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            throw FormatError(path: path, rule: .notAnInteger)
        }
        guard let number = Int64(text), range.contains(number) else {
            throw FormatError(
                path: path, rule: .integerOutOfRange(min: range.lowerBound, max: range.upperBound))
        }
        return number
    }

    mutating func time(_ name: String) throws(FormatError) -> Timestamp {
        let text = try string(name)
        do {
            return try Timestamp(rfc3339: text)
        } catch let rule {
            throw error(name, rule)
        }
    }

    mutating func array(_ name: String, maxCount: Int? = nil) throws(FormatError) -> [JSONValue] {
        guard case .array(let elements) = try required(name) else {
            throw error(name, .wrongType(expected: "an array"))
        }
        if let maxCount, elements.count > maxCount {
            throw error(name, .tooManyElements(limit: maxCount))
        }
        return elements
    }

    mutating func optionalArray(_ name: String, maxCount: Int? = nil) throws(FormatError)
        -> [JSONValue]?
    {
        guard object[name] != nil else {
            read.insert(name)
            return nil
        }
        return try array(name, maxCount: maxCount)
    }

    /// Checks `type` and `specVersion` (docs/DESIGN.md §5: a newer specVersion names both).
    mutating func documentHeader(type expected: String) throws(FormatError) {
        let type = try string("type")
        guard type == expected else {
            throw error("type", .wrongDocumentType(expected: expected, found: type))
        }
        let version = try integer("specVersion")
        guard version == Limits.specVersion else {
            throw error(
                "specVersion", .unsupportedSpecVersion(found: version, supported: Limits.specVersion))
        }
    }

    /// Members not read by the schema, excluding `x-` extensions; throws on the first.
    func finish() throws(FormatError) {
        for member in object.members where !read.contains(member.name) && !member.name.hasPrefix("x-") {
            throw FormatError(path: path, rule: .unknownMember(member.name))
        }
    }

    /// The `x-` members, kept so that editing a payload does not drop them.
    var extensions: [JSONObject.Member] {
        object.members.filter { $0.name.hasPrefix("x-") }
    }

    /// Path of element `index` of the array member `name`.
    func elementPath(_ name: String, _ index: Int) -> String { "\(childPath(name))[\(index)]" }
}
