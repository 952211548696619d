// The root document: which keys hold the root and pins roles, and at what threshold (docs/DESIGN.md §4).

/// A parsed root document payload (`type: pinion.root`).
public struct RootPayload: Sendable, Equatable {
    /// The document type string.
    public static let documentType = "pinion.root"

    /// An Ed25519 public key listed in `keys`.
    public struct Key: Sendable, Equatable {
        /// Lowercase hex SHA-256 of `publicKey` (checked at parse time).
        public var keyID: String
        /// Raw Ed25519 public key, 32 bytes.
        public var publicKey: [UInt8]

        public init(keyID: String, publicKey: [UInt8]) {
            self.keyID = keyID
            self.publicKey = publicKey
        }
    }

    /// A role: the key ids allowed to sign for it and how many distinct ones must.
    public struct Role: Sendable, Equatable {
        public var keyIDs: [String]
        /// 1 ... `keyIDs.count`.
        public var threshold: Int

        public init(keyIDs: [String], threshold: Int) {
            self.keyIDs = keyIDs
            self.threshold = threshold
        }
    }

    public var scope: String
    public var version: Int64
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// Cap on `expiresAt - issuedAt` of manifests signed under this root, in seconds.
    public var maxManifestLifetime: Int64
    /// Keys in key-id order.
    public var keys: [Key]
    public var rootRole: Role
    public var pinsRole: Role
    /// The lowest manifest `rootVersion` this root's pins role and cap accept
    /// (docs/DESIGN.md §4, §5): 1 ... `version`, or nil when the member is absent, which
    /// means the root's own version. A rotation that keeps the pins role and does not raise
    /// the cap keeps the previous root's value, so manifests signed under it stay valid.
    public var pinsRoleSince: Int64?
    /// The transparency log clients require (docs/DESIGN.md §12), or nil for a scope without
    /// one. When the newest root has it, a manifest is accepted only with a cosigned
    /// manifest.proof.
    public var log: LogPolicy?
    /// `x-` extension members, kept as they were.
    public var extensions: [JSONObject.Member]

    public init(
        scope: String, version: Int64, issuedAt: Timestamp, expiresAt: Timestamp,
        maxManifestLifetime: Int64,
        keys: [Key], rootRole: Role, pinsRole: Role, pinsRoleSince: Int64? = nil, log: LogPolicy? = nil,
        extensions: [JSONObject.Member] = []
    ) {
        self.scope = scope
        self.version = version
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.maxManifestLifetime = maxManifestLifetime
        self.keys = keys.sorted { $0.keyID < $1.keyID }
        self.rootRole = rootRole
        self.pinsRole = pinsRole
        self.pinsRoleSince = pinsRoleSince
        self.log = log
        self.extensions = extensions
    }

    /// `pinsRoleSince`, or the root's own version when the member is absent: manifests with
    /// `effectivePinsRoleSince <= rootVersion <= version` verify under this root.
    public var effectivePinsRoleSince: Int64 { pinsRoleSince ?? version }

    /// Whether `next` (the following root) keeps this root's pins role unchanged: the same
    /// pins key ids (as a set), the same threshold, and a cap not raised. Only then may
    /// `next` keep this root's `pinsRoleSince`; otherwise a manifest that was a half-signed
    /// draft, or pre-signed by a key `next` adds, would become valid (docs/DESIGN.md §4).
    public func pinsRoleUnchanged(in next: RootPayload) -> Bool {
        Set(next.pinsRole.keyIDs) == Set(pinsRole.keyIDs) && next.pinsRole.threshold == pinsRole.threshold
            && next.maxManifestLifetime <= maxManifestLifetime
            && next.pinsRole.keyIDs.allSatisfy { next.publicKey(for: $0) == publicKey(for: $0) }
    }

    /// The `pinsRoleSince` rule between consecutive roots (docs/DESIGN.md §4): when the pins
    /// role is unchanged, `next` may keep this root's effective value or move it up to its
    /// own version (every root in between has the same pins role); otherwise it must be its
    /// own version. A lower value, or a kept one over a changed role, is refused. (The JVM
    /// SDK applies the same rule.)
    ///
    /// - Throws: `TrustError.pinsRoleSinceInvalid` with the values allowed.
    public func checkPinsRoleSince(of next: RootPayload) throws(TrustError) {
        let since = next.effectivePinsRoleSince
        if since == next.version { return }
        guard pinsRoleUnchanged(in: next) else {
            throw .pinsRoleSinceInvalid(
                rootVersion: next.version, found: since, allowed: next.version...next.version, pinsRoleChanged: true)
        }
        let lowest = min(effectivePinsRoleSince, next.version)
        guard since >= lowest else {
            throw .pinsRoleSinceInvalid(
                rootVersion: next.version, found: since, allowed: lowest...next.version, pinsRoleChanged: false)
        }
    }

    /// The raw public key listed under `keyID`, if any.
    public func publicKey(for keyID: String) -> [UInt8]? {
        keys.first(where: { $0.keyID == keyID })?.publicKey
    }

