// The baseline pin set B compiled into an app (docs/DESIGN.md §7), and its file format.

import PinionCore

/// The baseline B: the pins an app ships with, which no manifest can loosen (docs/DESIGN.md §7).
///
/// Every name is a valid manifest host name (`HostName.validate`), names are unique, and
/// every domain has at least one pin, with no pin twice in a domain: the same rules as the
/// domains of a pin manifest (docs/DESIGN.md §5).
///
/// ## File format
///
/// `pinion client ... --baseline FILE` reads a strict JSON document shaped like a manifest
/// without the signing and versioning members:
///
///     {
///       "type": "pinion.baseline", "specVersion": 1,
///       "domains": [
///         {"name": "api.example.com", "includeSubdomains": false, "enforce": true,
///          "pins": ["sha256/<base64 32 bytes>", "sha256/<base64 32 bytes>"]}
///       ]
///     }
///
/// - `type` (`"pinion.baseline"`), `specVersion` (1) and `domains` (may be empty) are
///   required.
/// - Each domain follows the manifest rules of docs/DESIGN.md §5: `name` a lowercase A-label host
///   of two or more labels, unique in the file; `includeSubdomains` defaults to `false`;
///   `enforce` defaults to `true`; `pins` non-empty, unique, canonical `sha256/` pins.
/// - The file is read by the strict parser (`StrictJSONParser`, `Limits.standard`): no
///   duplicate members, no trailing bytes; unknown members are errors except names starting
///   with `x-`, which are ignored.
public struct Baseline: Sendable, Equatable {
    /// The document type string of a baseline file.
    public static let documentType = "pinion.baseline"

    /// The baseline domains, in file order, with unique names.
    public private(set) var domains: [PinnedDomain]
    /// The document's bytes when the baseline was read by `parse`, nil when built in code:
    /// the manifest request's poll token names the baseline by their SHA-256 (`PollToken`).
    public private(set) var document: [UInt8]?

    /// Two baselines are equal when they pin the same domains the same way, whatever
    /// document (if any) they were read from.
    public static func == (lhs: Baseline, rhs: Baseline) -> Bool { lhs.domains == rhs.domains }

    /// Checks and stores baseline domains.
    ///
    /// - Parameter domains: the domain entries; names must be unique.
    /// - Throws: `FormatError` with the path of the first offending value in the file's
    ///   terms: `domains[i].name` (`.invalidHostName`, `.duplicateDomain`),
    ///   `domains[i].pins` (`.empty`) or `domains[i].pins[j]` (`.duplicatePin`).
    public init(domains: [PinnedDomain]) throws(FormatError) {
        var names = Set<String>()
        for (index, domain) in domains.enumerated() {
            let path = "domains[\(index)]"
            do { try HostName.validate(domain.name) } catch let rule {
                throw FormatError(path: path + ".name", rule: rule)
            }
            guard names.insert(domain.name).inserted else {
                throw FormatError(path: path + ".name", rule: .duplicateDomain(domain.name))
            }
            guard !domain.pins.isEmpty else { throw FormatError(path: path + ".pins", rule: .empty) }
            var seen = Set<Pin>()
            for (pinIndex, pin) in domain.pins.enumerated() where !seen.insert(pin).inserted {
                throw FormatError(path: "\(path).pins[\(pinIndex)]", rule: .duplicatePin(pin.description))
            }
        }
        self.domains = domains
    }

    /// An empty baseline: only manifests and forced domains pin anything.
    public static let empty = Baseline(uncheckedDomains: [])

    private init(uncheckedDomains: [PinnedDomain]) {
        self.domains = uncheckedDomains
    }

