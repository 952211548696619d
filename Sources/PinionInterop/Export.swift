// Choosing what a platform format can carry from a manifest, and the OkHttp and Swift
// baseline writers.

import PinionCore

/// The domain entries of a manifest that a platform format receives.
public struct ExportSelection: Sendable, Equatable {
    /// Entries to write: pins minus the manifest's revokedPins, each with one pin or more.
    public var domains: [ManifestPayload.Domain]
    /// Entries left out under `lossy`, with the reason.
    public var leftOut: [(name: String, reason: String)]

    /// Chooses the entries of `payload` for a format.
    ///
    /// Revoked pins are removed from every entry (clients subtract them too, docs/DESIGN.md §7).
    /// An entry left without pins (every connection refused in Pinion) cannot be written in
    /// any platform format; a report-only entry cannot be written when `reportOnly` is false.
    /// Both are refused unless `lossy`, which leaves them out and lists them.
    ///
    /// - Parameters:
    ///   - payload: the verified manifest payload.
    ///   - reportOnly: whether the format can express report-only entries.
    ///   - lossy: leave out what cannot be expressed instead of refusing.
    /// - Throws: `InteropError.notRepresentable` naming every such entry.
    public init(_ payload: ManifestPayload, reportOnly: Bool, lossy: Bool) throws(InteropError) {
        let revoked = Set(payload.revokedPins)
        var domains: [ManifestPayload.Domain] = []
        var leftOut: [(String, String)] = []
        for var domain in payload.domains {
            domain.pins = domain.pins.filter { !revoked.contains($0) }
            domain.extensions = []
            if domain.pins.isEmpty {
                leftOut.append((domain.name, "every pin is revoked (Pinion refuses every connection)"))
            } else if !domain.enforce, !reportOnly {
                leftOut.append((domain.name, "report-only (the format always enforces)"))
            } else {
                domains.append(domain)
            }
        }
        if !leftOut.isEmpty, !lossy {
            throw InteropError(
                .notRepresentable,
                "cannot be expressed in this format: "
                    + leftOut.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
                    + " (--lossy leaves them out)")
        }
        self.domains = domains
        self.leftOut = leftOut
    }

    public static func == (lhs: ExportSelection, rhs: ExportSelection) -> Bool {
        lhs.domains == rhs.domains && lhs.leftOut.map(\.name) == rhs.leftOut.map(\.name)
            && lhs.leftOut.map(\.reason) == rhs.leftOut.map(\.reason)
    }
}

/// OkHttp's `CertificatePinner` (square.github.io/okhttp, okhttp3.CertificatePinner) as Kotlin.
public enum OkHttpKotlin {
    /// Writes a Kotlin file with a `CertificatePinner` holding every entry.
    ///
    /// An entry with includeSubdomains becomes the pattern `**.name` (OkHttp: the name and
    /// every subdomain at any depth); otherwise the exact name. OkHttp accepts the union of
    /// the pins of every matching pattern, where Pinion takes the longest match only: the
    /// returned warnings name entries under another entry's `**` pattern.
    ///
    /// - Parameters:
    ///   - domains: enforced entries with one pin or more.
    ///   - comment: lines of a leading comment.
    ///   - packageName: the Kotlin package, or nil for none.
    /// - Returns: the source text and warnings.
    public static func export(_ domains: [ManifestPayload.Domain], comment: [String], packageName: String?)
        -> (text: String, warnings: [String])
    {
        var warnings: [String] = []
        for domain in domains {
            for parent in domains where parent.includeSubdomains && domain.name.hasSuffix("." + parent.name) {
                warnings.append(
                    "\(domain.name): OkHttp also accepts the pins of **.\(parent.name) for it (Pinion uses the longest match only)"
                )
            }
        }
        var text = comment.map { "// " + $0 }.joined(separator: "\n") + "\n"
        if let packageName { text += "package \(packageName)\n" }
        text += "\nimport okhttp3.CertificatePinner\n\n"
        text += "/** Baseline pins for OkHttp; regenerate with `pinion export okhttp-kotlin`. */\n"
        text += "val pinionCertificatePinner: CertificatePinner = CertificatePinner.Builder()\n"
        for domain in domains {
            let pattern = domain.includeSubdomains ? "**." + domain.name : domain.name
            let pins = domain.pins.map { "\"\($0)\"" }.joined(separator: ", ")
            text += "    .add(\"\(pattern)\", \(pins))\n"
        }
        text += "    .build()\n"
        return (text, warnings)
    }
}

/// The SDK's baseline file (`pinion.baseline`, docs/CLIENT.md) embedded in Swift source.
public enum SwiftBaseline {
    /// The baseline JSON of the entries (strict format of `Baseline.parse`).
    ///
    /// - Parameter domains: entries with one pin or more (report-only allowed).
    /// - Returns: the JSON bytes.
    public static func json(_ domains: [ManifestPayload.Domain]) -> [UInt8] {
        let values: [JSONValue] = domains.map { domain in
            .object(
                JSONObject([
                    .init("name", .string(domain.name)),
                    .init("includeSubdomains", .bool(domain.includeSubdomains)),
                    .init("enforce", .bool(domain.enforce)),
                    .init("pins", .array(domain.pins.map { .string($0.description) })),
                ]))
        }
        return JSONWriter.write(
            .object(
                JSONObject([
                    .init("type", .string("pinion.baseline")),
                    .init("specVersion", .number(String(Limits.specVersion))),
                    .init("domains", .array(values)),
                ])))
    }

    /// A Swift file declaring `PinionBaseline.json` (the baseline file's text) and
    /// `PinionBaseline.load()`, which runs it through the SDK's strict parser.
    ///
    /// - Parameters:
    ///   - domains: entries with one pin or more.
    ///   - comment: lines of a leading comment.
    /// - Returns: the source text.
    public static func export(_ domains: [ManifestPayload.Domain], comment: [String]) -> String {
        let json = String(decoding: json(domains), as: UTF8.self)
        var text = comment.map { "// " + $0 }.joined(separator: "\n") + "\n\n"
        text += "import PinionTrust\n\n"
        text += "/// The app's baseline pins (docs/DESIGN.md §7); regenerate with `pinion export swift-baseline`.\n"
        text += "enum PinionBaseline {\n"
        text += "    /// The baseline file (`pinion.baseline`, docs/CLIENT.md).\n"
        text += "    static let json = #\"\"\"\n"
        for line in json.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            text += "        " + line + "\n"
        }
        text += "        \"\"\"#\n\n"
        text += "    /// The baseline, checked by the SDK's strict parser.\n"
        text += "    static func load() throws -> Baseline { try Baseline.parse(Array(json.utf8)) }\n"
        text += "}\n"
        return text
    }
}
