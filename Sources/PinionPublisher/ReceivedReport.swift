// A pin-failure report POSTed to `pinion serve` (RFC 7469 §3 JSON plus TrustKit's app
// members), parsed and checked strictly before anything is queued for the store.

import PinionCore
import PinionCrypto

/// A validated pin validation failure report (RFC 7469 §3), as received.
///
/// Two shapes are accepted, each strictly:
/// - RFC 7469 §3 (Pinion's SDK): `date-time`, `hostname`, `port`,
///   `effective-expiration-date` (a time or `null`), `include-subdomains`, `noted-hostname`,
///   `served-certificate-chain`, `validated-certificate-chain` and `known-pins`, all
///   required, plus TrustKit's `app-bundle-id`, `app-version`, `app-platform` and
///   `validation-result` when present.
/// - TrustKit's own report (it has `trustkit-version`): `date-time`, `hostname`, `port`,
///   `noted-hostname`, `include-subdomains`, a non-empty `validated-certificate-chain` and
///   `known-pins` required; `app-bundle-id`, `app-version`, `app-platform`,
///   `app-platform-version`, `app-vendor-id`, `enforce-pinning`, `validation-result` and
///   `known-pins-expiration-date` (`YYYY-MM-DD` or `null`) allowed. `app-vendor-id` (a device
///   identifier) and the platform and TrustKit versions are checked and dropped.
///
/// Any other member, a duplicate member, a wrong type, a certificate that does not parse or
/// a pin that is not `pin-sha256="<base64 of 32 bytes>"` is refused.
public struct ReceivedReport: Sendable, Equatable {
    /// The largest body accepted, in bytes (64 KiB).
    public static let maxBodyBytes = 64 * 1024
    /// Most certificates in one chain.
    public static let maxChainLength = 16
    /// Most known pins.
    public static let maxKnownPins = 64
    /// Longest TrustKit text member, in bytes.
    public static let maxAppTextBytes = 256

    /// The client's `date-time` (kept, never trusted for retention or counting).
    public var dateTime: Timestamp
    /// `hostname`, lowercased, without a trailing dot.
    public var hostname: String
    /// `port`, 1-65535.
    public var port: Int
    /// `noted-hostname`: the policy entry whose pins applied.
    public var notedHostname: String
    /// `include-subdomains`.
    public var includeSubdomains: Bool
    /// `served-certificate-chain`: PEM certificates, leaf first (at least one; empty for a
    /// TrustKit report, which sends none).
    public var servedChain: [String]
    /// `validated-certificate-chain`: PEM certificates, leaf first (may be empty).
    public var validatedChain: [String]
    /// `known-pins`: base64 SPKI SHA-256 pins, as sent, in order.
    public var knownPins: [String]
    /// `effective-expiration-date`, nil for `null`.
    public var effectiveExpirationDate: Timestamp?
    /// TrustKit's `app-bundle-id`.
    public var appBundleID: String?
    /// TrustKit's `app-version`.
    public var appVersion: String?
    /// TrustKit's `app-platform`.
    public var appPlatform: String?
    /// TrustKit's `validation-result` code.
    public var validationResult: Int64?
    /// The served key: base64 SPKI SHA-256 (RFC 7469 §2.4) of the validated chain's leaf, or
    /// of the served chain's leaf when no chain was validated.
    public var servedPin: String

    private static let requiredMembers: Set<String> = [
        "date-time", "hostname", "port", "include-subdomains", "noted-hostname",
        "served-certificate-chain", "validated-certificate-chain", "known-pins",
    ]
    private static let optionalMembers: Set<String> = [
        // A date, or absent (or null) when no expiring pins applied (baseline pins).
        "effective-expiration-date",
        "app-bundle-id", "app-version", "app-platform", "validation-result",
    ]
    private static let trustKitRequired: Set<String> = [
        "date-time", "hostname", "port", "noted-hostname", "include-subdomains", "validated-certificate-chain",
        "known-pins", "trustkit-version",
    ]
    private static let trustKitOptional: Set<String> = [
        "app-bundle-id", "app-version", "app-platform", "app-platform-version", "app-vendor-id", "enforce-pinning",
        "validation-result", "known-pins-expiration-date",
    ]

