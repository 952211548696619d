// `pinion log refresh` and the `--log-key` options `pinion publish` shares with it (docs/DESIGN.md §12).

import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionSystem
import PinionTrust

/// `--log-key LOG.key [--passphrase-file F] [--witness-ca FILE]`: the log key (an ordinary
/// `pinion keygen` key file) and the witnesses' TLS trust.
enum LogKeyOption {
    static let options: [OptionSpec] = [
        .value("log-key"), .value("passphrase-file"), .value("witness-ca"), HardwareModule.option,
    ]

    static let help = """
          --log-key LOG.key|URI the log key: a pinion keygen file, or a PKCS#11 URI (RFC 7512) of an
                                Ed25519 key in a token; required when the newest root lists a log
          --pkcs11-module M.so  the PKCS#11 module for a URI (or PINION_PKCS11_MODULE, or the URI's module-path)
          --passphrase-file F   the log key's passphrase (else PINION_PASSPHRASE or the terminal)
          --witness-ca FILE     PEM bundle of the CAs of the witnesses' TLS certificates (default: system roots)
        """

    /// The log context, or nil without --log-key.
    static func context(_ arguments: ParsedArguments, context: CLIContext) throws -> LogPublishContext? {
        guard let path = arguments.value("log-key") else {
            for option in ["passphrase-file", "witness-ca", "pkcs11-module"] where arguments.value(option) != nil {
                throw CLIError.usage("--\(option) goes with --log-key")
            }
            return nil
        }
        let caFile = arguments.value("witness-ca")
        if let caFile { try checkWitnessCA(caFile) }
        if case .pkcs11(let uri) = try KeyReference.parse(path) {
            guard arguments.value("passphrase-file") == nil else {
                throw CLIError.usage(
                    "--passphrase-file binds to key files; a token's PIN comes from the URI's pin-source")
            }
            let module = HardwareModule(arguments)
            let signer = try Hardware.mapped {
                try PKCS11NoteSigner(uri: uri, module: try module.get(for: uri), pin: Hardware.pin(for: uri))
            }
            return LogPublishContext(signer: signer, witnesses: HTTPSWitnessClient(caFile: caFile))
        }
        if arguments.value("pkcs11-module") != nil {
            throw CLIError.usage("--pkcs11-module goes with a PKCS#11 URI as --log-key")
        }
        let passphrase = PassphraseOnce(file: arguments.value("passphrase-file"), prompt: "Passphrase for \(path): ")
        let (key, encrypted) = try KeyFile.readSecretKeyFile(path: path, passphrase: { try passphrase.get() })
        if let warning = KeyFile.insecurePermissionsWarning(path: path) { context.warn(warning) }
        if !encrypted { context.warn("\(path) is NOT encrypted; anyone who copies it can sign checkpoints") }
        return LogPublishContext(signer: Ed25519NoteSigner(key: key), witnesses: HTTPSWitnessClient(caFile: caFile))
    }

    /// Checks a `--witness-ca` bundle once, before any witness is asked (`pinion publish`,
    /// `log refresh`, `audit`): a missing or unreadable file exits 3, as every unreadable
    /// input; one that holds no PEM certificate is a usage error (exit 2), not one network
    /// failure per witness.
    static func checkWitnessCA(_ caFile: String) throws(CLIError) {
        _ = try Files.read(caFile, limit: maxInputBytes)
        do { try PinnedHTTPSClient.checkTrustAnchors(caFile: caFile) } catch {
            guard case .caFileUnreadable(_, let detail) = error.code else { throw CLIError.io("--witness-ca \(error)") }
            throw CLIError.usage("--witness-ca \(caFile): not a PEM bundle of CA certificates (\(detail))")
        }
    }

