// `pinion import android-nsc|apple-plist`: pins from other platforms' files into a manifest payload.

import PinionCore
import PinionInterop

struct ImportCommand: Command {
    static let path = ["import"]
    static let summary = "import pins from an Android NSC file or an Apple plist into a payload"
    static let options: [OptionSpec] =
        [
            .value("scope"), .value("out", short: "o"), .value("into"), .flag("force"),
            .flag("exempt-subdomains-by-dropping-include"),
        ] + Validity.options
    static let help = """
        usage: pinion import (android-nsc | apple-plist) FILE --scope S [--expires-in 30d] -o PAYLOAD [--force]
               pinion import (android-nsc | apple-plist) FILE --into PAYLOAD
               (android-nsc also: [--exempt-subdomains-by-dropping-include])

        Reads the pinned domains of FILE and writes a manifest payload (version 1,
        rootVersion 1, issued now, expiring after --expires-in, default 30d), or merges
        them into the existing payload --into (an imported domain replaces the entry of
        the same name). Prints what was imported, and what was not and why.

          android-nsc   res/xml/network_security_config.xml: every <domain-config> with a
                        <pin-set> (nested ones inherit it); pin-set expiration and
                        overridePins are not representable (Pinion never fails open);
                        debug-overrides and trust-anchors are skipped. A subdomain
                        Android leaves unpinned under an includeSubdomains parent is
                        enforced with the parent's pins (a note says so), unless
                        --exempt-subdomains-by-dropping-include turns the parent's
                        includeSubdomains off (every unlisted subdomain is then unpinned).
          apple-plist   Info.plist, XML or binary: NSAppTransportSecurity/NSPinnedDomains
                        (leaf and CA identities) and TrustKit's TSKConfiguration
                        (kTSKEnforcePinning false becomes report-only).

        Review the payload (pinion manifest show, pinion lint), then sign it.
        Exit 0 imported, 1 the file is refused or has no pinned domain, 2 usage, 3 I/O.

        """

    /// Largest file imported (bytes).
    static let maxFileBytes = 1 << 20

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["FORMAT", "FILE"])
        let (format, file) = (positional[0], positional[1])
        guard format == "android-nsc" || format == "apple-plist" else {
            throw CLIError.usage("FORMAT must be android-nsc or apple-plist, got \"\(format)\"")
        }
        if arguments.flag("exempt-subdomains-by-dropping-include"), format != "android-nsc" {
            throw CLIError.usage("--exempt-subdomains-by-dropping-include applies to android-nsc only")
        }
        let into = arguments.value("into")
        if into != nil {
            for option in ["out", "scope", "expires-in", "expires-at", "issued-at"] where arguments.value(option) != nil
            {
                throw CLIError.usage("--\(option) cannot be combined with --into (the payload keeps its own)")
            }
        } else {
            _ = try arguments.required("out")
            let scope = try arguments.required("scope")
            do { try Scope.validate(scope) } catch { throw CLIError.usage("--scope: \(error)") }
        }
        let bytes = try Files.read(file, limit: maxFileBytes)
        let result: ImportResult
        do {
            result =
                format == "android-nsc"
                ? try AndroidNSC.importPins(
                    bytes, now: context.now(),
                    exemptSubdomainsByDroppingInclude: arguments.flag("exempt-subdomains-by-dropping-include"))
                : try ApplePlist.importPins(bytes)
        } catch {
            let expected =
                format == "android-nsc"
                ? "an Android Network Security Config (XML)" : "an Info.plist (XML or binary plist)"
            throw CLIError.failure(
                FileKind.message(
                    file, expected: expected,
                    looksRight: format == "android-nsc" ? ["XML"] : ["XML", "a binary plist"], bytes: bytes,
                    detail: "\(error)"))
        }
        for note in result.notes { context.print("note: \(file): \(TerminalText.escape(note.description))") }
        guard !result.domains.isEmpty else {
            throw CLIError.failure("\(file): no pinned domain to import; nothing written")
        }
        guard result.domains.count <= Limits.standard.maxDomains else {
            throw CLIError.failure("\(file): more than \(Limits.standard.maxDomains) domains")
        }
        for domain in result.domains where domain.pins.count > Limits.standard.maxPinsPerDomain {
            throw CLIError.failure(
                "\(file): \(domain.name) has more than \(Limits.standard.maxPinsPerDomain) pins")
        }
        let target: String
        let payload: ManifestPayload
        if let into {
            target = into
            payload = try ManifestEdit.apply(into) { payload in
                for domain in result.domains {
                    if let index = payload.domains.firstIndex(where: { $0.name == domain.name }) {
                        context.print("note: \(into): the entry of \(domain.name) is replaced")
                        payload.domains[index] = domain
                    } else {
                        payload.domains.append(domain)
                    }
                }
                guard payload.domains.count <= Limits.standard.maxDomains else {
                    throw CLIError.failure("\(into): would hold more than \(Limits.standard.maxDomains) domains")
                }
            }
        } else {
            target = try arguments.required("out")
            let (issuedAt, expiresAt) = try Validity.window(arguments, context: context, defaultLifetime: 30 * 86_400)
            let built = ManifestPayload(
                scope: try arguments.required("scope"), rootVersion: 1, version: 1, issuedAt: issuedAt,
                expiresAt: expiresAt, domains: result.domains)
            let serialized = built.serialized()
            do { payload = try ManifestPayload.parse(serialized) } catch {
                throw CLIError.failure("\(file): the imported payload does not pass the strict parser: \(error)")
            }
            try Files.writeAtomically(serialized, to: target, replace: arguments.flag("force"))
        }
        for domain in result.domains {
            let flags = [domain.enforce ? "enforce" : "report-only", domain.includeSubdomains ? "+subdomains" : nil]
                .compactMap { $0 }.joined(separator: " ")
            context.print("imported \(domain.name)  \(flags)  \(domain.pins.count) pin(s)")
            for pin in domain.pins where payload.revokedPins.contains(pin) {
                context.warn("\(domain.name): \(pin) is in revokedPins; clients will never accept it")
            }
        }
        context.print(
            "wrote \(target): manifest version \(payload.version) of scope \(payload.scope), \(result.domains.count) domain(s) imported, \(payload.domains.count) in total, expires \(payload.expiresAt)"
        )
        if let next = ImportSummary.nextStep(payload, target: target) { context.print(next) }
    }
}