    /// Parses and checks a report body.
    ///
    /// - Parameter body: the request body (UTF-8 JSON, at most `maxBodyBytes`).
    /// - Returns: the report.
    /// - Throws: `ReportBodyError`.
    public static func parse(_ body: [UInt8]) throws(ReportBodyError) -> ReceivedReport {
        guard body.count <= maxBodyBytes else { throw .tooLarge(bytes: body.count, limit: maxBodyBytes) }
        let value: JSONValue
        do {
            value = try StrictJSONParser.parse(
                body, limits: JSONLimits(maxBytes: maxBodyBytes, maxDepth: 3, maxElements: 128))
        } catch {
            throw .malformed("not strict JSON: \(error)")
        }
        guard case .object(let object) = value else { throw .malformed("the report is not a JSON object") }
        let isTrustKit = object["trustkit-version"] != nil
        let required = isTrustKit ? trustKitRequired : requiredMembers
        let optional = isTrustKit ? trustKitOptional : optionalMembers
        for member in object.members where !required.contains(member.name) && !optional.contains(member.name) {
            throw .malformed("unknown member \"\(TerminalText.escape(String(member.name.prefix(64))))\"")
        }
        for name in required.sorted() where object[name] == nil {
            throw .malformed("missing member \"\(name)\"")
        }

        let dateTime = try time(object, "date-time")
        let hostname = try hostName(object, "hostname", normalise: true)
        let notedHostname = try hostName(object, "noted-hostname", normalise: false)
        guard let port = try integer(object, "port"), (1...65_535).contains(port) else {
            throw .malformed("\"port\" must be an integer from 1 to 65535")
        }
        guard case .bool(let includeSubdomains) = object["include-subdomains"] else {
            throw .malformed("\"include-subdomains\" must be true or false")
        }
        let expiration: Timestamp?
        let served: (texts: [String], leafPin: [UInt8]?)
        if isTrustKit {
            expiration = try day(object, "known-pins-expiration-date")
            served = ([], nil)
        } else {
            if object["effective-expiration-date"] == nil || object["effective-expiration-date"] == .null {
                expiration = nil
            } else {
                expiration = try time(object, "effective-expiration-date")
            }
            served = try chain(object, "served-certificate-chain")
            guard !served.texts.isEmpty else { throw .malformed("\"served-certificate-chain\" is empty") }
        }
        let validated = try chain(object, "validated-certificate-chain")
        if isTrustKit {
            guard !validated.texts.isEmpty else { throw .malformed("\"validated-certificate-chain\" is empty") }
            for name in ["trustkit-version", "app-platform-version", "app-vendor-id"] {
                _ = try appText(object, name)
            }
            if let flag = object["enforce-pinning"] {
                guard case .bool = flag else { throw .malformed("\"enforce-pinning\" must be true or false") }
            }
        }
        let pins = try knownPins(object)
        var report = ReceivedReport(
            dateTime: dateTime, hostname: hostname, port: Int(port), notedHostname: notedHostname,
            includeSubdomains: includeSubdomains, servedChain: served.texts, validatedChain: validated.texts,
            knownPins: pins, effectiveExpirationDate: expiration,
            servedPin: Base64.encode(validated.leafPin ?? served.leafPin ?? []))
        report.appBundleID = try appText(object, "app-bundle-id")
        report.appVersion = try appText(object, "app-version")
        report.appPlatform = try appText(object, "app-platform")
        if object["validation-result"] != nil {
            guard let code = try integer(object, "validation-result"), (0...1_000).contains(code) else {
                throw .malformed("\"validation-result\" must be an integer from 0 to 1000")
            }
            report.validationResult = code
        }
        return report
    }

