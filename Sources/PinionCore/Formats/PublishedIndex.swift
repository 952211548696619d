// index.json of a published tree (docs/DESIGN.md §9): every published root and manifest, in publish order.

/// The published history of one scope, oldest first. Every entry carries a `sequence`
/// number shared by roots and manifests (1, 2, 3, ... in publish order), so a reader knows
/// which root and manifest were current at every step. The older form, manifests only and
/// without sequence numbers, is still read (`sequence` nil, `roots` empty).
public struct PublishedIndex: Sendable, Equatable {
    /// The document type string.
    public static let documentType = "pinion.index"

    /// One published root.
    public struct RootEntry: Sendable, Equatable {
        /// Position in publish order (shared with manifests), or nil in the older form.
        public var sequence: Int64?
        public var version: Int64
        /// SHA-256 of the root's payload bytes (32 bytes).
        public var payloadSHA256: [UInt8]
        public var expiresAt: Timestamp

        public init(sequence: Int64?, version: Int64, payloadSHA256: [UInt8], expiresAt: Timestamp) {
            self.sequence = sequence
            self.version = version
            self.payloadSHA256 = payloadSHA256
            self.expiresAt = expiresAt
        }
    }

    /// One published manifest.
    public struct Entry: Sendable, Equatable {
        /// Position in publish order (shared with roots), or nil in the older form.
        public var sequence: Int64?
        public var version: Int64
        public var rootVersion: Int64
        /// SHA-256 of the manifest's payload bytes (32 bytes).
        public var payloadSHA256: [UInt8]
        public var issuedAt: Timestamp
        public var expiresAt: Timestamp

        public init(
            version: Int64, rootVersion: Int64, payloadSHA256: [UInt8], issuedAt: Timestamp, expiresAt: Timestamp,
            sequence: Int64? = nil
        ) {
            self.sequence = sequence
            self.version = version
            self.rootVersion = rootVersion
            self.payloadSHA256 = payloadSHA256
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }
    }

    public var scope: String
    public var manifests: [Entry]
    /// Published roots, oldest first; empty in the older manifest-only form.
    public var roots: [RootEntry]

    public init(scope: String, manifests: [Entry] = [], roots: [RootEntry] = []) {
        self.scope = scope
        self.manifests = manifests
        self.roots = roots
    }

    /// The next sequence number: one more than the highest listed; for an index of the older
    /// form (no sequence numbers yet), one more than its number of entries, so that the steps
    /// it lists keep lower numbers; 1 for an empty index. Every entry of one step shares its
    /// step's number, so steps count up by exactly one.
    public var nextSequence: Int64 {
        if let highest = (manifests.compactMap(\.sequence) + roots.compactMap(\.sequence)).max() {
            return highest + 1
        }
        return Int64(manifests.count + roots.count) + 1
    }

