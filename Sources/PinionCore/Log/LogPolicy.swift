// A root's `log` member as the client and publisher use it (docs/DESIGN.md §12): origin, keys, witnesses, quorum, ages.

/// Why a `log` configuration is invalid.
public enum LogPolicyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The quorum is not between 1 and the number of witnesses.
    case invalidQuorum(quorum: Int, witnesses: Int)
    /// One witness key listed twice (it would count twice toward the quorum).
    case duplicateWitnessKey(String)
    /// Two witnesses with one name.
    case duplicateWitnessName(String)
    /// The log's own key listed as a witness.
    case logKeyIsWitness(String)
    /// A key of the wrong note type: the log key must be 0x01, witness keys 0x04.
    case wrongKeyType(String)
    /// A negative age or grace, or an empty origin or URL.
    case invalidValue(String)

    public var description: String {
        switch self {
        case .invalidQuorum(let quorum, let witnesses):
            return "the witness quorum \(quorum) must be between 1 and the \(witnesses) witnesses listed"
        case .duplicateWitnessKey(let name): return "witness \(name) repeats another witness's key"
        case .duplicateWitnessName(let name): return "two witnesses are named \(name)"
        case .logKeyIsWitness(let name): return "witness \(name) has the log's own key"
        case .wrongKeyType(let name): return "\(name): the log key is note type 0x01, witness keys 0x04"
        case .invalidValue(let what): return "invalid log setting: \(what)"
        }
    }
}

/// The log configuration a root lists.
public struct LogPolicy: Sendable, Equatable {
    /// One witness: its name, cosignature (0x04) verifier key and URL prefix.
    public struct Witness: Sendable, Equatable {
        /// The witness's cosignature/v1 (0x04) verifier key; its name is the witness's name.
        public let key: NoteVerifierKey
        /// The witness's submission prefix (`<url>/add-checkpoint`).
        public let url: String
        /// The witness's name (its key name).
        public var name: String { key.name }

        /// - Parameters:
        ///   - key: the witness's 0x04 verifier key.
        ///   - url: its submission prefix, e.g. `https://witness.example/w1`.
        public init(key: NoteVerifierKey, url: String) {
            self.key = key
            self.url = url
        }
    }

    /// The most witnesses a root may list: a cosigned checkpoint carries the log's signature
    /// and one cosignature per witness, and a note holds at most
    /// 32 signature lines (`NoteLimits.standard.maxSignatures`), so 31.
    public static let maxWitnesses = 31

    /// Default `checkpointGrace`: 7 days, in seconds.
    public static let defaultGrace: Int64 = 7 * 24 * 3600

    /// The checkpoint origin line (compared byte for byte, `NoteText.equal`).
    public let origin: String
    /// The log's Ed25519 (0x01) note verifier key.
    public let logKey: NoteVerifierKey
    /// The witnesses whose cosignatures count, each key at most once.
    public let witnesses: [Witness]
    /// Valid cosignatures by distinct listed witnesses a checkpoint needs.
    public let quorum: Int
    /// Seconds after t_q when a `staleCheckpoint` event fires; 0 turns freshness off.
    public let maxCheckpointAge: Int64
    /// Seconds after `maxCheckpointAge` when the manifest counts as expired.
    public let checkpointGrace: Int64

