// `pinion publish`: argument parsing and messages around `Publisher.publish`, which adds
// signed roots and manifests to the static tree a publisher serves (docs/DESIGN.md §9).

import PinionCore
import PinionCrypto
import PinionPublisher

struct PublishCommand: Command {
    static let path = ["publish"]
    static let summary = "add signed roots and manifests to the published tree"
    static let options: [OptionSpec] =
        [.value("repo"), .flag("allow-lift"), .value("at"), .value("plan")] + LogKeyOption.options
        + PublishLiveCheck.options
    static let help = """
        usage: pinion publish --repo DIR ENVELOPE... [--allow-lift] [--at TIME] [--plan FILE]
                              [--log-key LOG.key [--passphrase-file F] [--witness-ca FILE]]
                              [--baseline FILE ...] [--check-live [--live HOST:PORT ...]
                               [--connect-to [HOST=]ADDRESS[:PORT] ...] [--cafile F]
                               [--allow-unreachable HOST ...] [--allow-removing-live-pin]]

        Adds the ENVELOPEs (roots and manifests of one scope, told apart by payloadType)
        as one step to the static tree DIR/v1/{scope}/ (docs/DESIGN.md section 9):
          root/{n}.json           every root, immutable
          history/{version}.json  every published manifest, immutable
          index.json              every root and manifest in publish order, with the
                                  step's sequence number (version, rootVersion, payload
                                  SHA-256, issuedAt, expiresAt)
          manifest.json           the latest manifest, replaced by atomic rename
        Before writing it refuses, with the reason: a first root that is not version 1
        signed by its own root role; a root that is not exactly the next version signed by
        both the previous and its own root role, or whose pinsRoleSince breaks the rotation
        rule; a manifest that does not verify under the newest root (its pins role and cap,
        rootVersion from the newest root's pinsRoleSince up to its version), is expired,
        is not the latest version + 1, has a `previous` other than the latest payload's
        SHA-256, an issuedAt before the latest's, or drops a revoked pin of the latest
        (unless --allow-lift); and a root the latest manifest would not verify under,
        unless a manifest signed under it is published in the same step.
        It writes history, index.json and manifest.json first and the new root/{n}.json
        LAST, so a reader at any instant sees the old state, or a new manifest it cannot
        verify yet (and refuses, keeping the current one), never a narrowing root.
        Publishing the same envelopes again is a no-op that completes a publish that died.

        options:
          --repo DIR        the tree (created if missing)
          --allow-lift      accept lifting a revocation (the auditor flags it)
          --at TIME         RFC 3339 time for the expiry checks (default: now)
          --plan FILE       after the publish, write the upload plan of what it changed
                            (outside DIR/v1/; see pinion plan and docs/PUBLISHING.md)
        \(LogKeyOption.help)

        Once every check has passed, before writing, it lists what the new manifest changes
        in the effective policy (docs/DESIGN.md section 7) of each host against the manifest
        being replaced; a dropped domain falls back to the --baseline files' entries (one per
        app release; none given: taken as no pin). When pins are removed:
          without --check-live  a warning, with the pinion lint --live command to run
          --check-live          probes every host that loses a pin as pinion lint --live
                                does: HOST:443, or the --live HOST:PORT targets naming it,
                                at every address the name (or --connect-to ADDRESS,
                                alias --resolve) resolves to, offering RSA and then
                                ECDSA signature algorithms; a TLS handshake only,
                                verified against the system store or --cafile. It
                                refuses, writing nothing: removed-pin-live when a server
                                still presents a removed pin and no pin kept (exit 1);
                                an includeSubdomains entry without --live targets for
                                its subdomains (exit 1); a chain failing X.509 (exit 1)
                                or a host, address or name that cannot be reached
                                (exit 3), unless --allow-unreachable HOST names it (a
                                host that is gone).
          --allow-removing-live-pin  an emergency (a stolen key must go now): publishes
                                anyway, warning with the hosts, pins and addresses cut off.

        When the newest root lists a transparency log (docs/DESIGN.md §12), --log-key is
        required and the step follows docs/TRANSPARENCY.md "Publishing steps": the current
        checkpoint is re-cosigned first (below the witness quorum: exit 1, nothing written),
        one head per new manifest is appended to v1/{scope}/log/ (earlier manifests are
        backfilled when the log starts), and the witnesses cosign the new checkpoint; then
        manifest.proof, log/checkpoint and manifest.json are written, in that order. Below
        the quorum it exits 1 leaving checkpoint, manifest.proof and manifest.json
        untouched, the log-signed checkpoint and the envelopes pending in DIR/pending/{scope}/
        (outside the served v1/): pinion log refresh completes it.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let paths = arguments.positional
        guard !paths.isEmpty else { throw CLIError.usage("missing ENVELOPE") }
        let repo = try arguments.required("repo")
        let now =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        var envelopes: [[UInt8]] = []
        for path in paths {
            let bytes = try Files.read(path, limit: maxInputBytes)
            // Parsed here too, only for the messages that name what the file looks like.
            do { _ = try Envelope.parse(bytes) } catch {
                throw CLIError.document(error, file: path, bytes: bytes, expected: "a signed envelope (JSON)")
            }
            envelopes.append(bytes)
        }
        let liveCheck = try PublishLiveCheck(arguments)
        let log = try LogKeyOption.context(arguments, context: context)
        let planPath = arguments.value("plan")
        if let planPath { try UploadPlanOutput.checkDestination(planPath, repo: repo) }
        let outcome: PublishOutcome
        // Set when the live check stops the step: its own message and exit code win.
        var stopped: (any Error)?
        do {
            outcome = try Publisher.publish(
                envelopes, into: repo, at: now, allowLift: arguments.flag("allow-lift"), crypto: crypto, log: log,
                beforeWriting: { preview in
                    do {
                        try liveCheck.look(at: preview, paths: paths, context: context)
                        return .proceed
                    } catch {
                        stopped = error
                        return .refuse(reason: "stopped before writing: \(error)")
                    }
                })
        } catch {
            if let stopped { throw stopped }
            throw message(error, paths: paths, envelopes: envelopes)
        }
        if !outcome.liftedRevocations.isEmpty {
            context.warn(
                "lifting revocation(s) of \(outcome.liftedRevocations.map(\.description).joined(separator: ", ")) (--allow-lift)"
            )
        }
        for step in outcome.steps {
            switch step {
            case .root(let version, _, true):
                context.print("root version \(version) is already published (no change)")
            case .root(let version, let path, false):
                context.print("published root version \(version) of scope \(outcome.scope): \(path)")
            case .manifest(let version, _, _, true):
                context.print("manifest version \(version) is already published (no change)")
            case .manifest(let version, let rootVersion, let expiresAt, false):
                context.print(
                    "published manifest version \(version) (rootVersion \(rootVersion)) of scope \(outcome.scope), expires \(expiresAt)"
                )
            }
        }
        if let step = outcome.log { LogKeyOption.report(step, scope: outcome.scope, context: context) }
        if log != nil, outcome.logOrigin == nil {
            context.warn(
                "--log-key: the newest root of scope \(outcome.scope) lists no transparency log; the key was not used")
        }
        if let planPath { try UploadPlanOutput.afterPublish(outcome, repo: repo, path: planPath, context: context) }
    }

    /// The exit code and message of a refused publish: the envelope's file named first.
    static func message(_ error: PublishError, paths: [String], envelopes: [[UInt8]]) -> CLIError {
        switch error {
        case .usage(let message): return .usage(message)
        case .refused(let input, let reason):
            // `log refresh` publishes saved envelopes it has no paths for: no index into `paths` then.
            guard let input, paths.indices.contains(input) else { return .failure(reason) }
            return .failure("\(paths[input]): \(reason)")
        case .manifest(let input, let trust, let chain):
            guard paths.indices.contains(input), envelopes.indices.contains(input) else {
                return .from(trust, file: "pending envelope \(input + 1)")
            }
            return .manifest(trust, file: paths[input], envelopeBytes: envelopes[input], chain: chain)
        case .file(let file):
            return CLIError(category: file.category, file.description)
        }
    }
}