    /// The role of the given name.
    public func role(_ name: RoleName) -> Role {
        switch name {
        case .root: return rootRole
        case .pins: return pinsRole
        }
    }

    /// Parses and checks a root payload.
    ///
    /// - Parameters:
    ///   - bytes: the payload bytes.
    ///   - limits: parser limits.
    ///   - crypto: SHA-256, to check that every key id is the hash of its key, and the
    ///     Ed25519 point checks, to refuse keys that could never verify a signature.
    /// - Throws: `FormatError` naming the member and rule; includes a key listed under an
    ///   id that is not its SHA-256, a role naming an unlisted key, thresholds outside 1...n.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard, crypto: CryptoProvider)
        throws(FormatError)
        -> RootPayload
    {
        var reader = try SchemaReader(try StrictJSONParser.parse(bytes, limits: limits.json), path: "")
        try reader.documentHeader(type: documentType)
        let scope = try reader.string("scope")
        do { try Scope.validate(scope) } catch let rule { throw reader.error("scope", rule) }
        let version = try reader.integer("version")
        let issuedAt = try reader.time("issuedAt")
        let expiresAt = try reader.time("expiresAt")
        guard expiresAt > issuedAt else { throw reader.error("expiresAt", .expiresNotAfterIssued) }
        let maxLifetime = try reader.integer("maxManifestLifetime")

        var keysReader = try SchemaReader(try reader.required("keys"), path: "keys")
        var keys: [Key] = []
        for member in keysReader.object.members where !member.name.hasPrefix("x-") {
            let keyPath = keysReader.childPath(member.name)
            do { try KeyID.validate(member.name) } catch let rule {
                throw FormatError(path: keyPath, rule: rule)
            }
            var keyReader = try SchemaReader(member.value, path: keyPath)
            let type = try keyReader.string("type")
            guard type == "ed25519" else {
                throw keyReader.error("type", .invalidPublicKey("type \"\(type)\" is not ed25519"))
            }
            guard let raw = Base64.decodeCanonical(try keyReader.string("public")) else {
                throw keyReader.error("public", .invalidBase64)
            }
            guard raw.count == 32 else {
                throw keyReader.error("public", .invalidPublicKey("not 32 bytes (got \(raw.count))"))
            }
            guard crypto.verifier.isUsablePublicKey(raw) else {
                throw keyReader.error(
                    "public", .invalidPublicKey("not a usable Ed25519 point (small-order or non-canonical)"))
            }
            try keyReader.finish()
            let actual = KeyID.of(publicKey: raw, hasher: crypto.hasher)
            guard actual == member.name else {
                throw FormatError(path: keyPath, rule: .keyIDMismatch(listed: member.name, actual: actual))
            }
            _ = keysReader.optional(member.name)
            keys.append(Key(keyID: member.name, publicKey: raw))
        }
        try keysReader.finish()
        guard !keys.isEmpty else { throw reader.error("keys", .empty) }

        var rolesReader = try SchemaReader(try reader.required("roles"), path: "roles")
        let listed = Set(keys.map(\.keyID))
        let rootRole = try parseRole(
            try rolesReader.required("root"), path: "roles.root", listed: listed)
        let pinsRole = try parseRole(
            try rolesReader.required("pins"), path: "roles.pins", listed: listed)
        try rolesReader.finish()
        var pinsRoleSince: Int64?
        if let value = reader.optional("pinsRoleSince") {
            // A version below 1 or above this root's own version names no root this one
            // could speak for.
            pinsRoleSince = try SchemaReader.integer(
                value, path: reader.childPath("pinsRoleSince"), in: 1...max(1, version))
        }
        var log: LogPolicy?
        if let value = reader.optional("log") {
            log = try parseLog(value, path: reader.childPath("log"), hasher: crypto.hasher)
        }
        try reader.finish()
        return RootPayload(
            scope: scope, version: version, issuedAt: issuedAt, expiresAt: expiresAt,
            maxManifestLifetime: maxLifetime,
            keys: keys, rootRole: rootRole, pinsRole: pinsRole, pinsRoleSince: pinsRoleSince, log: log,
            extensions: reader.extensions)
    }

