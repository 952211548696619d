// Every member of a root, manifest or envelope as path/value leaves, so review tools list
// (and diff) members their tables do not name, `x-` extensions at any depth included.

import PinionCore

/// One leaf member of a JSON document: where it is and its value as text.
public struct DocumentMember: Sendable, Equatable {
    /// The member's path: object members joined by `.`, array elements keyed by their natural
    /// key in brackets (`domains[api.example.com].pins[sha256/…]`, `signatures[<keyid>].sig`).
    public var path: String
    /// `path` with array keys written `[]` and 64-hex key ids written `*`: the member's place
    /// in the schema (`domains[].pins[]`, `keys.*.public`).
    public var pattern: String
    /// The value: a string's text, a number as written, `true`/`false`, `null`, `listed`
    /// for an element of an array of strings, `[]` or `{}` for an empty container.
    public var value: String

    public init(path: String, pattern: String, value: String) {
        self.path = path
        self.pattern = pattern
        self.value = value
    }
}

/// A member whose value differs between two documents (absent on one side when nil).
public struct MemberChange: Sendable, Equatable {
    public var path: String
    public var old: String?
    public var new: String?

    public init(path: String, old: String?, new: String?) {
        self.path = path
        self.old = old
        self.new = new
    }
}

/// Walks documents into `DocumentMember` leaves and compares them.
public enum DocumentMembers {
    /// Member patterns the root table and root diff render by name (docs/DESIGN.md §4); every
    /// other member is listed as it is.
    public static let rootRendered: Set<String> = [
        "type", "specVersion", "scope", "version", "issuedAt", "expiresAt", "maxManifestLifetime", "keys.*.type",
        "keys.*.public", "roles.root.keyids[]", "roles.root.threshold", "roles.pins.keyids[]",
        "roles.pins.threshold", "pinsRoleSince", "log.origin", "log.key", "log.witnesses[].key",
        "log.witnesses[].url", "log.quorum", "log.maxCheckpointAge", "log.checkpointGrace",
    ]

    /// Member patterns the manifest table and manifest diff render by name (docs/DESIGN.md §5).
    public static let manifestRendered: Set<String> = Set<String>([
        "type", "specVersion", "scope", "rootVersion", "version", "issuedAt", "expiresAt", "previous",
        "domains[].name", "domains[].includeSubdomains", "domains[].enforce", "domains[].pins[]", "revokedPins[]",
    ]).union(emptyLists)

    /// Envelope member patterns rendered by name (DSSE: the payload is rendered as a document).
    public static let envelopeRendered: Set<String> = Set<String>([
        "payloadType", "payload", "signatures[].keyid", "signatures[].sig",
    ]).union(emptyLists)

    /// Lists that may be empty, rendered by the tables' counts ("domains 0", "revokedPins 0",
    /// "signatures none"): an empty list is a leaf of its own, and no other member.
    public static let emptyLists: Set<String> = ["domains", "revokedPins", "signatures"]

    /// The leaves of `value` in document order.
    ///
    /// - Parameter value: a parsed document (any JSON value).
    /// - Returns: one entry per scalar, per element of an array of strings, per empty container.
    public static func leaves(_ value: JSONValue) -> [DocumentMember] {
        var output: [DocumentMember] = []
        walk(value, path: "", pattern: "", into: &output)
        return output
    }

    /// Leaves whose pattern is not in `rendered`.
    public static func unrendered(_ value: JSONValue, rendered: Set<String>) -> [DocumentMember] {
        leaves(value).filter { !rendered.contains($0.pattern) }
    }

    /// The members that differ between `old` and `new`, limited to patterns not in
    /// `rendered`, in `new`'s order then the ones only `old` has.
    public static func changes(_ old: JSONValue, _ new: JSONValue, rendered: Set<String>) -> [MemberChange] {
        let oldLeaves = unrendered(old, rendered: rendered)
        let newLeaves = unrendered(new, rendered: rendered)
        var oldByPath: [String: String] = [:]
        for leaf in oldLeaves { oldByPath[leaf.path] = leaf.value }
        var seen = Set<String>()
        var output: [MemberChange] = []
        for leaf in newLeaves {
            seen.insert(leaf.path)
            let before = oldByPath[leaf.path]
            if before != leaf.value { output.append(MemberChange(path: leaf.path, old: before, new: leaf.value)) }
        }
        for leaf in oldLeaves where !seen.contains(leaf.path) {
            output.append(MemberChange(path: leaf.path, old: leaf.value, new: nil))
        }
        return output
    }

    /// A change as one line: `+ path = new`, `- path = old` or `~ path: old -> new`.
    public static func line(_ change: MemberChange) -> String {
        switch (change.old, change.new) {
        case (nil, let new?): return "+ \(change.path) = \(new)"
        case (let old?, nil): return "- \(change.path) = \(old)"
        case (let old?, let new?): return "~ \(change.path): \(old) -> \(new)"
        case (nil, nil): return "~ \(change.path)"
        }
    }

    private static func walk(_ value: JSONValue, path: String, pattern: String, into output: inout [DocumentMember]) {
        switch value {
        case .object(let object):
            if object.members.isEmpty {
                output.append(DocumentMember(path: path, pattern: pattern, value: "{}"))
            }
            for member in object.members {
                let name = isKeyID(member.name) ? "*" : member.name
                walk(
                    member.value, path: path.isEmpty ? member.name : "\(path).\(member.name)",
                    pattern: pattern.isEmpty ? name : "\(pattern).\(name)", into: &output)
            }
        case .array(let elements):
            if elements.isEmpty { output.append(DocumentMember(path: path, pattern: pattern, value: "[]")) }
            for (index, element) in elements.enumerated() {
                let elementPath = "\(path)[\(key(element) ?? String(index))]"
                if case .string = element {
                    output.append(DocumentMember(path: elementPath, pattern: pattern + "[]", value: "listed"))
                } else {
                    walk(element, path: elementPath, pattern: pattern + "[]", into: &output)
                }
            }
        case .string(let text): output.append(DocumentMember(path: path, pattern: pattern, value: text))
        case .number(let text): output.append(DocumentMember(path: path, pattern: pattern, value: text))
        case .bool(let flag):
            output.append(DocumentMember(path: path, pattern: pattern, value: flag ? "true" : "false"))
        case .null: output.append(DocumentMember(path: path, pattern: pattern, value: "null"))
        }
    }

    /// An array element's natural key: a string element itself, else an object's `name`,
    /// `keyid`, or the name part of its note verifier `key` (a witness).
    private static func key(_ element: JSONValue) -> String? {
        switch element {
        case .string(let text): return text
        case .object(let object):
            if case .string(let name)? = object["name"] { return name }
            if case .string(let id)? = object["keyid"] { return id }
            if case .string(let key)? = object["key"] { return String(key.split(separator: "+").first ?? "") }
            return nil
        default: return nil
        }
    }

    private static func isKeyID(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
