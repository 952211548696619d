// Lint rules for a manifest before it is signed or published: backups, revocations, public
// suffixes, lifetimes, what changed since the previous version, and live servers.

import PinionCore
import PinionTrust

/// One finding: severity, stable rule name, the domain (or `manifest`), what and how to fix.
public struct LintFinding: Sendable, Equatable, CustomStringConvertible {
    /// How bad it is; `error` makes `pinion lint` exit 1.
    public enum Severity: String, Sendable, Comparable, CaseIterable {
        case info, warning, error

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }

        private var rank: Int {
            switch self {
            case .info: return 0
            case .warning: return 1
            case .error: return 2
            }
        }
    }

    /// How bad it is.
    public var severity: Severity
    /// Stable rule name, e.g. `single-pin`.
    public var rule: String
    /// The domain concerned, or `manifest`.
    public var subject: String
    /// What is wrong.
    public var message: String
    /// How to fix it.
    public var hint: String

    /// - Parameters:
    ///   - severity: how bad it is.
    ///   - rule: stable rule name.
    ///   - subject: domain or `manifest`.
    ///   - message: what is wrong.
    ///   - hint: how to fix it.
    public init(_ severity: Severity, _ rule: String, _ subject: String, _ message: String, hint: String) {
        self.severity = severity
        self.rule = rule
        self.subject = subject
        self.message = message
        self.hint = hint
    }

    /// `error    subject  rule: message` and an indented `fix:` line.
    public var description: String {
        let label = severity.rawValue + String(repeating: " ", count: 8 - severity.rawValue.count)
        return "\(label) \(subject)  \(rule): \(message)\n         fix: \(hint)"
    }
}

/// What is known of the key behind a pin (from certificate, CSR or key files, or a live chain).
public struct KeyFacts: Sendable, Equatable {
    /// `RSA 2048`, `EC P-256`, ...
    public var keyType: String
    /// The issuer of the certificate carrying the key; nil for CSRs and bare keys.
    public var issuer: String?

    /// - Parameters:
    ///   - keyType: the key algorithm and size.
    ///   - issuer: the issuing CA's name, if the key came from a certificate.
    public init(keyType: String, issuer: String?) {
        self.keyType = keyType
        self.issuer = issuer
    }
}

/// What a live server presented.
public struct LiveObservation: Sendable, Equatable {
    /// `HOST:PORT` as given.
    public var target: String
    /// The host name checked (SNI).
    public var host: String
    /// Whether X.509 validation passed.
    public var verified: Bool
    /// Why it failed, when it did.
    public var verifyError: String?
    /// Pins of the certificates on the verified path, leaf first (empty when not verified).
    public var verifiedChain: [Pin]

    /// - Parameters:
    ///   - target: `HOST:PORT`.
    ///   - host: the checked name.
    ///   - verified: X.509 result.
    ///   - verifyError: the failure, if any.
    ///   - verifiedChain: pins on the verified path, leaf first.
    public init(target: String, host: String, verified: Bool, verifyError: String?, verifiedChain: [Pin]) {
        self.target = target
        self.host = host
        self.verified = verified
        self.verifyError = verifyError
        self.verifiedChain = verifiedChain
    }
}

/// Everything lint looks at.
public struct LintInput: Sendable {
    /// The manifest payload linted.
    public var payload: ManifestPayload
    /// Pins listed twice in one domain (the strict parser refuses them; lint reports them).
    public var duplicatePins: [(domain: String, pin: Pin)] = []
    /// The previous version, for the rotation rules.
    public var previous: ManifestPayload?
    /// The time of the checks.
    public var now: Timestamp
    /// The clients' polling interval, in seconds (SDK default 3600).
    public var pollInterval: Int64 = 3600
    /// The longest acceptable manifest lifetime, in seconds (default 90 days).
    public var maxLifetime: Int64 = 90 * 86_400
    /// The public suffix list; nil skips the includeSubdomains rule.
    public var publicSuffixes: PublicSuffixList?
    /// Key type and issuer of pins, where known.
    public var keyFacts: [Pin: KeyFacts] = [:]
    /// Live servers probed.
    public var live: [LiveObservation] = []

    /// - Parameters:
    ///   - payload: the manifest payload.
    ///   - now: the time of the checks.
    public init(payload: ManifestPayload, now: Timestamp) {
        self.payload = payload
        self.now = now
    }
}