    /// Parses the `log` member: `origin`, `key` (a C2SP note verifier key string, type 0x01),
    /// `witnesses` (1 to `LogPolicy.maxWitnesses` objects of `key`, type 0x04, and `url`),
    /// `quorum`, `maxCheckpointAge` and the optional `checkpointGrace` (seconds; default
    /// `LogPolicy.defaultGrace`).
    private static func parseLog(_ value: JSONValue, path: String, hasher: any SHA256Hasher)
        throws(FormatError) -> LogPolicy
    {
        var reader = try SchemaReader(value, path: path)
        let origin = try reader.string("origin")
        let logKeyText = try reader.string("key")
        let logKey: NoteVerifierKey
        do { logKey = try NoteVerifierKey(parsing: logKeyText, hasher: hasher) } catch let error {
            throw reader.error("key", .invalidLog(error.description))
        }
        var witnesses: [LogPolicy.Witness] = []
        for (index, element) in try reader.array("witnesses", maxCount: LogPolicy.maxWitnesses).enumerated() {
            var witnessReader = try SchemaReader(element, path: reader.elementPath("witnesses", index))
            let keyText = try witnessReader.string("key")
            let key: NoteVerifierKey
            do { key = try NoteVerifierKey(parsing: keyText, hasher: hasher) } catch let error {
                throw witnessReader.error("key", .invalidLog(error.description))
            }
            let url = try witnessReader.string("url")
            try witnessReader.finish()
            witnesses.append(LogPolicy.Witness(key: key, url: url))
        }
        let quorum = try reader.integer("quorum", in: 1...Int64(LogPolicy.maxWitnesses))
        let maxAge = try reader.integer("maxCheckpointAge", in: 0...Limits.maxInteger)
        var grace = LogPolicy.defaultGrace
        if let value = reader.optional("checkpointGrace") {
            grace = try SchemaReader.integer(
                value, path: reader.childPath("checkpointGrace"), in: 0...Limits.maxInteger)
        }
        try reader.finish()
        do {
            return try LogPolicy(
                origin: origin, logKey: logKey, witnesses: witnesses, quorum: Int(quorum), maxCheckpointAge: maxAge,
                checkpointGrace: grace)
        } catch let error {
            throw FormatError(path: path, rule: .invalidLog(error.description))
        }
    }

    private static func parseRole(_ value: JSONValue, path: String, listed: Set<String>)
        throws(FormatError) -> Role
    {
        var reader = try SchemaReader(value, path: path)
        var ids: [String] = []
        var seen = Set<String>()
        for (index, element) in try reader.array("keyids").enumerated() {
            let elementPath = reader.elementPath("keyids", index)
            guard case .string(let id) = element else {
                throw FormatError(path: elementPath, rule: .wrongType(expected: "a string"))
            }
            do { try KeyID.validate(id) } catch let rule {
                throw FormatError(path: elementPath, rule: rule)
            }
            guard listed.contains(id) else {
                throw FormatError(path: elementPath, rule: .invalidRoleKey("\(id) is not listed in keys"))
            }
            guard seen.insert(id).inserted else {
                throw FormatError(path: elementPath, rule: .invalidRoleKey("\(id) is listed twice"))
            }
            ids.append(id)
        }
        guard !ids.isEmpty else { throw reader.error("keyids", .empty) }
        let threshold = try SchemaReader.integer(
            try reader.required("threshold"), path: reader.childPath("threshold"),
            in: Int64.min...Int64.max)
        guard threshold >= 1, threshold <= Int64(ids.count) else {
            throw reader.error("threshold", .invalidThreshold(threshold: threshold, keys: ids.count))
        }
        try reader.finish()
        return Role(keyIDs: ids, threshold: Int(threshold))
    }

    /// The payload as JSON bytes in the schema's member order.
    public func serialized() -> [UInt8] {
        var members: [JSONObject.Member] = [
            .init("type", .string(RootPayload.documentType)),
            .init("specVersion", .number(String(Limits.specVersion))),
            .init("scope", .string(scope)),
            .init("version", .number(String(version))),
            .init("issuedAt", .string(issuedAt.description)),
            .init("expiresAt", .string(expiresAt.description)),
            .init("maxManifestLifetime", .number(String(maxManifestLifetime))),
        ]
        let keyMembers: [JSONObject.Member] = keys.sorted { $0.keyID < $1.keyID }.map {
            .init(
                $0.keyID,
                .object(
                    JSONObject([
                        .init("type", .string("ed25519")),
                        .init("public", .string(Base64.encode($0.publicKey))),
                    ])))
        }
        members.append(.init("keys", .object(JSONObject(keyMembers))))
        func roleValue(_ role: Role) -> JSONValue {
            .object(
                JSONObject([
                    .init("keyids", .array(role.keyIDs.map { .string($0) })),
                    .init("threshold", .number(String(role.threshold))),
                ]))
        }
        members.append(
            .init(
                "roles",
                .object(
                    JSONObject([.init("root", roleValue(rootRole)), .init("pins", roleValue(pinsRole))]))))
        if let pinsRoleSince {
            members.append(.init("pinsRoleSince", .number(String(pinsRoleSince))))
        }
        if let log {
            let witnesses: [JSONValue] = log.witnesses.map {
                .object(JSONObject([.init("key", .string($0.key.text)), .init("url", .string($0.url))]))
            }
            members.append(
                .init(
                    "log",
                    .object(
                        JSONObject([
                            .init("origin", .string(log.origin)),
                            .init("key", .string(log.logKey.text)),
                            .init("witnesses", .array(witnesses)),
                            .init("quorum", .number(String(log.quorum))),
                            .init("maxCheckpointAge", .number(String(log.maxCheckpointAge))),
                            .init("checkpointGrace", .number(String(log.checkpointGrace))),
                        ]))))
        }
        members += extensions
        return JSONWriter.write(.object(JSONObject(members)))
    }
}

/// The two roles of a root document.
public enum RoleName: String, Sendable, CaseIterable {
    case root
    case pins
}
