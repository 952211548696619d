// Typed, path-aware access to a parsed JSON object, used by every document schema.

/// Reads the members of one JSON object for a schema: required and optional members with
/// types checked, and, at `finish()`, an error for any member the schema did not read
/// (names starting with `x-` are extensions and are ignored, docs/DESIGN.md §5).
struct SchemaReader {
    let object: JSONObject
    /// Where the object is, rendered only when an error needs it.
    private let location: Location
    /// Members read by the schema, by position: bit i for member i < 64 (a set of names per
    /// object was a tenth of a manifest parse, bench/RESULTS.md), then `readBeyond`.
    private var readMask: UInt64 = 0
    private var readBeyond = Set<Int>()

    /// A path as given, or element `index` of the array at `array` (`domains[3]`).
    private enum Location {
        case text(String)
        case element(array: String, index: Int)
    }

    init(_ value: JSONValue, path: String) throws(FormatError) {
        try self.init(value, location: .text(path))
    }

    /// A reader for element `index` of the array whose path is `array`; the path
    /// `array[index]` is rendered only for an error.
    init(_ value: JSONValue, array: String, index: Int) throws(FormatError) {
        try self.init(value, location: .element(array: array, index: index))
    }

    private init(_ value: JSONValue, location: Location) throws(FormatError) {
        self.location = location
        guard case .object(let object) = value else {
            throw FormatError(path: SchemaReader.render(location), rule: .wrongType(expected: "an object"))
        }
        self.object = object
    }

    /// The object's path, as error messages name it.
    var path: String { SchemaReader.render(location) }

    private static func render(_ location: Location) -> String {
        switch location {
        case .text(let text): return text
        case .element(let array, let index): return "\(array)[\(index)]"
        }
    }

    private mutating func markRead(_ position: Int) {
        if position < 64 { readMask |= 1 << UInt64(position) } else { readBeyond.insert(position) }
    }

    private func isRead(_ position: Int) -> Bool {
        position < 64 ? readMask & (1 << UInt64(position)) != 0 : readBeyond.contains(position)
    }

    /// Whether `name` is an `x-` extension member. No character is canonically equivalent to
    /// `x`, so a first byte other than `x` settles it without the String comparison.
    static func isExtension(_ name: String) -> Bool {
        name.utf8.first == UInt8(ascii: "x") && name.hasPrefix("x-")
    }

    func childPath(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func error(_ name: String, _ rule: FormatRule) -> FormatError {
        FormatError(path: childPath(name), rule: rule)
    }

    mutating func optional(_ name: String) -> JSONValue? {
        // Member names are unique (the parser refuses duplicates), so the first match is
        // the only one.
        guard let position = object.members.firstIndex(where: { $0.name == name }) else { return nil }
        markRead(position)
        return object.members[position].value
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
        guard object[name] != nil else { return nil }
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
        for (position, member) in object.members.enumerated()
        where !isRead(position) && !SchemaReader.isExtension(member.name) {
            throw FormatError(path: path, rule: .unknownMember(member.name))
        }
    }

    /// The `x-` members, kept so that editing a payload does not drop them.
    var extensions: [JSONObject.Member] {
        object.members.filter { SchemaReader.isExtension($0.name) }
    }

    /// Path of element `index` of the array member `name`.
    func elementPath(_ name: String, _ index: Int) -> String { "\(childPath(name))[\(index)]" }
}
