// index.json of a published tree (docs/DESIGN.md §9): the history of every published manifest.

/// The published history of one scope, oldest first.
public struct PublishedIndex: Sendable, Equatable {
    /// The document type string.
    public static let documentType = "pinion.index"

    /// One published manifest.
    public struct Entry: Sendable, Equatable {
        public var version: Int64
        public var rootVersion: Int64
        /// SHA-256 of the manifest's payload bytes (32 bytes).
        public var payloadSHA256: [UInt8]
        public var issuedAt: Timestamp
        public var expiresAt: Timestamp

        public init(
            version: Int64, rootVersion: Int64, payloadSHA256: [UInt8], issuedAt: Timestamp, expiresAt: Timestamp
        ) {
            self.version = version
            self.rootVersion = rootVersion
            self.payloadSHA256 = payloadSHA256
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }
    }

    public var scope: String
    public var manifests: [Entry]

    public init(scope: String, manifests: [Entry] = []) {
        self.scope = scope
        self.manifests = manifests
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
        var entries: [Entry] = []
        for (index, value) in try reader.array("manifests").enumerated() {
            var entry = try SchemaReader(value, path: reader.elementPath("manifests", index))
            let version = try entry.integer("version")
            let rootVersion = try entry.integer("rootVersion")
            let hashText = try entry.string("payloadSHA256")
            let hexText = hashText.hasPrefix("sha256:") ? String(hashText.dropFirst(7)) : hashText
            guard let hash = Hex.decodeLowercase(hexText), hash.count == 32 else {
                throw entry.error("payloadSHA256", .invalidPreviousHash(hashText))
            }
            let issuedAt = try entry.time("issuedAt")
            let expiresAt = try entry.time("expiresAt")
            try entry.finish()
            entries.append(
                Entry(
                    version: version, rootVersion: rootVersion, payloadSHA256: hash, issuedAt: issuedAt,
                    expiresAt: expiresAt))
        }
        try reader.finish()
        return PublishedIndex(scope: scope, manifests: entries)
    }

    /// index.json bytes.
    public func serialized() -> [UInt8] {
        let entries: [JSONValue] = manifests.map { entry in
            .object(
                JSONObject([
                    .init("version", .number(String(entry.version))),
                    .init("rootVersion", .number(String(entry.rootVersion))),
                    .init("payloadSHA256", .string("sha256:" + Hex.encode(entry.payloadSHA256))),
                    .init("issuedAt", .string(entry.issuedAt.description)),
                    .init("expiresAt", .string(entry.expiresAt.description)),
                ]))
        }
        return JSONWriter.write(
            .object(
                JSONObject([
                    .init("type", .string(PublishedIndex.documentType)),
                    .init("specVersion", .number(String(Limits.specVersion))),
                    .init("scope", .string(scope)),
                    .init("manifests", .array(entries)),
                ])))
    }
}
