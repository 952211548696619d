// The `log` member flags of `pinion root init` and `pinion root rotate` (docs/DESIGN.md §12).

import PinionCore
import PinionCrypto

/// Builds a root's `LogPolicy` from `--log-origin`, `--log-key`, `--witness`,
/// `--witness-quorum`, `--max-checkpoint-age`, `--checkpoint-grace` (and `--no-log` on
/// rotate). Every bad value is a usage error (exit 2) raised before anything is written.
enum RootLogOptions {
    /// The options both commands accept.
    static let options: [OptionSpec] = [
        .value("log-origin"), .value("log-key"), .value("witness", repeatable: true), .value("witness-quorum"),
        .value("max-checkpoint-age"), .value("checkpoint-grace"), .flag("allow-minority-quorum"),
    ]

    /// Help lines for the options.
    static let help = """
          --log-origin O                the log's checkpoint origin (and log key name), e.g. example.com/pinion/S
          --log-key L.pub               the log's Ed25519 public key (pinion keygen); signs checkpoints only
          --witness NAME=W.pub@URL      a witness: its name, public key and https URL prefix (repeatable)
          --witness-quorum Q            cosignatures by distinct listed witnesses a checkpoint needs: a majority
                                        (more than half); 3 witnesses with quorum 2 is the recommended minimum
          --allow-minority-quorum       accept a quorum of half the witnesses or fewer (two disjoint quorums
                                        could then cosign two different trees: a split view no witness refuses)
          --max-checkpoint-age D        staleCheckpoint past this age, e.g. 24h (0 turns freshness off)
          --checkpoint-grace D          the manifest counts as expired this long after that (default 7d)
        """

    /// Whether any log flag was given.
    static func anyGiven(_ arguments: ParsedArguments) -> Bool {
        ["log-origin", "log-key", "witness-quorum", "max-checkpoint-age", "checkpoint-grace"].contains {
            arguments.value($0) != nil
        } || !arguments.values("witness").isEmpty
    }

    /// The log policy the flags give, starting from `previous` (rotate) or from nothing
    /// (init: then --log-origin, --log-key, --witness, --witness-quorum and
    /// --max-checkpoint-age are all required once any log flag is given).
    ///
    /// - Returns: nil when no log flag is given and there is no previous log.
    /// - Throws: `CLIError.usage` naming the flag and the rule.
    static func policy(_ arguments: ParsedArguments, previous: LogPolicy?) throws -> LogPolicy? {
        guard anyGiven(arguments) else { return previous }
        let origin = try arguments.value("log-origin") ?? previous?.origin ?? missing("log-origin")
        // Checked first, so a bad origin is reported as --log-origin, not as the log key's name
        // (the origin is also the log key's note key name: no "+").
        do { try LogPolicy.validateOrigin(origin) } catch {
            throw CLIError.usage("--log-origin \"\(origin)\": \(error)")
        }
        do { try NoteVerifierKey.validateName(origin) } catch {
            throw CLIError.usage("--log-origin \"\(origin)\": not a valid note key name (the log key's name): \(error)")
        }
        let logKey: NoteVerifierKey
        if let path = arguments.value("log-key") {
            logKey = try verifierKey(path, name: origin, type: .ed25519, option: "log-key")
        } else if let previous {
            // A new origin renames the same key: its key id changes with the name.
            do {
                logKey = try NoteVerifierKey(
                    name: origin, type: .ed25519, publicKey: previous.logKey.publicKey, hasher: crypto.hasher)
            } catch {
                throw CLIError.usage("--log-origin \"\(origin)\" is not a valid note key name: \(error)")
            }
        } else {
            logKey = try missing("log-key")
        }
        let witnessTexts = arguments.values("witness")
        var witnesses: [LogPolicy.Witness] = []
        if witnessTexts.isEmpty {
            witnesses = try previous?.witnesses ?? missing("witness")
        } else {
            for text in witnessTexts { witnesses.append(try witness(text)) }
        }
        let quorum: Int
        if let value = try arguments.integer("witness-quorum", in: Int64.min...Int64.max) {
            guard (1...Int64(max(1, witnesses.count))).contains(value) else {
                throw CLIError.usage(
                    "--witness-quorum \(value) is outside 1...\(witnesses.count) (the number of witnesses)")
            }
            quorum = Int(value)
        } else if let previous, previous.quorum <= witnesses.count {
            quorum = previous.quorum
        } else if previous != nil {
            throw CLIError.usage(
                "the previous quorum \(previous?.quorum ?? 0) is above the \(witnesses.count) witness(es) given; give --witness-quorum"
            )
        } else {
            quorum = try missing("witness-quorum")
        }
        let maxAge: Int64
        if let text = arguments.value("max-checkpoint-age") {
            maxAge = text == "0" ? 0 : try DurationText.seconds(text, option: "max-checkpoint-age")
        } else {
            maxAge = try previous?.maxCheckpointAge ?? missing("max-checkpoint-age")
        }
        let grace: Int64
        if let text = arguments.value("checkpoint-grace") {
            grace = text == "0" ? 0 : try DurationText.seconds(text, option: "checkpoint-grace")
        } else {
            grace = previous?.checkpointGrace ?? LogPolicy.defaultGrace
        }
        do {
            return try LogPolicy(
                origin: origin, logKey: logKey, witnesses: witnesses, quorum: quorum, maxCheckpointAge: maxAge,
                checkpointGrace: grace)
        } catch {
            throw CLIError.usage("the log settings are invalid: \(error)")
        }
    }

