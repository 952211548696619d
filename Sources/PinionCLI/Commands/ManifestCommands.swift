// `pinion manifest init|set-domain|remove-domain|revoke-pin`: build and edit manifest payloads.

import PinionCore
import PinionCrypto

struct ManifestInitCommand: Command {
    static let path = ["manifest", "init"]
    static let summary = "make a manifest payload (new, or the next after --previous)"
    static let options: [OptionSpec] =
        [
            .value("scope"), .value("root"), .value("previous"), .value("out", short: "o"),
            .flag("force"),
        ] + Validity.options
    static let help = """
        usage: pinion manifest init [--scope S] [--root ROOT_ENVELOPE] [--previous ENVELOPE]
                                    (--expires-in 30d | --expires-at TIME) [--issued-at TIME]
                                    -o PAYLOAD [--force]

        Writes an unsigned manifest payload (docs/DESIGN.md §5).
        With --previous (the latest published manifest envelope): version = previous + 1,
        `previous` = SHA-256 of its payload bytes, and its scope, rootVersion, domains and
        revokedPins are carried over. With --root: scope and rootVersion come from that
        root (use it after a root rotation), and the lifetime is checked against the root's
        maxManifestLifetime. With neither: version 1, rootVersion 1, --scope required.

        Edit it with pinion manifest set-domain / remove-domain / revoke-pin, then sign.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let out = try arguments.required("out")
        let (issuedAt, expiresAt) = try Validity.window(
            arguments, context: context, defaultLifetime: nil)
        var payload = ManifestPayload(
            scope: "", rootVersion: 1, version: 1, issuedAt: issuedAt, expiresAt: expiresAt)
        if let previousPath = arguments.value("previous") {
            let (envelope, previous) = try Load.manifestEnvelope(previousPath)
            guard previous.version < Limits.maxInteger else {
                throw CLIError.failure("version would exceed 2^53-1")
            }
            payload.scope = previous.scope
            payload.rootVersion = previous.rootVersion
            payload.version = previous.version + 1
            payload.previous = crypto.hasher.sha256(envelope.payload)
            payload.domains = previous.domains
            payload.revokedPins = previous.revokedPins
            payload.extensions = previous.extensions
            if issuedAt < previous.issuedAt {
                context.warn(
                    "issuedAt \(issuedAt) is before the previous version's \(previous.issuedAt); publish will refuse it"
                )
            }
        }
        if let rootPath = arguments.value("root") {
            let (_, root) = try Load.rootEnvelope(rootPath, context: context)
            if arguments.value("previous") != nil {
                guard root.scope == payload.scope else {
                    throw CLIError.usage(
                        "--root has scope \(root.scope), --previous has scope \(payload.scope)")
                }
                guard root.version >= payload.rootVersion else {
                    throw CLIError.usage(
                        "--root is version \(root.version), older than the previous manifest's rootVersion \(payload.rootVersion)"
                    )
                }
            }
            payload.scope = root.scope
            payload.rootVersion = root.version
            if payload.expiresAt > root.expiresAt {
                context.warn(
                    "the manifest outlives root version \(root.version) (expires \(root.expiresAt)); clients stop accepting it then"
                )
            }
            guard payload.lifetime <= root.maxManifestLifetime else {
                throw CLIError.failure(
                    "lifetime \(HumanDuration.text(payload.lifetime)) exceeds the root's cap of \(HumanDuration.text(root.maxManifestLifetime)) (maxManifestLifetime)"
                )
            }
        }
        if let scope = arguments.value("scope") {
            if !payload.scope.isEmpty, payload.scope != scope {
                throw CLIError.usage(
                    "--scope \(scope) differs from the scope \(payload.scope) of --root/--previous")
            }
            payload.scope = scope
        }
        guard !payload.scope.isEmpty else {
            throw CLIError.usage("--scope is required without --root or --previous")
        }
        do { try Scope.validate(payload.scope) } catch { throw CLIError.usage("--scope: \(error)") }
        try Files.writeAtomically(payload.serialized(), to: out, replace: arguments.flag("force"))
        context.print(
            "wrote \(out): manifest version \(payload.version) (rootVersion \(payload.rootVersion)) of scope \(payload.scope), \(payload.domains.count) domain(s), expires \(expiresAt)"
        )
    }
}

/// Edits a manifest payload file in place (atomically), re-checking it strictly.
enum ManifestEdit {
    static func apply(_ path: String, _ change: (inout ManifestPayload) throws -> Void) throws
        -> ManifestPayload
    {
        var payload = try Load.manifestPayload(path)
        try change(&payload)
        let bytes = payload.serialized()
        do { _ = try ManifestPayload.parse(bytes) } catch {
            throw CLIError.failure(error.inFile(path).description)
        }
        try Files.writeAtomically(bytes, to: path, replace: true)
        return payload
    }

    /// A pin in its canonical spelling, or in one of the other spellings `pinion spki`
    /// prints (bare base64, `pin-sha256="..."`, 64 hex digits), normalised with a note.
    static func pin(_ text: String, context: CLIContext? = nil) throws(CLIError) -> Pin {
        if let pin = try? Pin(text) { return pin }
        var digest: [UInt8]?
        if text.hasPrefix("pin-sha256=\""), text.hasSuffix("\""), text.count > 12 {
            digest = Base64.decodeCanonical(String(text.dropFirst(12).dropLast()))
        } else if text.utf8.count == 64 {
            digest = Hex.decodeLowercase(text.lowercased())
        } else if text.utf8.count == 44 {
            digest = Base64.decodeCanonical(text)
        }
        if let digest, digest.count == 32, let pin = try? Pin(digest: digest) {
            context?.warn("\"\(text)\" normalised to \(pin)")
            return pin
        }
        do { return try Pin(text) } catch {
            throw .usage(
                "\"\(text)\": \(error) (pins look like sha256/<44 characters of base64>; see pinion spki)")
        }
    }

    static func hostName(_ name: String) throws(CLIError) -> String {
        do { try HostName.validate(name) } catch { throw .usage("\"\(name)\": \(error)") }
        return name
    }
}

struct ManifestSetDomainCommand: Command {
    static let path = ["manifest", "set-domain"]
    static let summary = "add or replace a domain's pin set in a payload"
    static let options: [OptionSpec] = [
        .value("pin", repeatable: true), .flag("include-subdomains"), .flag("report-only"),
    ]
    static let help = """
        usage: pinion manifest set-domain PAYLOAD NAME --pin P [--pin P ...]
                                          [--include-subdomains] [--report-only]

