// Pin validation failure reports (RFC 7469 §3, docs/DESIGN.md §8 step 5) and their 24-hour throttle.

import PinionCore

/// A pin validation failure report with the fields of RFC 7469 §3, delivered to the app's
/// callback and optionally POSTed (as `jsonBytes()`) to a report URI.
public struct PinFailureReport: Sendable, Equatable {
    /// When the failure was observed (RFC 7469 §3 `date-time`).
    public var dateTime: Timestamp
    /// The host the app connected to (`hostname`).
    public var hostname: String
    /// The TCP port of the connection (`port`), 1-65535.
    public var port: Int
    /// The name of the policy entry whose pins applied (`noted-hostname`).
    public var notedHostname: String
    /// Whether that entry covers subdomains (`include-subdomains`).
    public var includeSubdomains: Bool
    /// The certificates the peer sent, as PEM, leaf first (`served-certificate-chain`).
    public var servedCertificateChain: [String]
    /// The chain X.509 validation built, as PEM, leaf first (`validated-certificate-chain`);
    /// empty when there was none.
    public var validatedCertificateChain: [String]
    /// The pins that applied (`known-pins`, written `pin-sha256="<base64>"`).
    public var knownPins: [Pin]
    /// When the applied pins stop counting (`effective-expiration-date`): the manifest's
    /// `expiresAt` (plus staleGrace) when the entry whose pins applied is the current
    /// manifest's; nil when the baseline's pins applied (they do not expire), and then the
    /// member is left out of the JSON, since RFC 7469 §3 defines it as a date.
    public var effectiveExpirationDate: Timestamp?

    /// - Parameters:
    ///   - dateTime: when the failure was observed.
    ///   - hostname: the host connected to.
    ///   - port: the TCP port.
    ///   - notedHostname: the policy entry's name.
    ///   - includeSubdomains: the policy entry's flag.
    ///   - servedCertificateChain: PEM certificates the peer sent, leaf first.
    ///   - validatedCertificateChain: PEM certificates of the verified chain, leaf first.
    ///   - knownPins: the pins that applied.
    ///   - effectiveExpirationDate: when those pins stop counting, if ever.
    public init(
        dateTime: Timestamp, hostname: String, port: Int, notedHostname: String, includeSubdomains: Bool,
        servedCertificateChain: [String], validatedCertificateChain: [String], knownPins: [Pin],
        effectiveExpirationDate: Timestamp?
    ) {
        self.dateTime = dateTime
        self.hostname = hostname
        self.port = port
        self.notedHostname = notedHostname
        self.includeSubdomains = includeSubdomains
        self.servedCertificateChain = servedCertificateChain
        self.validatedCertificateChain = validatedCertificateChain
        self.knownPins = knownPins
        self.effectiveExpirationDate = effectiveExpirationDate
    }

    /// The report of a failed evaluation.
    ///
    /// - Parameters:
    ///   - failure: the failure from `evaluate(host:verifiedChain:policy:)`; gives hostname,
    ///     noted-hostname, include-subdomains and known-pins.
    ///   - port: the TCP port.
    ///   - dateTime: when the failure was observed.
    ///   - servedCertificateChain: PEM certificates the peer sent, leaf first.
    ///   - validatedCertificateChain: PEM certificates of the verified chain, leaf first.
    ///   - effectiveExpirationDate: when the applied pins stop counting, if ever.
    public init(
        failure: PinFailure, port: Int, dateTime: Timestamp, servedCertificateChain: [String],
        validatedCertificateChain: [String], effectiveExpirationDate: Timestamp?
    ) {
        self.init(
            dateTime: dateTime, hostname: failure.host, port: port, notedHostname: failure.entry,
            includeSubdomains: failure.includeSubdomains, servedCertificateChain: servedCertificateChain,
            validatedCertificateChain: validatedCertificateChain, knownPins: failure.knownPins,
            effectiveExpirationDate: effectiveExpirationDate)
    }