    private static func time(_ object: JSONObject, _ name: String) throws(ReportBodyError) -> Timestamp {
        guard case .string(let text) = object[name] else { throw .malformed("\"\(name)\" must be an RFC 3339 time") }
        // RFC 3339 allows fractional seconds (TrustKit sends none, others may): dropped here.
        var whole = text
        if let dot = text.firstIndex(of: "."), text.hasSuffix("Z") {
            let fraction = text[text.index(after: dot)..<text.index(before: text.endIndex)]
            if !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) {
                whole = String(text[..<dot]) + "Z"
            }
        }
        do { return try Timestamp(rfc3339: whole) } catch {
            throw .malformed("\"\(name)\" is not an RFC 3339 UTC time: \(error)")
        }
    }

    /// TrustKit's `known-pins-expiration-date`: `YYYY-MM-DD` (midnight UTC) or `null`.
    private static func day(_ object: JSONObject, _ name: String) throws(ReportBodyError) -> Timestamp? {
        guard let value = object[name] else { return nil }
        if case .null = value { return nil }
        guard case .string(let text) = value, text.utf8.count == 10 else {
            throw .malformed("\"\(name)\" must be a YYYY-MM-DD date or null")
        }
        do { return try Timestamp(rfc3339: text + "T00:00:00Z") } catch {
            throw .malformed("\"\(name)\" is not a date: \(error)")
        }
    }

    private static func hostName(_ object: JSONObject, _ name: String, normalise: Bool) throws(ReportBodyError)
        -> String
    {
        guard case .string(var text) = object[name] else { throw .malformed("\"\(name)\" must be a string") }
        if normalise {
            text = text.lowercased()
            if text.hasSuffix(".") { text.removeLast() }
        }
        do { try HostName.validate(text) } catch {
            throw .malformed("\"\(name)\": \(TerminalText.escape(String(text.prefix(64)))): \(error)")
        }
        return text
    }

    private static func integer(_ object: JSONObject, _ name: String) throws(ReportBodyError) -> Int64? {
        guard case .number(let text) = object[name] else { throw .malformed("\"\(name)\" must be a number") }
        guard text.count <= 16, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else { return nil }
        return Int64(text)
    }

    private static func appText(_ object: JSONObject, _ name: String) throws(ReportBodyError) -> String? {
        guard let value = object[name] else { return nil }
        guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= maxAppTextBytes,
            text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }
            )
        else {
            throw .malformed("\"\(name)\" must be 1 to \(maxAppTextBytes) bytes of text without control characters")
        }
        return text
    }

    private static func chain(_ object: JSONObject, _ name: String) throws(ReportBodyError) -> (
        texts: [String], leafPin: [UInt8]?
    ) {
        guard case .array(let items) = object[name] else { throw .malformed("\"\(name)\" must be an array") }
        guard items.count <= maxChainLength else {
            throw .malformed("\"\(name)\" has more than \(maxChainLength) certificates")
        }
        var texts: [String] = []
        var leafPin: [UInt8]?
        for (index, item) in items.enumerated() {
            guard case .string(let pem) = item, pem.hasPrefix("-----BEGIN CERTIFICATE-----") else {
                throw .malformed("\(name)[\(index)] is not a PEM certificate")
            }
            let objects: [SPKIObject]
            do {
                objects = try SPKIReader.objects(in: Array(pem.utf8), source: "\(name)[\(index)]") { nil }
            } catch {
                throw .malformed("\(name)[\(index)] is not a PEM certificate")
            }
            guard objects.count == 1, let certificate = objects.first, certificate.kind == .certificate else {
                throw .malformed("\(name)[\(index)] must hold exactly one certificate")
            }
            if index == 0 { leafPin = certificate.spkiSHA256 }
            texts.append(pem)
        }
        return (texts, leafPin)
    }

    private static func knownPins(_ object: JSONObject) throws(ReportBodyError) -> [String] {
        guard case .array(let items) = object["known-pins"] else { throw .malformed("\"known-pins\" must be an array") }
        guard items.count <= maxKnownPins else { throw .malformed("\"known-pins\" has more than \(maxKnownPins) pins") }
        var pins: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item, text.hasPrefix("pin-sha256=\""), text.hasSuffix("\""), text.count > 13
            else {
                throw .malformed("known-pins[\(index)] is not pin-sha256=\"<base64>\"")
            }
            let encoded = String(text.dropFirst(12).dropLast())
            guard let digest = Base64.decodeCanonical(encoded), digest.count == 32 else {
                throw .malformed("known-pins[\(index)] is not the base64 of 32 bytes")
            }
            pins.append(encoded)
        }
        return pins
    }
}

/// Why a report body was refused; the server answers 413 for `tooLarge`, 400 otherwise,
/// with `description` as the reason.
public enum ReportBodyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Larger than `ReceivedReport.maxBodyBytes`.
    case tooLarge(bytes: Int, limit: Int)
    /// Not a valid report; the reason names the member and rule.
    case malformed(String)

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): return "report body of \(bytes) bytes is larger than \(limit) bytes"
        case .malformed(let reason): return reason
        }
    }
}
