// `pinion witness` (a C2SP tlog-witness over HTTPS) and `pinion witness cosign` (the same witness offline, from files).

import Foundation
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionSystem
import PinionTrust

/// What both witness commands load: the configuration, the witness key and the state.
enum WitnessSetup {
    static let options: [OptionSpec] = [
        .value("config"), .value("key"), .value("passphrase-file"), .value("state-dir"), .value("max-body-bytes"),
        .value("max-proof-lines"),
    ]

    static let help = """
          --config FILE          the witnessed logs (JSON, docs/TRANSPARENCY.md "Running a
                                 witness"): {"name": N, "logs": [{"origin": O, "key": K}]}
          --key WITNESS.key      the witness's Ed25519 key (a `pinion keygen` key file)
          --passphrase-file F    its passphrase (else PINION_PASSPHRASE or the terminal)
          --state-dir DIR        the latest cosigned checkpoint per origin (created 0700;
                                 one witness process per directory; never delete it)
          --max-body-bytes N     largest add-checkpoint body (default 65536)
          --max-proof-lines N    most consistency proof lines (default 63)
        """

    /// Loads everything and opens the state; every refusal names its flag.
    /// The request limits: `WitnessLimits.standard` with `--max-body-bytes` and
    /// `--max-proof-lines` applied.
    static func limits(_ arguments: ParsedArguments) throws -> WitnessLimits {
        var limits = WitnessLimits.standard
        if let value = try arguments.integer("max-body-bytes", in: 1024...(1 << 20)) {
            limits.maxBodyBytes = Int(value)
        }
        if let value = try arguments.integer("max-proof-lines", in: 1...63) { limits.maxProofLines = Int(value) }
        return limits
    }

    static func load(_ arguments: ParsedArguments, context: CLIContext) throws -> Witness {
        let configPath = try arguments.required("config")
        let keyPath = try arguments.required("key")
        let stateDirectory = try arguments.required("state-dir")
        let limits = try Self.limits(arguments)
        let configuration: WitnessConfiguration
        do {
            configuration = try WitnessConfiguration.parse(
                try Files.read(configPath, limit: WitnessConfiguration.maxBytes), hasher: crypto.hasher)
        } catch let error as WitnessConfigurationError {
            throw CLIError.failure("--config \(configPath): \(error)")
        } catch let error as CLIError {
            throw CLIError(exitCode: error.exitCode, "--config \(error.message)")
        }
        let passphrase = PassphraseOnce(file: arguments.value("passphrase-file"), prompt: "Passphrase for \(keyPath): ")
        if let warning = KeyFile.insecurePermissionsWarning(path: keyPath) { context.warn(warning) }
        let key: Ed25519SecretKey
        do { key = try KeyFile.readSecretKey(path: keyPath, passphrase: { try passphrase.get() }) } catch {
            let failure = CLIError.from(error)
            throw CLIError(exitCode: failure.exitCode, "--key \(keyPath): \(failure.message)")
        }
        do {
            return try Witness(
                configuration: configuration, signer: Ed25519NoteSigner(key: key), stateDirectory: stateDirectory,
                crypto: crypto, limits: limits)
        } catch {
            switch error {
            case .stateDirectory, .stateInUse: throw CLIError.io(error.description)
            case .corruptState, .badKey: throw CLIError.failure(error.description)
            }
        }
    }
}