/// The lint rules.
public enum Lint {
    /// Runs every rule.
    ///
    /// - Parameter input: the payload and context.
    /// - Returns: the findings, errors first, then in manifest order.
    public static func run(_ input: LintInput) -> [LintFinding] {
        var findings: [LintFinding] = []
        let payload = input.payload
        let revoked = Set(payload.revokedPins)
        for (domain, pin) in input.duplicatePins {
            findings.append(
                LintFinding(
                    .error, "backup-equals-primary", domain,
                    "\(pin) is listed twice: the backup pin equals the primary",
                    hint: "replace the copy with the pin of a separate backup key (pinion spki backup.csr)"))
        }
        for domain in payload.domains {
            let usable = domain.pins.filter { !revoked.contains($0) }
            for pin in domain.pins where revoked.contains(pin) {
                findings.append(
                    LintFinding(
                        .warning, "revoked-pin-listed", domain.name,
                        "\(pin) is in revokedPins; clients never accept it",
                        hint: "remove it from the domain (pinion manifest set-domain with the remaining pins)"))
            }
            if domain.enforce, usable.isEmpty {
                findings.append(
                    LintFinding(
                        .error, "no-usable-pin", domain.name, "every pin is revoked: clients refuse every connection",
                        hint: "add the pins of the keys the servers use now"))
            } else if domain.enforce, usable.count < 2 {
                findings.append(
                    LintFinding(
                        .error, "single-pin", domain.name,
                        "enforced with \(usable.count) usable pin: no backup key (RFC 7469 §4.3)",
                        hint:
                            "add the pin of a backup key kept offline (pinion spki backup.csr), or make it --report-only"
                    ))
            }
            findings += diversity(domain, usable: usable, facts: input.keyFacts)
            if domain.includeSubdomains, let suffixes = input.publicSuffixes {
                if suffixes.isPublicSuffix(domain.name) {
                    findings.append(
                        LintFinding(
                            .error, "public-suffix", domain.name,
                            "includeSubdomains on a public suffix pins every site registered under it",
                            hint: "pin the organisation's own names instead"))
                } else if suffixes.isRegistrableDomain(domain.name) {
                    findings.append(
                        LintFinding(
                            .warning, "registrable-domain", domain.name,
                            "includeSubdomains on a domain just under a public suffix pins every host of the organisation, including ones run by others (CDNs, SaaS) with other keys",
                            hint: "pin the API hosts by name, or check every subdomain's keys are in the pin set"))
                }
            }
        }
        findings += lifetime(input)
        if let previous = input.previous { findings += rotation(payload, previous: previous) }
        findings += live(input)
        return findings.enumerated().sorted { first, second in
            first.element.severity != second.element.severity
                ? first.element.severity > second.element.severity : first.offset < second.offset
        }.map(\.element)
    }

    /// Parses a manifest payload as the strict parser does, except that a pin listed twice in
    /// one domain is reported instead of refused.
    ///
    /// - Parameter bytes: the payload bytes.
    /// - Returns: the payload (each duplicate kept once) and the duplicates.
    /// - Throws: every other `FormatError` of `ManifestPayload.parse`.
    public static func parseLeniently(_ bytes: [UInt8]) throws(FormatError) -> (
        ManifestPayload, [(domain: String, pin: Pin)]
    ) {
        do {
            return (try ManifestPayload.parse(bytes), [])
        } catch {
            guard case .duplicatePin = error.rule,
                case .object(var object) = try StrictJSONParser.parse(bytes, limits: Limits.standard.json),
                case .array(var domains)? = object["domains"]
            else { throw error }
            var duplicates: [(domain: String, pin: Pin)] = []
            for index in domains.indices {
                guard case .object(var domain) = domains[index], case .array(let pins)? = domain["pins"] else {
                    continue
                }
                var seen = Set<Pin>()
                var kept: [JSONValue] = []
                for value in pins {
                    if case .string(let text) = value, let pin = try? Pin(text), !seen.insert(pin).inserted {
                        if case .string(let name)? = domain["name"] { duplicates.append((name, pin)) }
                        continue
                    }
                    kept.append(value)
                }
                domain.set("pins", .array(kept))
                domains[index] = .object(domain)
            }
            object.set("domains", .array(domains))
            var relaxed = Limits.standard
            relaxed.maxEnvelopeBytes = Int.max
            return (try ManifestPayload.parse(JSONWriter.write(.object(object)), limits: relaxed), duplicates)
        }
    }

    private static func diversity(_ domain: ManifestPayload.Domain, usable: [Pin], facts: [Pin: KeyFacts])
        -> [LintFinding]
    {
        let known = usable.compactMap { facts[$0] }
        guard usable.count >= 2, known.count == usable.count else { return [] }
        var findings: [LintFinding] = []
        if Set(known.map(\.keyType)).count == 1 {
            findings.append(
                LintFinding(
                    .warning, "one-key-type", domain.name, "every pin is a \(known[0].keyType) key",
                    hint:
                        "make the backup key another type (for example EC P-256 next to RSA), so one algorithm's weakness leaves a way out"
                ))
        }
        let issuers = known.compactMap(\.issuer)
        if issuers.count == known.count, Set(issuers).count == 1 {
            findings.append(
                LintFinding(
                    .warning, "one-issuer", domain.name, "every pinned certificate is issued by \(issuers[0])",
                    hint: "add a pin that does not depend on that CA (a CSR for another CA, or another CA's key)"))
        }
        return findings
    }

