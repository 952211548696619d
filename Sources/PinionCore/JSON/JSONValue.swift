// The JSON value tree produced by the strict parser: ordered members, integers kept exact.

/// A parsed JSON value. Object members keep their order; numbers keep their text so
/// that integer fields can be checked exactly (no Double rounding).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number exactly as written (RFC 8259 §6 grammar already checked).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A JSON object with its members in document order and unique names.
public struct JSONObject: Sendable, Equatable {
    /// One `"name": value` pair.
    public struct Member: Sendable, Equatable {
        public var name: String
        public var value: JSONValue

        public init(_ name: String, _ value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// Members in document order.
    public private(set) var members: [Member]

    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value of the member `name`, if present.
    public subscript(name: String) -> JSONValue? {
        members.first(where: { $0.name == name })?.value
    }

    /// Appends a member, or replaces the value of an existing member of that name.
    public mutating func set(_ name: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.name == name }) {
            members[index].value = value
        } else {
            members.append(Member(name, value))
        }
    }
}
