// `pinion export`: a verified manifest's pins as baseline pins in a platform's own format.

import PinionCore
import PinionCrypto
import PinionInterop

struct ExportCommand: Command {
    static let path = ["export"]
    static let summary =
        "write a verified manifest's pins as Android NSC, Apple plist, OkHttp, the SDKs' baseline file or Swift"
    static let options: [OptionSpec] =
        VerifiedManifestFile.options + [
            .value("out", short: "o"), .flag("force"), .flag("lossy"), .value("certs", repeatable: true),
            .value("assume"), .value("package"), .value("passphrase-file"),
        ]
    static let help = """
        usage: pinion export FORMAT --root ROOT_ENVELOPE [--root-chain DIR] ENVELOPE
                             [-o FILE [--force]] [--at TIME] [--lossy]
                             [--certs FILE ...] [--assume leaf|ca]     (apple-plist)
                             [--package NAME]                          (okhttp-kotlin)

        Verifies ENVELOPE as pinion verify does (a build never takes pins from an unverified
        file), then writes its pins, minus revokedPins, as baseline pins for the next app
        build in FORMAT (to FILE, default standard output):

          android-nsc     res/xml/network_security_config.xml (<pin-set> without expiration)
          apple-plist     Info.plist NSAppTransportSecurity/NSPinnedDomains; each pin is a leaf
                          or CA identity, from --certs (the certificates, CSRs or keys the
                          pins came from; repeat --certs per file) or --assume; report-only
                          domains go to TrustKit's TSKConfiguration (kTSKEnforcePinning false)
          okhttp-kotlin   a Kotlin CertificatePinner (includeSubdomains as **.name)
          baseline        the SDKs' pinion.baseline JSON (pinion client --baseline, the
                          Apple loader's baseline.json, the JVM SDK's Baseline.parse)
          swift-baseline  Swift source embedding the SDK's pinion.baseline file

        NSC and OkHttp cannot express report-only domains, and no format can express a
        domain whose pins are all revoked: they are refused unless --lossy, which leaves
        them out and says so. Exit 0 written, 1 invalid envelope or not expressible,
        2 usage (unknown pin roles among them), 3 I/O.

        """

    static let formats = ["android-nsc", "apple-plist", "okhttp-kotlin", "baseline", "swift-baseline"]

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["FORMAT", "ENVELOPE"])
        let (format, file) = (positional[0], positional[1])
        guard formats.contains(format) else {
            throw CLIError.usage("FORMAT must be one of \(formats.joined(separator: ", ")), got \"\(format)\"")
        }
        if format != "apple-plist", !arguments.values("certs").isEmpty || arguments.value("assume") != nil {
            throw CLIError.usage("--certs and --assume are only used with apple-plist")
        }
        if format != "okhttp-kotlin", arguments.value("package") != nil {
            throw CLIError.usage("--package is only used with okhttp-kotlin")
        }
        var assume: PinRole?
        if let text = arguments.value("assume") {
            guard let role = PinRole(rawValue: text) else {
                throw CLIError.usage("--assume must be leaf or ca, got \"\(text)\"")
            }
            assume = role
        }
        if let package = arguments.value("package") {
            // Kotlin's hard keywords are no identifiers (kotlinc refuses `package com.example.in`).
            let keywords: Set<Substring> = [
                "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface", "is",
                "null", "object", "package", "return", "super", "this", "throw", "true", "try", "typealias", "typeof",
                "val", "var", "when", "while", "_",
            ]
            let valid = package.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                guard let first = part.first, first.isASCII, first.isLetter || first == "_" else { return false }
                return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                    && !keywords.contains(part)
            }
            guard valid else {
                throw CLIError.usage(
                    "--package must be a Kotlin package name (identifiers, no hard keyword), got \"\(package)\"")
            }
        }
        let roles =
            format == "apple-plist"
            ? try PinSource.read(arguments.values("certs"), passphraseFile: arguments.value("passphrase-file"))
                .roles() : [:]

        let manifest = try VerifiedManifestFile.load(file, arguments: arguments, context: context)
        let payload = manifest.payload
        let reportOnly = format == "apple-plist" || format == "swift-baseline" || format == "baseline"
        let selection: ExportSelection
        do { selection = try ExportSelection(payload, reportOnly: reportOnly, lossy: arguments.flag("lossy")) } catch {
            throw CLIError.failure("\(file): \(error)")
        }
        guard !selection.domains.isEmpty else {
            throw CLIError.failure("\(file): no domain left to export; nothing written")
        }
        let at = try VerifiedManifestFile.time(arguments, context: context)
        var comment = [
            "Generated by pinion export \(format) from manifest version \(payload.version) (rootVersion \(payload.rootVersion)) of scope \(payload.scope),",
            "payload sha256:\(Hex.encode(manifest.payloadSHA256)), verified at \(at).",
            "The manifest expires \(payload.expiresAt); these baseline pins do not. Do not edit: export again.",
        ]
        if !payload.revokedPins.isEmpty { comment.append("Revoked pins (revokedPins) are left out.") }
        for (name, reason) in selection.leftOut { comment.append("Left out (lossy export): \(name): \(reason).") }

        var warnings: [String] = []
        let text: String
        do {
            switch format {
            case "android-nsc":
                text = AndroidNSC.export(selection.domains, comment: comment)
                try checkRoundTrip(
                    AndroidNSC.importPins(Array(text.utf8), now: at).domains, selection.domains, format: format)
            case "apple-plist":
                comment.append(
                    "NSIncludesSubdomains covers one label level only: ATS does not pin deeper subdomains that Pinion's includeSubdomains covers."
                )
                let export = try ApplePlist.export(selection.domains, roles: roles, assume: assume, comment: comment)
                text = export.text
                warnings = export.warnings
                try checkRoundTrip(ApplePlist.importPins(Array(text.utf8)).domains, selection.domains, format: format)
            case "okhttp-kotlin":
                let export = OkHttpKotlin.export(
                    selection.domains, comment: comment, packageName: arguments.value("package"))
                text = export.text
                warnings = export.warnings
            case "baseline":
                // JSON has no comments; the file is exactly what Baseline.parse reads.
                text = String(decoding: SwiftBaseline.json(selection.domains), as: UTF8.self)
            default:
                text = SwiftBaseline.export(selection.domains, comment: comment)
            }
        } catch let error as InteropError {
            throw CLIError(category: error.category, "\(file): \(error)")
        }
        for (name, reason) in selection.leftOut { context.warn("\(name) left out (--lossy): \(reason)") }
        for warning in warnings { context.warn(warning) }
        if let out = arguments.value("out") {
            try Files.writeAtomically(Array(text.utf8), to: out, replace: arguments.flag("force"))
            context.err(
                "wrote \(TerminalText.escape(out)): \(format), \(selection.domains.count) domain(s) from manifest version \(payload.version)\n"
            )
        } else {
            if arguments.flag("force") { throw CLIError.usage("--force is only used with -o") }
            context.out(text)
        }
    }

    /// The exported file must read back to the same entries (the importer is the oracle).
    static func checkRoundTrip(
        _ read: [ManifestPayload.Domain], _ written: [ManifestPayload.Domain], format: String
    ) throws(CLIError) {
        let key = { (domain: ManifestPayload.Domain) in
            "\(domain.name) \(domain.includeSubdomains) \(domain.enforce) \(Set(domain.pins.map(\.description)).sorted())"
        }
        guard Set(read.map(key)) == Set(written.map(key)), read.count == written.count else {
            throw .failure("internal error: the \(format) output does not read back to the manifest's entries")
        }
    }
}
