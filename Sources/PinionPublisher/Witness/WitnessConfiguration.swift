// The witness's configuration file (`pinion witness --config`): its key name and the logs it witnesses, parsed strictly.

import PinionCore

/// Why a witness configuration file is refused.
public struct WitnessConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the member.
    public let description: String

    init(_ description: String) { self.description = description }
}

/// What a witness witnesses (docs/TRANSPARENCY.md "Running a witness").
///
/// The file is strict JSON (RFC 8259, no duplicate or unknown members), at most 1 MiB:
///
/// ```json
/// {"name": "witness1.example.org",
///  "logs": [{"origin": "example.com/pinion/com.example.app",
///            "key": "example.com/pinion/com.example.app+1a2b3c4d+AQ..."}]}
/// ```
///
/// `name` is the witness's note key name (C2SP signed-note key name: non-empty, no `+`, no
/// whitespace, and here no control character); `logs` lists 1 to 4,096 logs, each with its
/// checkpoint origin (`LogPolicy.validateCheckpointOrigin`: 1-256 bytes without control
/// characters, the rule a root's origin also passes; once per file) and the log's C2SP
/// verifier key string (key type 0x01, Ed25519; its key name may differ from the origin:
/// C2SP tlog-checkpoint says only SHOULD).
public struct WitnessConfiguration: Sendable, Equatable {
    /// One witnessed log.
    public struct Log: Sendable, Equatable {
        /// The checkpoint origin line.
        public let origin: String
        /// The log's verifier key (type 0x01).
        public let key: NoteVerifierKey
    }

    /// Largest configuration file, in bytes.
    public static let maxBytes = 1 << 20
    /// Most logs in one file.
    public static let maxLogs = 4096

    /// The witness's key name (its cosignatures' key name, and the name in its verifier key string).
    public let name: String
    /// The witnessed logs, in file order.
    public let logs: [Log]

    /// The trusted log keys by origin, as `WitnessDecision.decide` takes them.
    public var logKeys: [String: [NoteVerifierKey]] {
        Dictionary(uniqueKeysWithValues: logs.map { ($0.origin, [$0.key]) })
    }

    /// Parses a configuration file's bytes.
    ///
    /// - Parameters:
    ///   - bytes: the file.
    ///   - hasher: SHA-256, for the verifier keys' key IDs.
    /// - Throws: `WitnessConfigurationError` naming the offending member.
    public static func parse(_ bytes: [UInt8], hasher: any SHA256Hasher) throws(WitnessConfigurationError)
        -> WitnessConfiguration
    {
        guard bytes.count <= maxBytes else { throw .init("the file is larger than \(maxBytes) bytes") }
        let value: JSONValue
        do {
            value = try StrictJSONParser.parse(
                bytes, limits: JSONLimits(maxBytes: maxBytes, maxDepth: 8, maxElements: 4 * maxLogs + 16))
        } catch {
            throw .init("not strict JSON: \(error)")
        }
        guard case .object(let top) = value else { throw .init("the file must hold one JSON object") }
        try onlyMembers(top, ["name", "logs"], at: "the top level")
        guard case .string(let name)? = top["name"] else { throw .init("\"name\" must be a string") }
        do { try NoteVerifierKey.validateName(name) } catch {
            throw .init("\"name\": not a note key name: \(error)")
        }
        // C2SP signed-note forbids only spaces and "+"; a control character (NUL, ESC) in the
        // name every cosignature line and log message carries is refused here.
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw .init("\"name\": a control character is not allowed in the witness name")
        }
        guard case .array(let entries)? = top["logs"] else { throw .init("\"logs\" must be an array") }
        guard !entries.isEmpty, entries.count <= maxLogs else {
            throw .init("\"logs\" must list 1 to \(maxLogs) logs")
        }
        var logs: [Log] = []
        var origins = Set<String>()
        for (index, entry) in entries.enumerated() {
            let place = "logs[\(index)]"
            guard case .object(let object) = entry else { throw .init("\(place) must be an object") }
            try onlyMembers(object, ["origin", "key"], at: place)
            guard case .string(let origin)? = object["origin"] else { throw .init("\(place).origin must be a string") }
            do { try LogPolicy.validateCheckpointOrigin(origin) } catch {
                throw .init("\(place).origin: \(error)")
            }
            guard origins.insert(origin).inserted else { throw .init("\(place).origin \(origin) is listed twice") }
            guard case .string(let keyText)? = object["key"] else { throw .init("\(place).key must be a string") }
            let key: NoteVerifierKey
            do { key = try NoteVerifierKey(parsing: keyText, hasher: hasher) } catch {
                throw .init("\(place).key: not a C2SP verifier key string: \(error)")
            }
            guard key.type == .ed25519 else {
                throw .init("\(place).key must be a log key (type 0x01, Ed25519), not a cosignature key")
            }
            logs.append(Log(origin: origin, key: key))
        }
        return WitnessConfiguration(name: name, logs: logs)
    }

    private static func onlyMembers(_ object: JSONObject, _ allowed: Set<String>, at place: String)
        throws(WitnessConfigurationError)
    {
        for member in object.members where !allowed.contains(member.name) {
            throw .init("unknown member \"\(member.name)\" at \(place)")
        }
        for name in allowed.sorted() where object[name] == nil {
            throw .init("missing member \"\(name)\" at \(place)")
        }
    }
}