    /// Parses a baseline file (format in the type's documentation).
    ///
    /// The domains are checked by the manifest parser itself, so a baseline accepts exactly
    /// the domain entries a manifest accepts and reports the same errors with the same paths.
    ///
    /// - Parameters:
    ///   - bytes: the file contents (UTF-8 JSON).
    ///   - limits: size, depth, domain and pin limits (default docs/DESIGN.md §5).
    /// - Returns: the checked baseline.
    /// - Throws: `FormatError`: JSON syntax and limit errors from `StrictJSONParser`;
    ///   `.wrongType` for a non-object document; `.missingMember` for `type`, `specVersion`
    ///   or `domains`; `.wrongDocumentType` for another `type`; `.unsupportedSpecVersion`;
    ///   `.unknownMember` for a member not in the format that does not start with `x-`; and
    ///   every manifest domain rule at `domains[i]...`.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard) throws(FormatError) -> Baseline {
        guard case .object(let object) = try StrictJSONParser.parse(bytes, limits: limits.json) else {
            throw FormatError(path: "", rule: .wrongType(expected: "an object"))
        }
        guard let typeValue = object["type"] else { throw FormatError(path: "", rule: .missingMember("type")) }
        guard case .string(let type) = typeValue else {
            throw FormatError(path: "type", rule: .wrongType(expected: "a string"))
        }
        guard type == documentType else {
            throw FormatError(path: "type", rule: .wrongDocumentType(expected: documentType, found: type))
        }
        guard let versionValue = object["specVersion"] else {
            throw FormatError(path: "", rule: .missingMember("specVersion"))
        }
        let version = try integer(versionValue, path: "specVersion")
        guard version == Limits.specVersion else {
            throw FormatError(
                path: "specVersion", rule: .unsupportedSpecVersion(found: version, supported: Limits.specVersion))
        }
        guard let domainsValue = object["domains"] else {
            throw FormatError(path: "", rule: .missingMember("domains"))
        }
        guard case .array(let domainValues) = domainsValue else {
            throw FormatError(path: "domains", rule: .wrongType(expected: "an array"))
        }
        guard domainValues.count <= limits.maxDomains else {
            throw FormatError(path: "domains", rule: .tooManyElements(limit: limits.maxDomains))
        }
        let known: Set<String> = ["type", "specVersion", "domains"]
        for member in object.members where !known.contains(member.name) && !member.name.hasPrefix("x-") {
            throw FormatError(path: "", rule: .unknownMember(member.name))
        }
        var baseline = try Baseline(domains: manifestDomains(domainValues, limits: limits).map(PinnedDomain.init))
        baseline.document = bytes
        return baseline
    }

    /// Runs the domain entries through `ManifestPayload.parse` inside a placeholder manifest,
    /// so the baseline never drifts from the manifest's domain rules. The placeholder members
    /// are fixed and valid; every error the parse can raise is about `domains[...]`, with the
    /// path the baseline file has too.
    private static func manifestDomains(_ values: [JSONValue], limits: Limits) throws(FormatError)
        -> [ManifestPayload.Domain]
    {
        let placeholder = JSONObject([
            .init("type", .string(ManifestPayload.documentType)),
            .init("specVersion", .number(String(Limits.specVersion))),
            .init("scope", .string("baseline")),
            .init("rootVersion", .number("1")),
            .init("version", .number("1")),
            .init("issuedAt", .string("2000-01-01T00:00:00Z")),
            .init("expiresAt", .string("2000-01-02T00:00:00Z")),
            .init("domains", .array(values)),
        ])
        // The re-serialised text is indented, so it may be longer than the file was; the
        // file itself was already held to the byte limit.
        var relaxed = limits
        relaxed.maxEnvelopeBytes = Int.max
        return try ManifestPayload.parse(JSONWriter.write(.object(placeholder)), limits: relaxed).domains
    }

    /// An integer member in 1 ... 2^53-1, checked as the manifest schema checks it.
    private static func integer(_ value: JSONValue, path: String) throws(FormatError) -> Int64 {
        guard case .number(let text) = value else {
            throw FormatError(path: path, rule: .wrongType(expected: "an integer"))
        }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            throw FormatError(path: path, rule: .notAnInteger)
        }
        guard let number = Int64(text), (1...Limits.maxInteger).contains(number) else {
            throw FormatError(path: path, rule: .integerOutOfRange(min: 1, max: Limits.maxInteger))
        }
        return number
    }
}