    /// A DER certificate as PEM (RFC 7468 §2): `-----BEGIN CERTIFICATE-----`, base64 in lines
    /// of 64 characters, `-----END CERTIFICATE-----`, lines joined by `\n`, no final newline.
    ///
    /// - Parameter der: the DER-encoded certificate bytes.
    /// - Returns: the PEM text.
    public static func pem(certificateDER der: [UInt8]) -> String {
        let encoded = Array(Base64.encode(der))
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var start = 0
        while start < encoded.count {
            let end = min(start + 64, encoded.count)
            lines.append(String(encoded[start..<end]))
            start = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n")
    }

    /// The report as the JSON object of RFC 7469 §3, members in the RFC's order, times as
    /// RFC 3339 UTC.
    ///
    /// - Returns: UTF-8 JSON bytes (indented, ending with a newline).
    public func jsonBytes() -> [UInt8] {
        JSONWriter.write(.object(JSONObject([.init("date-time", .string(dateTime.description))] + identityMembers)))
    }

    /// Every member except `date-time`: two reports with equal members are the same report
    /// for the once-per-24-hours rule.
    var identityMembers: [JSONObject.Member] {
        [
            .init("hostname", .string(hostname)),
            .init("port", .number(String(port))),
        ]
            + (effectiveExpirationDate.map { [.init("effective-expiration-date", .string($0.description))] } ?? [])
            + [
                .init("include-subdomains", .bool(includeSubdomains)),
                .init("noted-hostname", .string(notedHostname)),
                .init("served-certificate-chain", .array(servedCertificateChain.map { .string($0) })),
                .init("validated-certificate-chain", .array(validatedCertificateChain.map { .string($0) })),
                .init("known-pins", .array(knownPins.map { .string("pin-sha256=\"\(Base64.encode($0.digest))\"") })),
            ]
    }
}

/// Remembers which reports were sent, so that an identical report (equal in every field but
/// `date-time`) goes out at most once per 24 hours (docs/DESIGN.md §8 step 5).
///
/// Pure: the caller passes the time. Memory is bounded: at most `capacity` reports are
/// remembered, each as a 32-byte SHA-256 of its fields; when full, reports older than 24
/// hours are forgotten first, then the oldest.
public struct ReportThrottle: Sendable {
    /// The throttle window: 24 hours, in seconds.
    public static let window: Int64 = 86_400
    /// The default number of remembered reports.
    public static let defaultCapacity = 1_000

    /// Most reports remembered at once (at least 1).
    public let capacity: Int
    private let hasher: any SHA256Hasher
    private var sentAt: [[UInt8]: Timestamp] = [:]

    /// - Parameters:
    ///   - capacity: most reports remembered at once (values below 1 count as 1).
    ///   - hasher: SHA-256 used to remember a report by digest instead of by its chains.
    public init(capacity: Int = ReportThrottle.defaultCapacity, hasher: any SHA256Hasher) {
        self.capacity = max(1, capacity)
        self.hasher = hasher
    }

    /// The number of reports remembered now.
    public var count: Int { sentAt.count }

    /// Whether an identical report was sent within the 24 hours before `now`.
    ///
    /// A report remembered with a time after `now` (the clock stepped back) does not
    /// suppress, so a clock change cannot silence reports for longer than the window.
    ///
    /// - Parameters:
    ///   - report: the report to send; its `dateTime` is ignored.
    ///   - now: the current time.
    /// - Returns: `true` when the report must not be sent again yet.
    public func isSuppressed(_ report: PinFailureReport, at now: Timestamp) -> Bool {
        isSuppressed(identity: identity(of: report), at: now)
    }

    /// Decides whether to send `report` now and, if so, remembers it as sent at `now`.
    ///
    /// - Parameters:
    ///   - report: the report to send; its `dateTime` is ignored.
    ///   - now: the current time.
    /// - Returns: `true` when the report should be sent (no identical one in the last 24
    ///   hours); `false` when it is suppressed.
    public mutating func shouldSend(_ report: PinFailureReport, at now: Timestamp) -> Bool {
        let key = identity(of: report)
        if isSuppressed(identity: key, at: now) { return false }
        if sentAt[key] == nil && sentAt.count >= capacity { evict(at: now) }
        sentAt[key] = now
        return true
    }

    private func isSuppressed(identity key: [UInt8], at now: Timestamp) -> Bool {
        guard let sent = sentAt[key] else { return false }
        let elapsed = now.secondsSince1970.subtractingReportingOverflow(sent.secondsSince1970)
        return !elapsed.overflow && elapsed.partialValue >= 0 && elapsed.partialValue < ReportThrottle.window
    }

    private func identity(of report: PinFailureReport) -> [UInt8] {
        hasher.sha256(JSONWriter.write(.object(JSONObject(report.identityMembers))))
    }

    private mutating func evict(at now: Timestamp) {
        sentAt = sentAt.filter { isSuppressed(identity: $0.key, at: now) }
        while sentAt.count >= capacity, let oldest = sentAt.min(by: { $0.value < $1.value }) {
            sentAt[oldest.key] = nil
        }
    }
}