    /// Refuses a new or changed `log` member whose quorum is at most half the witnesses
    /// (docs/DESIGN.md §12, the root member `log`) unless `--allow-minority-quorum` is given. A
    /// log member carried over unchanged is never refused, so an emergency rotation of the
    /// pins key does not block on it.
    ///
    /// - Throws: `CLIError.usage` naming the split the quorum allows and the override.
    static func checkQuorum(_ log: LogPolicy?, previous: LogPolicy?, _ arguments: ParsedArguments) throws {
        guard let log, log != previous, log.isMinorityQuorum, !arguments.flag("allow-minority-quorum") else { return }
        throw CLIError.usage(
            "--witness-quorum \(log.quorum) of \(log.witnesses.count) witnesses is not a majority: two disjoint sets of \(log.quorum) witness(es) could cosign two different trees of one size with no witness lying (a split view); use a quorum above \(log.witnesses.count / 2) (3 witnesses with quorum 2 tolerate one outage and cannot be split), or give --allow-minority-quorum to accept the risk"
        )
    }

    /// The root summary's log line: origin, witnesses, quorum (marked when it is a
    /// minority quorum), ages.
    static func summary(_ log: LogPolicy) -> String {
        let minority =
            log.isMinorityQuorum
            ? " (minority quorum, --allow-minority-quorum: a split view needs no lying witness)" : ""
        return
            "log \(log.origin): \(log.witnesses.count) witness(es), quorum \(log.quorum)\(minority), maxCheckpointAge \(log.maxCheckpointAge)s, checkpointGrace \(log.checkpointGrace)s"
    }

    /// Warns about log settings docs/DESIGN.md §12 allows but that weaken the log: a quorum
    /// that tolerates no witness outage (with a majority quorum, 2 witnesses force 2-of-2:
    /// one witness down blocks every publish), a minority quorum (accepted with
    /// `--allow-minority-quorum`), and `maxCheckpointAge` 0 (freshness off: a first-run
    /// client accepts any cosigned checkpoint from the log's past, and a frozen view is
    /// noticed only at the manifest's expiry).
    static func warn(_ log: LogPolicy, context: CLIContext) {
        if log.isMinorityQuorum {
            context.warn(
                "quorum \(log.quorum) of \(log.witnesses.count) witnesses is a minority quorum: two disjoint quorums could cosign two different trees of one size, and witnesses then no longer prevent a split view (docs/DESIGN.md §12)"
            )
        } else if log.toleratedOutages == 0 {
            context.warn(
                "quorum \(log.quorum) of \(log.witnesses.count) witnesses tolerates no witness outage: one witness down blocks every publish; 3 witnesses with quorum 2 tolerate one outage and cannot be split"
            )
        }
        if log.maxCheckpointAge == 0 {
            context.warn(
                "--max-checkpoint-age 0 turns freshness off: clients never raise staleCheckpoint, a first-run client accepts any cosigned checkpoint from the log's past, and a freeze is noticed only when the manifest expires (docs/DESIGN.md §12)"
            )
        }
    }

    /// One `--witness NAME=W.pub@URL`.
    static func witness(_ text: String) throws -> LogPolicy.Witness {
        guard let equals = text.firstIndex(of: "="), let at = text[equals...].firstIndex(of: "@") else {
            throw CLIError.usage("--witness \"\(text)\": expected NAME=W.pub@https://host[/path]")
        }
        let name = String(text[..<equals])
        let path = String(text[text.index(after: equals)..<at])
        let url = String(text[text.index(after: at)...])
        guard !name.isEmpty, !path.isEmpty else {
            throw CLIError.usage("--witness \"\(text)\": the name and the key file must not be empty")
        }
        guard LogPolicy.isWitnessURL(url) else {
            throw CLIError.usage(
                "--witness \(name): \"\(url)\" is not https://host[:port][/path] (no query, fragment or user info)")
        }
        return LogPolicy.Witness(
            key: try verifierKey(path, name: name, type: .cosignatureV1, option: "witness \(name)"), url: url)
    }

    /// The note verifier key of an Ed25519 `.pub` file under `name`.
    static func verifierKey(_ path: String, name: String, type: NoteKeyType, option: String) throws
        -> NoteVerifierKey
    {
        let key: Ed25519PublicKey
        do { key = try KeyFile.readPublicKey(path: path) } catch {
            // The key file's own message names the path; its category sets the exit code
            // (a missing file is an I/O error, 3, as everywhere else).
            let cause = CLIError.from(error)
            throw CLIError(exitCode: cause.exitCode, "--\(option): \(cause.message)")
        }
        do { return try NoteVerifierKey(name: name, type: type, publicKey: key.raw, hasher: crypto.hasher) } catch {
            throw CLIError.usage("--\(option): the name \"\(name)\" is not a valid note key name: \(error)")
        }
    }

    private static func missing<T>(_ option: String) throws -> T {
        throw CLIError.usage("--\(option) is required when the root lists a log (see pinion root init --help)")
    }
}
