// `pinion lint`: findings with severities and fix hints before a manifest is signed or published.

import Foundation
import PinionCore
import PinionCrypto
import PinionInterop
import PinionSystem

struct LintCommand: Command {
    static let path = ["lint"]
    static let summary = "check a manifest for missing backups, risky rotations and live outages"
    static let options: [OptionSpec] = [
        .value("previous"), .value("live", repeatable: true), .value("resolve", repeatable: true),
        .value("connect-to", repeatable: true), .value("cafile"),
        .value("certs", repeatable: true), .value("passphrase-file"), .value("poll-interval"), .value("max-lifetime"),
        .value("public-suffix-list"), .value("at"),
    ]
    static let help = """
        usage: pinion lint PAYLOAD_OR_ENVELOPE [--previous ENVELOPE] [--live HOST:PORT ...]
                           [--connect-to [HOST=]ADDRESS[:PORT] ...] [--cafile F] [--certs FILE ...]
                           [--poll-interval 1h] [--max-lifetime 90d]
                           [--public-suffix-list FILE] [--at TIME]

        Prints findings (error, warning, info) with a fix hint each:
          an enforced domain with fewer than two usable pins, or none; a pin listed twice
          (backup equal to the primary); a revoked pin still listed; every pin on one key
          type or one issuer (known from --certs files and --live chains); includeSubdomains
          on a public suffix or a domain just under one (--public-suffix-list, default
          Debian's \(PublicSuffixList.debianPath)); expired, expiring within one
          polling interval, a lifetime under two polling intervals or over --max-lifetime;
          against --previous: pins removed, domains dropped, revocations lifted;
          against --live servers (X.509 checked against the system store or --cafile;
          --connect-to ADDRESS[:PORT] dials ADDRESS for every --live target, HOST=ADDRESS[:PORT]
          for the target HOST; --resolve is an alias): a chain that matches no pin, naming a
          removed pin the server still presents (an outage). Every address the name resolves
          to is probed, once offering RSA and once ECDSA signature algorithms (a server may
          hold a key of each); a handshake only, no request. An address that cannot be
          reached is an error (exit 3).
        Signatures are not checked here (pinion verify does). Exit 1 when an error-level
        finding exists, 0 otherwise; 2 usage, 3 I/O or network.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let file = try arguments.positional(["PAYLOAD_OR_ENVELOPE"])[0]
        let now = try VerifiedManifestFile.time(arguments, context: context)
        let connectTo = try ConnectTo.liveMap(
            arguments.values("connect-to") + arguments.values("resolve"), option: "--connect-to")
        let (linted, duplicates) = try payload(file)
        var input = LintInput(payload: linted, now: now)
        input.duplicatePins = duplicates
        if let previousFile = arguments.value("previous") {
            let previous = try payload(previousFile).0
            // Comparing with another scope's manifest, or with a later one, gives nonsense findings.
            guard previous.scope == linted.scope else {
                throw CLIError.usage(
                    "--previous \(previousFile) is of scope \(previous.scope), not \(linted.scope): compare versions of one scope"
                )
            }
            guard previous.version < linted.version else {
                throw CLIError.usage(
                    "--previous \(previousFile) is version \(previous.version), not older than version \(linted.version) of \(file)"
                )
            }
            input.previous = previous
        }
        if let text = arguments.value("poll-interval") {
            input.pollInterval = try DurationText.seconds(text, option: "poll-interval")
        }
        if let text = arguments.value("max-lifetime") {
            input.maxLifetime = try DurationText.seconds(text, option: "max-lifetime")
        }
        let listPath = arguments.value("public-suffix-list") ?? PublicSuffixList.debianPath
        if arguments.value("public-suffix-list") != nil || FileManager.default.fileExists(atPath: listPath) {
            let list = PublicSuffixList(
                String(decoding: try Files.read(listPath, limit: 16 << 20), as: UTF8.self))
            guard list.count > 0 else { throw CLIError.failure("\(listPath): no public suffix rule") }
            input.publicSuffixes = list
        } else {
            context.warn("\(listPath) not found (Debian package publicsuffix): includeSubdomains not checked")
        }
        let source = try PinSource.read(arguments.values("certs"), passphraseFile: arguments.value("passphrase-file"))
        for (pin, object) in source.objects {
            input.keyFacts[pin] = KeyFacts(keyType: object.keyType, issuer: source.certificates[pin]?.issuer)
        }
        for target in arguments.values("live") {
            let host = try SPKICommand.splitHostPort(target, option: "--live").0
            let probe = try LiveProbe.probeAll(
                target, address: connectTo.byHost[host.lowercased()] ?? connectTo.all, caFile: arguments.value("cafile")
            )
            for line in probe.lines { context.print(line) }
            // Every address must answer: a server not checked may be the one still on a removed key.
            if let failure = probe.failures.first { throw failure }
            for (endpoint, family, result) in probe.completed {
                var chain: [Pin] = []
                for (index, entry) in result.entries.enumerated() where entry.onVerifiedPath {
                    guard let pin = try? Pin(digest: entry.object.spkiSHA256) else { continue }
                    chain.append(pin)
                    // The next certificate on the path issued this one.
                    let issuer = result.entries[(index + 1)...].first(where: \.onVerifiedPath)?.object.label
                    if input.keyFacts[pin] == nil {
                        input.keyFacts[pin] = KeyFacts(keyType: entry.object.keyType, issuer: issuer)
                    }
                }
                input.live.append(
                    LiveObservation(
                        target: "\(target) at \(endpoint) (\(family.rawValue))", host: probe.host,
                        verified: result.verified, verifyError: result.verifyError, verifiedChain: chain))
            }
        }
        let findings = Lint.run(input)
        for finding in findings {
            for line in finding.description.split(separator: "\n") { context.print(TerminalText.escape(String(line))) }
        }
        let errors = findings.filter { $0.severity == .error }.count
        let warnings = findings.filter { $0.severity == .warning }.count
        context.print(
            "\(file): manifest version \(input.payload.version), \(input.payload.domains.count) domain(s): \(errors) error(s), \(warnings) warning(s)"
        )
        if errors > 0 { throw CLIError.failure("\(file): \(errors) error-level finding(s)") }
    }

    /// The payload of a payload or manifest envelope file, duplicates reported, not refused.
    static func payload(_ path: String) throws(CLIError) -> (ManifestPayload, [(domain: String, pin: Pin)]) {
        let bytes = try Files.read(path, limit: maxInputBytes)
        var payloadBytes = bytes
        var prefix = ""
        if case .object(let object)? = try? StrictJSONParser.parse(bytes, limits: Limits.standard.json),
            object["payloadType"] != nil
        {
            let envelope = try Load.envelope(path)
            guard envelope.kind == .pins else {
                throw .usage("\(path): holds a document of type \(envelope.kind.rawValue), a manifest is needed")
            }
            payloadBytes = envelope.payload
            prefix = "payload."
        }
        do { return try Lint.parseLeniently(payloadBytes) } catch {
            var located = error.inFile(path)
            located.path = prefix + located.path
            throw .failure(located.description)
        }
    }
}