    /// Parses index.json strictly. `payloadSHA256` is `sha256:<64 lowercase hex>`, the
    /// form used everywhere else (`previous`, `pinion manifest show`); bare hex, written by
    /// earlier versions of `pinion publish`, is still read.
    ///
    /// - Throws: `FormatError` naming the member and rule.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard) throws(FormatError) -> PublishedIndex {
        // The history grows without bound over years; the element limit is the parser's
        // generic one, the byte limit a generous multiple of the envelope limit.
        var jsonLimits = limits.json
        jsonLimits.maxBytes = max(limits.maxEnvelopeBytes * 16, 64 * 1024 * 1024)
        jsonLimits.maxElements = Int.max
        var reader = try SchemaReader(try StrictJSONParser.parse(bytes, limits: jsonLimits), path: "")
        try reader.documentHeader(type: documentType)
        let scope = try reader.string("scope")
        do { try Scope.validate(scope) } catch let rule { throw reader.error("scope", rule) }
        var roots: [RootEntry] = []
        for (index, value) in (try reader.optionalArray("roots") ?? []).enumerated() {
            var entry = try SchemaReader(value, path: reader.elementPath("roots", index))
            let sequence = try optionalSequence(&entry)
            let version = try entry.integer("version")
            let hash = try parseHash(&entry)
            let expiresAt = try entry.time("expiresAt")
            try entry.finish()
            roots.append(RootEntry(sequence: sequence, version: version, payloadSHA256: hash, expiresAt: expiresAt))
        }
        var entries: [Entry] = []
        for (index, value) in try reader.array("manifests").enumerated() {
            var entry = try SchemaReader(value, path: reader.elementPath("manifests", index))
            let sequence = try optionalSequence(&entry)
            let version = try entry.integer("version")
            let rootVersion = try entry.integer("rootVersion")
            let hash = try parseHash(&entry)
            let issuedAt = try entry.time("issuedAt")
            let expiresAt = try entry.time("expiresAt")
            try entry.finish()
            entries.append(
                Entry(
                    version: version, rootVersion: rootVersion, payloadSHA256: hash, issuedAt: issuedAt,
                    expiresAt: expiresAt, sequence: sequence))
        }
        try reader.finish()
        // Entries of one publish step share its sequence number; steps only count up.
        for (name, sequences) in [
            ("roots", roots.compactMap(\.sequence)), ("manifests", entries.compactMap(\.sequence)),
        ] {
            for (position, pair) in zip(sequences, sequences.dropFirst()).enumerated() where pair.1 < pair.0 {
                throw FormatError(
                    path: reader.elementPath(name, position + 1) + ".sequence",
                    rule: .integerOutOfRange(min: pair.0, max: Limits.maxInteger))
            }
        }
        return PublishedIndex(scope: scope, manifests: entries, roots: roots)
    }

    /// The optional `sequence` member: 1 ... 2^53-1, absent in trees written before it.
    private static func optionalSequence(_ entry: inout SchemaReader) throws(FormatError) -> Int64? {
        guard let value = entry.optional("sequence") else { return nil }
        return try SchemaReader.integer(value, path: entry.childPath("sequence"), in: 1...Limits.maxInteger)
    }

    /// `payloadSHA256` as `sha256:<hex>` or, as earlier versions wrote it, bare hex.
    private static func parseHash(_ entry: inout SchemaReader) throws(FormatError) -> [UInt8] {
        let hashText = try entry.string("payloadSHA256")
        let hexText = hashText.hasPrefix("sha256:") ? String(hashText.dropFirst(7)) : hashText
        guard let hash = Hex.decodeLowercase(hexText), hash.count == 32 else {
            throw entry.error("payloadSHA256", .invalidPreviousHash(hashText))
        }
        return hash
    }

    /// index.json bytes.
    public func serialized() -> [UInt8] {
        let rootEntries: [JSONValue] = roots.map { entry in
            .object(
                JSONObject(
                    (entry.sequence.map { [JSONObject.Member("sequence", .number(String($0)))] } ?? []) + [
                        .init("version", .number(String(entry.version))),
                        .init("payloadSHA256", .string("sha256:" + Hex.encode(entry.payloadSHA256))),
                        .init("expiresAt", .string(entry.expiresAt.description)),
                    ]))
        }
        let entries: [JSONValue] = manifests.map { entry in
            .object(
                JSONObject(
                    (entry.sequence.map { [JSONObject.Member("sequence", .number(String($0)))] } ?? []) + [
                        .init("version", .number(String(entry.version))),
                        .init("rootVersion", .number(String(entry.rootVersion))),
                        .init("payloadSHA256", .string("sha256:" + Hex.encode(entry.payloadSHA256))),
                        .init("issuedAt", .string(entry.issuedAt.description)),
                        .init("expiresAt", .string(entry.expiresAt.description)),
                    ]))
        }
        var members: [JSONObject.Member] = [
            .init("type", .string(PublishedIndex.documentType)),
            .init("specVersion", .number(String(Limits.specVersion))),
            .init("scope", .string(scope)),
        ]
        if !roots.isEmpty { members.append(.init("roots", .array(rootEntries))) }
        members.append(.init("manifests", .array(entries)))
        return JSONWriter.write(.object(JSONObject(members)))
    }
}
