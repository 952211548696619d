// The pin manifest: which SPKI pins each domain accepts, versioned and expiring (docs/DESIGN.md §5).

/// A parsed pin manifest payload (`type: pinion.pins`).
public struct ManifestPayload: Sendable, Equatable {
    /// The document type string.
    public static let documentType = "pinion.pins"

    /// The pin set of one domain.
    public struct Domain: Sendable, Equatable {
        /// Lowercase A-label host name (see `HostName.validate`).
        public var name: String
        /// Whether the entry also covers every subdomain of `name`.
        public var includeSubdomains: Bool
        /// `false` = report-only: failures are reported, connections go on.
        public var enforce: Bool
        /// Accepted SPKI SHA-256 pins, non-empty, unique.
        public var pins: [Pin]
        /// `x-` extension members, kept as they were.
        public var extensions: [JSONObject.Member]

        public init(
            name: String, includeSubdomains: Bool = false, enforce: Bool = true, pins: [Pin],
            extensions: [JSONObject.Member] = []
        ) {
            self.name = name
            self.includeSubdomains = includeSubdomains
            self.enforce = enforce
            self.pins = pins
            self.extensions = extensions
        }
    }

    public var scope: String
    /// Version of the root whose `pins` role signs this manifest.
    public var rootVersion: Int64
    public var version: Int64
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// SHA-256 of the previous version's payload bytes (32 bytes); nil only for the first.
    public var previous: [UInt8]?
    public var domains: [Domain]
    public var revokedPins: [Pin]
    /// `x-` extension members, kept as they were.
    public var extensions: [JSONObject.Member]

    public init(
        scope: String, rootVersion: Int64, version: Int64, issuedAt: Timestamp, expiresAt: Timestamp,
        previous: [UInt8]? = nil, domains: [Domain] = [], revokedPins: [Pin] = [],
        extensions: [JSONObject.Member] = []
    ) {
        self.scope = scope
        self.rootVersion = rootVersion
        self.version = version
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.previous = previous
        self.domains = domains
        self.revokedPins = revokedPins
        self.extensions = extensions
    }

    /// `expiresAt - issuedAt`, in seconds.
    public var lifetime: Int64 { expiresAt.secondsSince1970 - issuedAt.secondsSince1970 }

    /// The entry for exactly `name`, if any.
    public func domain(named name: String) -> Domain? { domains.first(where: { $0.name == name }) }

    /// Parses and checks a manifest payload.
    ///
    /// - Parameters:
    ///   - bytes: the payload bytes.
    ///   - limits: parser, domain and pin limits.
    /// - Throws: `FormatError` naming the member (e.g. `domains[3].pins[1]`) and rule.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard) throws(FormatError)
        -> ManifestPayload
    {
        var reader = try SchemaReader(try StrictJSONParser.parse(bytes, limits: limits.json), path: "")
        try reader.documentHeader(type: documentType)
        let scope = try reader.string("scope")
        do { try Scope.validate(scope) } catch let rule { throw reader.error("scope", rule) }
        let rootVersion = try reader.integer("rootVersion")
        let version = try reader.integer("version")
        let issuedAt = try reader.time("issuedAt")
        let expiresAt = try reader.time("expiresAt")
        guard expiresAt > issuedAt else { throw reader.error("expiresAt", .expiresNotAfterIssued) }
        var previous: [UInt8]?
        if let text = try reader.optionalString("previous") {
            guard text.hasPrefix("sha256:"), let hash = Hex.decodeLowercase(String(text.dropFirst(7))),
                hash.count == 32
            else { throw reader.error("previous", .invalidPreviousHash(text)) }
            previous = hash
        }
        let domainValues = try reader.array("domains", maxCount: limits.maxDomains)
        let domainsPath = reader.childPath("domains")
        var domains: [Domain] = []
        domains.reserveCapacity(domainValues.count)
        var names = Set<String>(minimumCapacity: domainValues.count)
        for (index, element) in domainValues.enumerated() {
            let domain = try parseDomain(element, array: domainsPath, index: index, limits: limits)
            guard names.insert(domain.name).inserted else {
                throw FormatError(
                    path: reader.elementPath("domains", index) + ".name", rule: .duplicateDomain(domain.name))
            }
            domains.append(domain)
        }
        let revoked = try parsePins(
            reader.optionalArray("revokedPins") ?? [], path: { reader.childPath("revokedPins") })
        try reader.finish()
        return ManifestPayload(
            scope: scope, rootVersion: rootVersion, version: version, issuedAt: issuedAt,
            expiresAt: expiresAt,
            previous: previous, domains: domains, revokedPins: revoked, extensions: reader.extensions)
    }