    /// - Throws: `LogPolicyError` for a quorum outside 1...witnesses, a witness key listed
    ///   twice, the log key as a witness, wrong key types, or negative ages.
    public init(
        origin: String, logKey: NoteVerifierKey, witnesses: [Witness], quorum: Int, maxCheckpointAge: Int64,
        checkpointGrace: Int64 = LogPolicy.defaultGrace
    ) throws(LogPolicyError) {
        try LogPolicy.validateOrigin(origin)
        guard logKey.type == .ed25519 else { throw .wrongKeyType(logKey.name) }
        guard witnesses.count <= LogPolicy.maxWitnesses else {
            throw .invalidValue("more than \(LogPolicy.maxWitnesses) witnesses")
        }
        guard (1...max(1, witnesses.count)).contains(quorum), !witnesses.isEmpty else {
            throw .invalidQuorum(quorum: quorum, witnesses: witnesses.count)
        }
        var keys = Set<[UInt8]>()
        var names = Set<[UInt8]>()  // byte for byte, as Java compares them (NoteText)
        for witness in witnesses {
            guard witness.key.type == .cosignatureV1 else { throw .wrongKeyType(witness.name) }
            guard witness.key.publicKey != logKey.publicKey else { throw .logKeyIsWitness(witness.name) }
            guard keys.insert(witness.key.publicKey).inserted else { throw .duplicateWitnessKey(witness.name) }
            guard names.insert(Array(witness.name.utf8)).inserted else { throw .duplicateWitnessName(witness.name) }
            guard LogPolicy.isWitnessURL(witness.url) else {
                throw .invalidValue(
                    "witness \(witness.name): the URL must be https://host[:port][/path], without query or fragment")
            }
        }
        guard maxCheckpointAge >= 0 else { throw .invalidValue("maxCheckpointAge is negative") }
        guard checkpointGrace >= 0 else { throw .invalidValue("checkpointGrace is negative") }
        self.origin = origin
        self.logKey = logKey
        self.witnesses = witnesses
        self.quorum = quorum
        self.maxCheckpointAge = maxCheckpointAge
        self.checkpointGrace = checkpointGrace
    }

    /// The checkpoint origin rule every Pinion component shares (C2SP tlog-checkpoint's first
    /// line): 1-256 bytes of UTF-8 without control characters (C0, DEL, C1). `pinion witness`
    /// accepts exactly these (it can witness any C2SP log, whose origin may hold spaces or
    /// non-ASCII text); a root's origin must also pass `validateOrigin`.
    ///
    /// - Throws: `.invalidValue` naming the rule.
    public static func validateCheckpointOrigin(_ origin: String) throws(LogPolicyError) {
        guard isCheckpointOrigin(origin) else {
            throw .invalidValue("the origin must be 1-256 bytes without control characters")
        }
    }

    /// A root's log origin: a checkpoint origin (`validateCheckpointOrigin`) that is also
    /// printable ASCII without spaces (0x21-0x7E), since a root's origin is its log key's
    /// note key name. `LogPolicy` and `pinion root init/rotate --log-origin` use it.
    ///
    /// - Throws: `.invalidValue` naming the rule.
    public static func validateOrigin(_ origin: String) throws(LogPolicyError) {
        guard isCheckpointOrigin(origin), origin.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { throw .invalidValue("the origin must be 1-256 printable ASCII characters without spaces") }
    }

    private static func isCheckpointOrigin(_ origin: String) -> Bool {
        !origin.isEmpty && origin.utf8.count <= 256
            && origin.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }
    }

    /// Whether `url` is a witness submission prefix Pinion accepts: `https://`, a host of
    /// letters, digits, dots and hyphens (or a bracketed IPv6 literal), an optional port, an
    /// optional path of printable ASCII; no query, fragment, user info or white space; at
    /// most 2,048 bytes.
    public static func isWitnessURL(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.hasPrefix("https://") else { return false }
        let rest = url.dropFirst("https://".count)
        guard rest.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            !rest.contains("?"), !rest.contains("#"), !rest.contains("@"), !rest.contains("\\")
        else { return false }
        let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var host = Substring(authority)
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" }) else { return false }
            let after = authority[authority.index(after: close)...]
            return after.isEmpty || LogPolicy.isPort(after.dropFirst()) && after.first == ":"
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return false }
        host = parts[0]
        if parts.count == 2, !LogPolicy.isPort(parts[1]) { return false }
        return !host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard let port = Int(text), (1...65535).contains(port), text.first != "0" else { return false }
        return text.allSatisfy(\.isNumber)
    }

    /// Whether the quorum is at most half the witnesses (q ≤ n/2): two disjoint sets of
    /// witnesses could then each meet it and cosign two different trees of one size with no
    /// witness lying (a split view). `pinion root init` and `root rotate` refuse such a quorum
    /// when they create or change the `log` member, unless `--allow-minority-quorum` is
    /// given (docs/DESIGN.md §12).
    public var isMinorityQuorum: Bool { quorum * 2 <= witnesses.count }

    /// How many witnesses may be down while a publish still meets the quorum (n - q).
    public var toleratedOutages: Int { witnesses.count - quorum }
}
