// `pinion verify`: check a root or manifest envelope against a trusted root and its chain.

import Foundation
import PinionCore
import PinionCrypto
import PinionTrust

struct VerifyCommand: Command {
    static let path = ["verify"]
    static let summary = "verify a root or manifest envelope against a trusted root"
    static let options: [OptionSpec] = [.value("root"), .value("root-chain"), .value("at")]
    static let help = """
        usage: pinion verify --root ROOT_ENVELOPE [--root-chain DIR] ENVELOPE [--at TIME]

        Trusts ROOT_ENVELOPE (as an app embeds it; it must carry a threshold of its own root
        role), walks the rotations in DIR (root envelopes named N.json, the published
        tree's root/ folder) from it to the newest, then checks ENVELOPE:
          a manifest: signatures and threshold of the newest root's pins role, strict
          payload, scope, rootVersion = newest root, lifetime within the root's cap, not
          expired at TIME;
          a root: that it is in the chain or is its next rotation (both thresholds).
        The newest root must not be expired at TIME (default: now).
        Invalid extra signatures are warnings. Exit 0 valid, 1 invalid, 2 usage, 3 I/O.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let target = try arguments.positional(["ENVELOPE"])[0]
        let rootPath = try arguments.required("root")
        let at =
            try arguments.value("at").map { (text) throws(CLIError) in
                try DurationText.time(text, option: "at")
            }
            ?? context.now()

        var chain: RootChain
        let anchorBytes = try Files.read(rootPath, limit: maxInputBytes)
        warnAboutRootSignatures(anchorBytes, previous: nil, file: rootPath, context: context)
        do {
            chain = try RootChain(anchor: anchorBytes, crypto: crypto)
        } catch {
            throw CLIError.document(
                error, file: rootPath, bytes: anchorBytes, expected: "a signed root envelope (JSON)")
        }
        if let directory = arguments.value("root-chain") {
            try walk(directory, chain: &chain, context: context)
        }

        let targetBytes = try Files.read(target, limit: maxInputBytes)
        let kind: PayloadKind
        do { kind = try Envelope.parse(targetBytes).kind } catch {
            throw CLIError.document(error, file: target, bytes: targetBytes, expected: "a signed envelope (JSON)")
        }
        let versions = chain.roots.map { String($0.version) }.joined(separator: " -> ")
        context.print("root chain  \(versions)  (scope \(chain.newest.payload.scope))")

        do {
            switch kind {
            case .root:
                let root = try placeRoot(targetBytes, in: &chain, file: target, context: context)
                try chain.checkNewestCurrent(at: at)
                context.print(
                    "OK: root version \(root.version) of scope \(root.payload.scope) is trusted; \(SignatureCount.rootText(root, previous: chain.root(version: root.version - 1)))"
                )
                context.print(
                    "expires \(chain.newest.payload.expiresAt) (newest root, version \(chain.newest.version))"
                )
            case .pins:
                // Warnings about failing signatures are printed even when the threshold
                // is then not met, so the operator sees which signature broke.
                if let envelope = try? Envelope.parse(targetBytes) {
                    let report = Signatures.check(
                        envelope, role: chain.newest.payload.pinsRole, keys: chain.newest.payload,
                        crypto: crypto)
                    warn(report, file: target, role: "pins", context: context)
                }
                let manifest = try ManifestVerifier.verify(targetBytes, under: chain.newest, crypto: crypto)
                try chain.checkNewestCurrent(at: at)
                try manifest.checkCurrent(at: at)
                let payload = manifest.payload
                if payload.issuedAt > at.adding(seconds: 86_400) {
                    context.warn(
                        "\(target): issuedAt \(payload.issuedAt) is more than a day after \(at) (future-dated)")
                }
                if payload.version > 1, payload.previous == nil {
                    context.warn("\(target): version \(payload.version) has no previous hash")
                }
                context.print(
                    "OK: manifest version \(payload.version) (rootVersion \(payload.rootVersion)) of scope \(payload.scope), \(payload.domains.count) domain(s)"
                )
                context.print(
                    "pins role: \(SignatureCount.text(manifest.report.valid.count, of: chain.newest.payload.pinsRole)): \(manifest.report.valid.joined(separator: ", "))"
                )
                context.print(
                    "payload sha256:\(Hex.encode(manifest.payloadSHA256)), expires \(payload.expiresAt)")
            }
        } catch let error as TrustError {
            throw CLIError.manifest(error, file: target, envelopeBytes: targetBytes, chain: chain)
        }
    }

    /// Places a root envelope: an identical member of the chain, or its next rotation.
    static func placeRoot(_ bytes: [UInt8], in chain: inout RootChain, file: String, context: CLIContext) throws
        -> VerifiedRoot
    {
        let envelope: Envelope
        let version: Int64
        do {
            envelope = try Envelope.parse(bytes)
            version = try RootPayload.parse(envelope.payload, crypto: crypto).version
        } catch {
            throw CLIError.failure(Load.located(error, file).description)
        }
        if let known = chain.root(version: version) {
            warnAboutRootSignatures(bytes, previous: nil, file: file, context: context)
            guard known.payloadSHA256 == crypto.hasher.sha256(envelope.payload) else {
                throw TrustError.rootEquivocation(version: version)
            }
            // Same payload: its signatures are re-checked as an anchor would be.
            return try RootChain(anchor: bytes, crypto: crypto).newest
        }
        if version < chain.roots[0].version {
            throw CLIError.failure(
                "\(file): root version \(version) is older than the trusted root; it cannot be checked from it")
        }
        warnAboutRootSignatures(bytes, previous: chain.newest.payload, file: file, context: context)
        return try chain.append(bytes, crypto: crypto)
    }

    /// Follows `N.json` for N = newest + 1, ... until the next number is absent. Numbered
    /// files beyond a missing one are refused (a gap would otherwise end the walk early and
    /// silently keep an older root), an entry that exists but cannot be read or is not a
    /// regular file (a FIFO, a device) is an I/O error, never "the end of the chain", and the
    /// entry of the trusted root's own version must be that root. Other names and older
    /// versions are named in a warning.
    static func walk(_ directory: String, chain: inout RootChain, context: CLIContext) throws {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw CLIError.io("\(directory): cannot list the root chain directory: \(error.localizedDescription)")
        }
        var numbered = Set<Int64>()
        for name in names.sorted() where name.hasSuffix(".json") {
            let stem = name.dropLast(5)
            if !stem.isEmpty, stem.allSatisfy({ $0.isASCII && $0.isNumber }), stem.first != "0",
                let version = Int64(stem)
            {
                numbered.insert(version)
            } else {
                context.warn("\(directory)/\(name): not a root file name ({version}.json); ignored")
            }
        }
        func path(_ version: Int64) -> String {
            URL(fileURLWithPath: directory).appendingPathComponent("\(version).json").path
        }
        // Entries at or below the trusted root are read too. The one of the trusted root's own
        // version must be that root; older ones are history this check cannot judge (their
        // successors are not in the chain), so they are named.
        let trusted = chain.newest
        for version in numbered.sorted() where version <= trusted.version {
            guard version == trusted.version else {
                context.warn("\(path(version)): older than the trusted root (version \(trusted.version)); not checked")
                continue
            }
            let bytes = try Files.readRegular(path(version), limit: maxInputBytes)
            let hash = (try? Envelope.parse(bytes)).map { crypto.hasher.sha256($0.payload) }
            guard hash == trusted.payloadSHA256 else {
                throw CLIError.failure(
                    "\(path(version)): differs from the trusted root of the same version (--root): two roots of version \(version) exist"
                )
            }
        }
        var previous = chain.newest.payload
        var walk = RootChainWalk(from: chain, crypto: crypto)
        let end = walk.run(
            lookup: { (version) throws -> [UInt8]? in
                guard numbered.contains(version) else { return nil }
                let bytes = try Files.readRegular(path(version), limit: maxInputBytes)
                warnAboutRootSignatures(bytes, previous: previous, file: path(version), context: context)
                return bytes
            },
            accepted: { root, _ in previous = root.payload })
        chain = walk.chain
        switch end {
        case .complete: break
        case .lookupFailed(_, let error): throw error
        case .refused(_, _, .tooManyRotations(let limit)):
            throw CLIError.failure("\(directory): \(TrustError.tooManyRotations(limit: limit))")
        case .refused(let version, _, let error):
            throw CLIError.from(error, file: path(version))
        }
        if let beyond = numbered.filter({ $0 > chain.newest.version + 1 }).min() {
            throw CLIError.failure(
                "\(directory): \(chain.newest.version + 1).json is missing but \(beyond).json exists; the root chain has a gap"
            )
        }
    }

    /// Warns about failing or duplicate signatures of a root envelope before it is
    /// checked, so they are shown even when the check then fails on the threshold.
    static func warnAboutRootSignatures(_ bytes: [UInt8], previous: RootPayload?, file: String, context: CLIContext) {
        guard let envelope = try? Envelope.parse(bytes), envelope.kind == .root,
            let payload = try? RootPayload.parse(envelope.payload, crypto: crypto)
        else { return }
        if let previous {
            let report = Signatures.check(envelope, role: previous.rootRole, keys: previous, crypto: crypto)
            warn(report, file: file, role: "root version \(previous.version) root", context: context)
        }
        let own = Signatures.check(envelope, role: payload.rootRole, keys: payload, crypto: crypto)
        warn(own, file: file, role: "root", context: context)
    }

    static func warn(_ report: SignatureReport, file: String, role: String, context: CLIContext) {
        for id in report.invalid {
            context.warn("\(file): signature by \(role)-role key \(id) does not verify")
        }
        for id in report.duplicates {
            context.warn("\(file): key \(id) signed more than once; counted once")
        }
    }
}