struct WitnessCommand: Command {
    static let path = ["witness"]
    static let summary = "run a C2SP tlog-witness over HTTPS for the configured logs"
    static let options: [OptionSpec] =
        WitnessSetup.options + [
            .value("cert"), .value("tls-key"), .value("listen"), .value("path-prefix"), .value("workers"),
            .value("max-connections"), .value("header-timeout"), .value("idle-timeout"), .value("write-timeout"),
            .value("max-requests"), .value("drain-timeout"), .value("access-log"), .value("rate-burst"),
            .value("rate-per-minute"), .flag("no-rate-limit"),
        ]
    static let help = """
        usage: pinion witness --config FILE --key WITNESS.key [--passphrase-file F]
                              --state-dir DIR --cert CERT.pem --tls-key KEY.pem
                              [--listen ADDRESS:PORT] [--path-prefix /PATH]
                              [--rate-burst N] [--rate-per-minute N] [--no-rate-limit]
                              [--max-body-bytes N] [--max-proof-lines N] [--workers N]
                              [--max-connections N] [--header-timeout T] [--idle-timeout T]
                              [--write-timeout T] [--max-requests N] [--drain-timeout T]
                              [--access-log FILE|-|off]

        Cosigns checkpoints of the configured logs (C2SP tlog-witness): it verifies the
        log's signature and the consistency proof from the size it last cosigned, persists
        the new checkpoint (fsync) and only then answers 200 with its cosignature line. It
        never cosigns two different trees of one size, across restarts and crashes too.
        On start it prints its verifier key string (`witness key NAME+ID+KEY`, type 0x04,
        for a root's witness list), then `listening on https://ADDRESS:PORT/PREFIX`.

        routes (below --path-prefix):
          POST /add-checkpoint        200 cosignature line; 409 the cosigned size
                                      (text/x.tlog.size); 400, 403, 404, 422 with the reason;
                                      429 past the rate limit; 503 when persisting failed
          GET  /HASH/checkpoint       the latest cosigned checkpoint note of the log whose
                                      origin's SHA-256 is HASH (lowercase hex); 404 when none
        Other paths give 404, other methods 405.

        options:
        \(WitnessSetup.help)
          --cert CERT.pem        TLS certificate chain, leaf first
          --tls-key KEY.pem      its private key, unencrypted PEM
          --listen ADDRESS:PORT  IP literal and port (default 127.0.0.1:8444; port 0 picks one)
          --path-prefix /PATH    serve the routes below /PATH (the path of the witness URL)
          --rate-burst N         requests one client address may send at once (default 60)
          --rate-per-minute N    requests per minute per address after that (default 600)
          --no-rate-limit        no per-address limit (behind a proxy that limits)
          --workers N, --max-connections N, --header-timeout T, --idle-timeout T,
          --write-timeout T, --max-requests N, --drain-timeout T, --access-log FILE
                                 as for pinion serve (connections default 1024)

        Signals: SIGHUP reloads the TLS certificate and key; SIGTERM and SIGINT drain and exit 0.
        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let configuration = try ServeCommand.serverConfiguration(
            arguments, repository: "", keyFlag: "tls-key", defaultListen: "127.0.0.1:8444", defaultMaxConnections: 1024)
        var rateLimit: WitnessRateLimit? = WitnessRateLimit()
        if arguments.flag("no-rate-limit") {
            for option in ["rate-burst", "rate-per-minute"] where arguments.value(option) != nil {
                throw CLIError.usage("--no-rate-limit and --\(option) contradict each other")
            }
            rateLimit = nil
        }
        if let value = try arguments.integer("rate-burst", in: 1...1_000_000) { rateLimit?.burst = Int(value) }
        if let value = try arguments.integer("rate-per-minute", in: 1...100_000_000) {
            rateLimit?.perMinute = Double(value)
        }
        let log: AccessLog
        switch arguments.value("access-log") ?? "-" {
        case "-": log = .standardError
        case "off": log = .disabled
        case let path:
            log = try ServeCommand.mappedServerError { () throws(HTTPServerError) in try AccessLog(path: path) }
        }
        let witness = try WitnessSetup.load(arguments, context: context)
        let prefix = arguments.value("path-prefix") ?? ""
        let server = try ServeCommand.mapped { () throws(PublisherError) in
            try WitnessServer(
                witness: witness, server: configuration, pathPrefix: prefix, rateLimit: rateLimit, accessLog: log)
        }
        let signals = try ServeCommand.mappedServerError { () throws(HTTPServerError) in try ServerSignals() }
        if server.maxConnections < configuration.maxConnections {
            context.err(
                "pinion witness: the connection cap is \(server.maxConnections), not \(configuration.maxConnections): the open files limit (ulimit -n) allows no more\n"
            )
        }
        server.start()
        context.print("witness key \(witness.verifierKey.text)")
        context.print("listening on \(server.url)")
        while let signal = signals.next() {
            if signal == .reload {
                do {
                    try server.reloadCredentials()
                    context.err("pinion witness: SIGHUP: certificate and key reloaded\n")
                } catch {
                    context.err("pinion witness: SIGHUP: reload failed, keeping the old certificate: \(error)\n")
                }
                continue
            }
            break
        }
        context.err("pinion witness: draining (up to \(configuration.drainTimeout)s)\n")
        server.drain(timeout: configuration.drainTimeout)
        context.err("pinion witness: stopped\n")
    }
}

struct WitnessCosignCommand: Command {
    static let path = ["witness", "cosign"]
    static let summary = "cosign one add-checkpoint request from a file (an offline witness)"
    static let options: [OptionSpec] = WitnessSetup.options + [.value("request"), .value("at")]
    static let help = """
        usage: pinion witness cosign --config FILE --key WITNESS.key [--passphrase-file F]
                                     --state-dir DIR --request BODY_FILE [--at TIME]

        The witness of `pinion witness`, offline: reads one C2SP tlog-witness
        add-checkpoint body (`old SIZE`, consistency proof lines, a blank line, the
        checkpoint note) from BODY_FILE (- for standard input), applies the same checks and
        the same state, and prints the cosignature line to standard output (exit 0) once
        the new checkpoint is persisted. A refusal prints its HTTP status and reason and
        exits 1 (for 409, the size this witness last cosigned); the state is then unchanged.
        An --at before the latest cosignature of the log is refused (exit 2).
        Never run it on a state directory a running witness uses (it refuses: the
        directory is locked).

        options:
        \(WitnessSetup.help)
          --request FILE         the add-checkpoint body
          --at TIME              the cosignature time, RFC 3339 UTC (default: now)
        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let requestPath = try arguments.required("request")
        let time =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        guard time.secondsSince1970 > 0 else { throw CLIError.usage("--at must be after 1970-01-01T00:00:00Z") }
        // The request is read before the witness (and its state directory) is set up, so that
        // an unreadable request leaves nothing behind.
        let maxBodyBytes = try WitnessSetup.limits(arguments).maxBodyBytes
        let body: [UInt8]
        if requestPath == "-" {
            body = Array(FileHandle.standardInput.readData(ofLength: maxBodyBytes + 1))
        } else {
            do { body = try Files.read(requestPath, limit: maxBodyBytes) } catch {
                throw CLIError(exitCode: error.exitCode, "--request \(error.message)")
            }
        }
        let witness = try WitnessSetup.load(arguments, context: context)
        switch witness.addCheckpoint(body, timestamp: UInt64(time.secondsSince1970)) {
        case .cosigned(let line, let checkpoint):
            context.out(String(decoding: line, as: UTF8.self))
            context.err("pinion witness cosign: cosigned \(checkpoint.origin) at size \(checkpoint.size)\n")
        case .refused(let refusal):
            throw CLIError.failure("--request \(requestPath): \(refusal)")
        case .unavailable(let reason):
            throw CLIError.io(reason)
        case .timeBeforeLast(let last):
            throw CLIError.usage(
                "--at \(time) is before this witness's latest cosignature of that log (\(Timestamp(secondsSince1970: Int64(clamping: last)))): a cosignature never goes back in time; the state is unchanged"
            )
        }
    }
}