    /// Prints what a step did to the log, and warns about each witness whose cosignature is
    /// dated more than `LogFreshness.allowedFutureSkew` (5 minutes, the clients' skew for a
    /// future t_q, docs/DESIGN.md §12) after this machine's clock (`context.now()`, not
    /// `--at`, which only moves the expiry checks): clients accept it but report it, and
    /// count its age as 0 only once, so a witness with a wrong clock weakens freshness.
    static func report(_ log: LogStepOutcome, scope: String, context: CLIContext) {
        let now = context.now()
        let appended = log.appended == 0 ? "re-cosigned" : "appended \(log.appended) head(s)"
        context.print(
            "log of scope \(scope): \(appended), size \(log.size), cosigned by \(log.cosigners.joined(separator: ", "))"
        )
        for failure in log.failures { context.warn("witness \(failure)") }
        let limit = now.secondsSince1970.addingReportingOverflow(LogFreshness.allowedFutureSkew).partialValue
        for name in log.cosigners {
            guard let time = log.cosignedAt[name], Int64(clamping: time) > limit else { continue }
            context.warn(
                "witness \(name): its cosignature is dated \(Int64(clamping: time) - now.secondsSince1970) s in the future (\(time), now \(now.secondsSince1970)): its clock is wrong; clients report it (futureCosignatures)"
            )
        }
    }
}

struct LogRefreshCommand: Command {
    static let path = ["log", "refresh"]
    static let summary = "complete a pending publish, or re-cosign the log's checkpoint (cron)"
    static let options: [OptionSpec] = [.value("repo"), .value("at")] + LogKeyOption.options
    static let help = """
        usage: pinion log refresh --repo DIR --log-key LOG.key [--passphrase-file F] [--witness-ca FILE] [--at TIME]

        For every scope of DIR whose newest root lists a log with this key
        (docs/DESIGN.md §12, docs/PUBLISHING.md "Publishing with a log"):
          - a publish that stopped below the witness quorum (DIR/pending/{scope}/) is
            completed once a quorum cosigns its checkpoint;
          - otherwise the current checkpoint is re-submitted to the witnesses (C2SP
            tlog-witness, same size) and, with a quorum, manifest.proof and
            log/checkpoint are rewritten with the fresh cosignatures.
        Run it from cron well inside maxCheckpointAge (e.g. every maxCheckpointAge / 4).
        Every scope is tried; each one that fails is reported by name, and the exit
        code is then non-zero (1 below the quorum: nothing served changes for that
        scope) while the scopes that succeeded are still refreshed. 2 for usage errors.

        options:
          --repo DIR            the tree
        \(LogKeyOption.help)
          --at TIME             RFC 3339 time for the expiry checks of a completed publish (default: now)

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let repo = try arguments.required("repo")
        guard arguments.value("log-key") != nil else { throw CLIError.usage("--log-key is required") }
        try Load.existingTree(repo)
        let now =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        guard let log = try LogKeyOption.context(arguments, context: context) else {
            throw CLIError.usage("--log-key is required")
        }
        let outcomes: [LogRefreshOutcome]
        do { outcomes = try Publisher.refreshLog(repo: repo, at: now, crypto: crypto, log: log) } catch {
            throw PublishCommand.message(error, paths: [], envelopes: [])
        }
        var failures: [(scope: String, error: CLIError)] = []
        for outcome in outcomes {
            switch outcome {
            case .completed(let scope, let published):
                context.print("completed the pending publish of scope \(scope)")
                if let step = published.log { LogKeyOption.report(step, scope: scope, context: context) }
            case .refreshed(let scope, let step):
                LogKeyOption.report(step, scope: scope, context: context)
            case .skipped(let scope, let reason):
                context.print("scope \(scope): skipped (\(reason))")
            case .failed(let scope, let error):
                let failure = PublishCommand.message(error, paths: [], envelopes: [])
                context.err(
                    "pinion: error: scope \(TerminalText.escape(scope)): \(TerminalText.escape(failure.message))\n")
                failures.append((scope, failure))
            }
        }
        if let first = failures.first {
            // One exit code: the failures' own when they agree, else 1 (a refusal).
            let code = failures.allSatisfy { $0.error.exitCode == first.error.exitCode } ? first.error.exitCode : 1
            throw CLIError(
                exitCode: code,
                "\(failures.count) of \(outcomes.count) scope(s) failed: "
                    + failures.map(\.scope).joined(separator: ", "))
        }
    }
}