    private static func lifetime(_ input: LintInput) -> [LintFinding] {
        let payload = input.payload
        var findings: [LintFinding] = []
        let poll = input.pollInterval
        if payload.expiresAt <= input.now {
            findings.append(
                LintFinding(
                    .error, "expired", "manifest", "expired at \(payload.expiresAt) (now \(input.now))",
                    hint: "pinion manifest init --previous ... --expires-in 30d, then sign and publish"))
        } else if payload.expiresAt.secondsSince1970 - input.now.secondsSince1970 < poll {
            findings.append(
                LintFinding(
                    .warning, "expires-soon", "manifest",
                    "expires at \(payload.expiresAt), within one polling interval (\(HumanDuration.text(poll)))",
                    hint: "publish the next version now; clients that miss it fall back to the baseline pins"))
        }
        if payload.lifetime < 2 * poll {
            findings.append(
                LintFinding(
                    .error, "lifetime-too-short", "manifest",
                    "lifetime \(HumanDuration.text(payload.lifetime)) is shorter than two polling intervals (\(HumanDuration.text(2 * poll))): clients that miss one poll lose the manifest",
                    hint:
                        "use --expires-in of at least a few polling intervals plus publishing delays (days, not hours)"
                ))
        }
        if payload.lifetime > input.maxLifetime {
            findings.append(
                LintFinding(
                    .error, "lifetime-too-long", "manifest",
                    "lifetime \(HumanDuration.text(payload.lifetime)) exceeds the policy maximum of \(HumanDuration.text(input.maxLifetime)): a withheld update goes unnoticed that long",
                    hint: "use a shorter --expires-in (or raise --max-lifetime if the policy allows)"))
        }
        return findings
    }

    private static func rotation(_ payload: ManifestPayload, previous: ManifestPayload) -> [LintFinding] {
        var findings: [LintFinding] = []
        for old in previous.domains {
            guard let new = payload.domain(named: old.name) else {
                findings.append(
                    LintFinding(
                        .warning, "domain-dropped", old.name,
                        "in version \(previous.version), not in this one: clients fall back to their baseline pins (or none)",
                        hint: "keep the entry unless the host is gone; check the baseline with pinion check-host"))
                continue
            }
            for pin in old.pins where !new.pins.contains(pin) {
                findings.append(
                    LintFinding(
                        .warning, "pin-removed", old.name, "\(pin) was in version \(previous.version)",
                        hint: "remove a pin only after no server presents it: run pinion lint --live HOST:PORT"))
            }
        }
        for pin in previous.revokedPins where !payload.revokedPins.contains(pin) {
            findings.append(
                LintFinding(
                    .error, "revocation-lifted", "manifest",
                    "\(pin) was revoked in version \(previous.version) and is not here",
                    hint:
                        "carry revokedPins forward (pinion manifest init --previous does); lifting needs publish --allow-lift"
                ))
        }
        return findings
    }

    private static func live(_ input: LintInput) -> [LintFinding] {
        let revoked = Set(input.payload.revokedPins)
        let policy = MergedPolicy(
            input.payload.domains.map { domain in
                var entry = PinnedDomain(domain)
                entry.pins = entry.pins.filter { !revoked.contains($0) }
                return entry
            })
        let previousPolicy = input.previous.map { MergedPolicy($0.domains.map(PinnedDomain.init)) }
        var findings: [LintFinding] = []
        for observation in input.live {
            guard observation.verified else {
                findings.append(
                    LintFinding(
                        .error, "live-x509-failed", observation.host,
                        "\(observation.target): X.509 validation failed: \(observation.verifyError ?? "unknown error")",
                        hint: "fix the server's certificate chain (pinning only tightens X.509), or pass --cafile"))
                continue
            }
            guard let match = policy.hostPolicy(for: observation.host) else {
                findings.append(
                    LintFinding(
                        .info, "live-not-pinned", observation.host,
                        "\(observation.target): no entry of this manifest covers the host",
                        hint: "add an entry if the host should be pinned"))
                continue
            }
            let pins = Set(match.entry.pins)
            if observation.verifiedChain.contains(where: { pins.contains($0) }) { continue }
            let removed =
                previousPolicy?.hostPolicy(for: observation.host)?.entry.pins.filter {
                    !pins.contains($0) && observation.verifiedChain.contains($0)
                } ?? []
            let severity: LintFinding.Severity = match.enforce ? .error : .warning
            let outcome =
                match.enforce ? "clients taking this manifest refuse it (an outage)" : "clients report failures"
            if !removed.isEmpty {
                findings.append(
                    LintFinding(
                        severity, "removed-pin-live", observation.host,
                        "\(observation.target) still presents \(removed.map(\.description).joined(separator: ", ")), removed from \(match.entry.name); \(outcome)",
                        hint: "keep the pin until the server has rotated to a key pinned here, then remove it"))
            } else {
                findings.append(
                    LintFinding(
                        severity, "live-no-match", observation.host,
                        "\(observation.target): no key on the verified chain matches a pin of \(match.entry.name); \(outcome)",
                        hint: "add the pin of the key the server uses (pinion spki --connect \(observation.target))"))
            }
        }
        return findings
    }
}