    /// Element `index` of the `domains` array (at `array`); its path is rendered only for an error.
    private static func parseDomain(_ value: JSONValue, array: String, index: Int, limits: Limits)
        throws(FormatError) -> Domain
    {
        var reader = try SchemaReader(value, array: array, index: index)
        let name = try reader.string("name")
        do { try HostName.validate(name) } catch let rule { throw reader.error("name", rule) }
        let includeSubdomains = try reader.bool("includeSubdomains", default: false)
        let enforce = try reader.bool("enforce", default: true)
        let pinValues = try reader.array("pins", maxCount: limits.maxPinsPerDomain)
        guard !pinValues.isEmpty else { throw reader.error("pins", .empty) }
        let pins = try parsePins(pinValues, path: { reader.childPath("pins") })
        try reader.finish()
        return Domain(
            name: name, includeSubdomains: includeSubdomains, enforce: enforce, pins: pins,
            extensions: reader.extensions)
    }

    /// Pin lists up to this length are checked for duplicates by a scan of the pins read (a
    /// set per domain was a sixth of a manifest parse, bench/RESULTS.md); longer ones (the
    /// revoked list is unbounded) by a set, so a hostile list stays linear.
    static let linearScanPins = 16

    /// - Parameter path: the array's path, rendered only for an error.
    private static func parsePins(_ values: [JSONValue], path: () -> String) throws(FormatError) -> [Pin] {
        var pins: [Pin] = []
        pins.reserveCapacity(values.count)
        var seen = Set<Pin>()
        let useSet = values.count > linearScanPins
        for (index, value) in values.enumerated() {
            guard case .string(let text) = value else {
                throw FormatError(path: "\(path())[\(index)]", rule: .wrongType(expected: "a pin string"))
            }
            let pin: Pin
            do { pin = try Pin(text) } catch let rule { throw FormatError(path: "\(path())[\(index)]", rule: rule) }
            let duplicate = useSet ? !seen.insert(pin).inserted : pins.contains(pin)
            guard !duplicate else {
                throw FormatError(path: "\(path())[\(index)]", rule: .duplicatePin(text))
            }
            pins.append(pin)
        }
        return pins
    }

    /// The payload as JSON bytes in the schema's member order.
    public func serialized() -> [UInt8] {
        var members: [JSONObject.Member] = [
            .init("type", .string(ManifestPayload.documentType)),
            .init("specVersion", .number(String(Limits.specVersion))),
            .init("scope", .string(scope)),
            .init("rootVersion", .number(String(rootVersion))),
            .init("version", .number(String(version))),
            .init("issuedAt", .string(issuedAt.description)),
            .init("expiresAt", .string(expiresAt.description)),
        ]
        if let previous { members.append(.init("previous", .string("sha256:" + Hex.encode(previous)))) }
        let domainValues: [JSONValue] = domains.map { domain in
            .object(
                JSONObject(
                    [
                        .init("name", .string(domain.name)),
                        .init("includeSubdomains", .bool(domain.includeSubdomains)),
                        .init("enforce", .bool(domain.enforce)),
                        .init("pins", .array(domain.pins.map { .string($0.description) })),
                    ] + domain.extensions))
        }
        members.append(.init("domains", .array(domainValues)))
        members.append(.init("revokedPins", .array(revokedPins.map { .string($0.description) })))
        members += extensions
        return JSONWriter.write(.object(JSONObject(members)))
    }
}