        Sets the entry of host NAME (lowercase A-labels, no wildcard, two labels or more) to
        exactly the given pins (sha256/<base64>, see pinion spki), replacing any entry of
        that name. --report-only sets enforce false (failures are reported, not refused).
        Enforced domains need two pins or more (a backup pin, RFC 7469 §4.3) to be signed.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["PAYLOAD", "NAME"])
        let name = try ManifestEdit.hostName(positional[1])
        let pinTexts = arguments.values("pin")
        guard !pinTexts.isEmpty else { throw CLIError.usage("at least one --pin is required") }
        var pins: [Pin] = []
        for text in pinTexts {
            let pin = try ManifestEdit.pin(text, context: context)
            guard !pins.contains(pin) else { throw CLIError.usage("--pin \(text) given twice") }
            pins.append(pin)
        }
        guard pins.count <= Limits.standard.maxPinsPerDomain else {
            throw CLIError.usage("more than \(Limits.standard.maxPinsPerDomain) pins")
        }
        var replaced = false
        let payload = try ManifestEdit.apply(positional[0]) { payload in
            let domain = ManifestPayload.Domain(
                name: name, includeSubdomains: arguments.flag("include-subdomains"),
                enforce: !arguments.flag("report-only"),
                pins: pins)
            if let index = payload.domains.firstIndex(where: { $0.name == name }) {
                payload.domains[index] = domain
                replaced = true
            } else {
                guard payload.domains.count < Limits.standard.maxDomains else {
                    throw CLIError.failure(
                        "the payload already holds \(Limits.standard.maxDomains) domains (the limit)")
                }
                payload.domains.append(domain)
            }
        }
        let revoked = pins.filter { payload.revokedPins.contains($0) }
        for pin in revoked { context.warn("\(pin) is in revokedPins; clients will never accept it") }
        if pins.count < 2, !arguments.flag("report-only") {
            context.warn("\(name) has one pin; signing needs a backup pin or --allow-single-pin")
        }
        context.print(
            "\(replaced ? "replaced" : "added") \(name) (\(pins.count) pin(s)) in \(positional[0])")
    }
}

struct ManifestRemoveDomainCommand: Command {
    static let path = ["manifest", "remove-domain"]
    static let summary = "remove a domain from a payload"
    static let options: [OptionSpec] = []
    static let help = """
        usage: pinion manifest remove-domain PAYLOAD NAME

        Removes the entry of host NAME. Baseline pins compiled into apps still apply to it.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["PAYLOAD", "NAME"])
        let name = positional[1]
        _ = try ManifestEdit.apply(positional[0]) { payload in
            guard let index = payload.domains.firstIndex(where: { $0.name == name }) else {
                throw CLIError.failure("\(positional[0]): no domain \(name)")
            }
            payload.domains.remove(at: index)
        }
        context.print("removed \(name) from \(positional[0])")
    }
}

struct ManifestRevokePinCommand: Command {
    static let path = ["manifest", "revoke-pin"]
    static let summary = "add a pin to revokedPins (clients never accept it again)"
    static let options: [OptionSpec] = []
    static let help = """
        usage: pinion manifest revoke-pin PAYLOAD PIN

        Adds PIN to revokedPins. Clients subtract revoked pins from every domain, including
        the baseline compiled into the app, so a stolen key stops working at their next
        refresh. Revocations carry forward to later versions.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["PAYLOAD", "PIN"])
        let pin = try ManifestEdit.pin(positional[1], context: context)
        var already = false
        let payload = try ManifestEdit.apply(positional[0]) { payload in
            if payload.revokedPins.contains(pin) {
                already = true
            } else {
                payload.revokedPins.append(pin)
            }
        }
        if already {
            context.print("\(pin) was already revoked in \(positional[0])")
            return
        }
        context.print("revoked \(pin) in \(positional[0])")
        for domain in payload.domains where domain.pins.contains(pin) {
            let left = domain.pins.filter { $0 != pin }.count
            context.warn("\(domain.name) still lists the revoked pin; \(left) usable pin(s) remain")
        }
    }
}
