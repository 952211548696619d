// `pinion client refresh|connect`: the client SDK from the shell, exactly as an app runs it,
// for operators and for tests of a deployment.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux

/// Options and set-up shared by the client commands.
enum ClientSetup {
    static let options: [OptionSpec] = [
        .value("root"), .value("scope"), .value("state"), .value("baseline"), .value("cafile"),
        .value("publisher-pin", repeatable: true), .value("stale-grace"), .value("timeout"), .flag("json"),
        .value("at"), .value("connect-to"),
    ]

    static func client(_ arguments: ParsedArguments, baseURL: URL?, context: CLIContext, events: EventLog) throws
        -> PinningClient
    {
        let rootPath = try arguments.required("root")
        let scope = try arguments.required("scope")
        let stateDirectory = try arguments.required("state")
        try checkCAFile(arguments)
        let at = try rehearsalTime(arguments)
        let rootBytes = try Files.read(rootPath, limit: maxInputBytes)
        var baseline = Baseline.empty
        if let path = arguments.value("baseline") {
            do { baseline = try Baseline.parse(try Files.read(path, limit: maxInputBytes)) } catch let error
                as FormatError
            {
                throw CLIError.failure(error.inFile(path).description)
            }
        }
        var publisherPins: [Pin] = []
        for text in arguments.values("publisher-pin") { publisherPins.append(try ManifestEdit.pin(text)) }
        var staleGrace: Int64 = 0
        if let text = arguments.value("stale-grace") {
            staleGrace = try DurationText.seconds(text, option: "stale-grace")
        }
        var timeout = 30.0
        if let text = arguments.value("timeout") { timeout = try timeoutSeconds(text, option: "timeout") }
        var publisherConnectTo: (host: String, port: UInt16)?
        if let baseURL, let text = arguments.value("connect-to") {
            publisherConnectTo = try ConnectTo.parse(
                text, option: "--connect-to", defaultPort: UInt16(exactly: baseURL.port ?? 443) ?? 443)
        }
        let configuration = ClientConfiguration(
            scope: scope, baseURL: baseURL, embeddedRoot: rootBytes, baseline: baseline, stateDirectory: stateDirectory,
            caFile: arguments.value("cafile"), publisherPins: publisherPins, staleGrace: staleGrace,
            connectTimeout: timeout, ioTimeout: timeout, totalDeadline: timeout * 2,
            clock: clock(at: at, context: context), publisherConnectTo: publisherConnectTo)
        // A rehearsal at another time reads the state but never writes it.
        var storage: (any StateStorage)?
        if at != nil {
            do { storage = try RehearsalStorage(directory: stateDirectory) } catch {
                throw CLIError.io("\(stateDirectory): \(error)")
            }
        }
        do {
            return try PinningClient(configuration: configuration, storage: storage, onEvent: { events.append($0) })
        } catch {
            switch error {
            case .trust(let trust): throw CLIError.failure("\(rootPath): \(trust)")
            case .storage(let storage): throw CLIError.io("\(stateDirectory): \(storage)")
            // An unreadable CA file keeps the exit code of the CA file's I/O (3), as the JVM CLI does.
            case .configuration(let reason): throw CLIError.io(reason)
            }
        }
    }

    static func policyLines(_ policy: MergedPolicy) -> [String] {
        guard !policy.domains.isEmpty else { return ["policy      no pinned domains"] }
        var lines = ["policy      \(policy.domains.count) domain(s)"]
        let width = max(6, policy.domains.map(\.name.count).max() ?? 0) + 2
        for domain in policy.domains {
            let mode = domain.enforce ? "enforce" : "report-only"
            let subdomains = domain.includeSubdomains ? "+subdomains" : ""
            let pins =
                domain.pins.isEmpty ? "(no usable pin: refused)" : domain.pins.map(\.description).joined(separator: " ")
            lines.append(
                "  " + domain.name + String(repeating: " ", count: width - domain.name.count) + mode + " " + subdomains
                    + "  "
                    + pins)
        }
        return lines
    }

    static func policyJSON(_ policy: MergedPolicy) -> JSONValue {
        .array(
            policy.domains.map { domain in
                .object(
                    JSONObject([
                        .init("name", .string(domain.name)), .init("enforce", .bool(domain.enforce)),
                        .init("includeSubdomains", .bool(domain.includeSubdomains)),
                        .init("pins", .array(domain.pins.map { .string($0.description) })),
                    ]))
            })
    }
}

/// Collects events from the SDK's callback.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ClientEvent] = []

    /// Records an event. `trustRemoved` is left out: it tells an app to drop pooled
    /// connections, and a one-shot command holds none (the JVM CLI prints the same list).
    func append(_ event: ClientEvent) {
        if case .trustRemoved = event { return }
        lock.withLock { items.append(event) }
    }
    var events: [ClientEvent] { lock.withLock { items } }

    static func describe(_ event: ClientEvent) -> String {
        switch event {
        case .updated(let order): return "updated to \(order)"
        case .unchanged: return "unchanged"
        case .rootAccepted(let version): return "accepted root version \(version)"
        case .rejected(let error): return "rejected: \(error)"
        case .networkFailure(let reason): return "network failure: \(reason)"
        case .clockSteppedBack(let wall, let last):
            return "clock stepped back: wall clock \(wall), last known time \(last)"
        case .futureDated(let issuedAt, let start): return "future-dated manifest: issuedAt \(issuedAt), start \(start)"
        case .equivocation(let order): return "EQUIVOCATION at \(order): report this to the security team"
        case .storeDropped(let reason): return "stored state dropped: \(reason)"
        case .stateCopyLost(let file, let reason): return "state copy \(file) lost (\(reason)); rewritten"
        case .stateUnreadable(let error): return "stored state unreadable: \(error); nothing dropped"
        case .manifestNotCurrent(let reason): return "manifest not current: \(reason)"
        case .trustRemoved(let generation): return "trust removed: drop reused connections (generation \(generation))"
        case .staleCheckpoint(let size, let quorumTime, let age):
            return
                "stale log checkpoint: size \(size), t_q \(Timestamp(secondsSince1970: quorumTime)), age \(age)s (a freeze or a stale cache?)"
        case .logEquivocation(let evidence):
            return
                "LOG EQUIVOCATION: \(evidence.stored.origin) signed two trees of size \(evidence.stored.size); both notes are kept in the state: report this to the security team"
        case .futureCosignatures(let witnesses, let quorumTimeInFuture):
            return
                "cosignatures dated in the future by \(witnesses.joined(separator: ", "))\(quorumTimeInFuture ? " (t_q counts as age 0)" : "")"
        }
    }
}

struct ClientRefreshCommand: Command {
    static let path = ["client", "refresh"]
    static let summary = "run one client refresh as an app would; print the effective policy"
    static let options: [OptionSpec] = ClientSetup.options + [.value("url")]
    static let help = """
        usage: pinion client refresh --root ROOT_ENVELOPE --scope S --url BASE_URL --state DIR
                                     [--baseline FILE] [--cafile F] [--publisher-pin P ...]
                                     [--stale-grace D] [--timeout SECONDS] [--json]
                                     [--connect-to ADDRESS[:PORT]] [--at TIME]

        Runs one refresh exactly as the SDK in an app does (docs/DESIGN.md section 6): walks
        BASE_URL/v1/S/root/N.json from the root state, fetches manifest.json (conditional
        GET), verifies everything against ROOT_ENVELOPE (the root the app embeds), persists
        the state in DIR, and prints the outcome, the events and the effective policy.
        When the newest root has a log, it also fetches manifest.proof and verifies it
        (docs/DESIGN.md section 12); a refusal prints its reason code (log-...), and the
        log line shows the stored checkpoint's size, t_q and age.
        Exit 0 updated or unchanged, 1 rejected, 2 usage, 3 network or storage failure.

        --connect-to ADDRESS[:PORT] dials ADDRESS for the publisher, still validating the
        URL's host. --at TIME rehearses the refresh at another time (RFC 3339, e.g. to see
        what expires when): DIR is read but NEVER written, and the output says so.
        --stale-grace and --timeout take a duration (1h, 30s) or plain seconds.

        --baseline FILE is the app's baseline pins (see docs/CLIENT.md): {"type":
        "pinion.baseline", "specVersion": 1, "domains": [...]} with manifest domain entries.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let urlText = try arguments.required("url")
        guard let url = URL(string: urlText), url.scheme == "https", url.host != nil else {
            throw CLIError.usage("--url must be an https URL, got \"\(urlText)\"")
        }
        let events = EventLog()
        let client = try ClientSetup.client(arguments, baseURL: url, context: context, events: events)
        let rehearsal = try ClientSetup.rehearsalTime(arguments).map {
            "rehearsal at \($0): the state in \(try arguments.required("state")) is read, never written"
        }
        let report = client.refresh()
        let policy = client.policyNow()
        let state = client.trustedState
        let outcomeText: String
        // nil for success; else the category ExitCode.of maps to the exit code.
        let failure: PinionErrorCategory?
        switch report.outcome {
        case .updated(let order):
            outcomeText = "updated to \(order)"
            failure = nil
        case .unchanged:
            outcomeText = "unchanged"
            failure = nil
        case .rejected(let error):
            // Name the published file the refusal concerns, unless the reason already does.
            let reason = report.diagnosis ?? "\(error)"
            if let document = report.document, !reason.hasPrefix(document) {
                outcomeText = "rejected: \(document): \(reason)"
            } else {
                outcomeText = "rejected: \(reason)"
            }
            failure = .refusal
        case .networkFailure(let error):
            outcomeText = "network failure: \(error)"
            failure = .io
        }
        if arguments.flag("json") {
            let document = JSONValue.object(
                JSONObject(
                    [
                        .init("outcome", .string(outcomeText)),
                        .init("events", .array(events.events.map { .string(EventLog.describe($0)) })),
                        .init("rootVersion", .number(String(state.chain.newest.version))),
                        .init("floor", state.floor.map { .string($0.description) } ?? .null),
                        .init("manifestCurrent", .bool(client.policy.isManifestCurrent(at: client.effectiveNow))),
                        .init("policy", ClientSetup.policyJSON(policy)),
                        // Values for machines (docs/DESIGN.md §14), next to the prose members above.
                        .init("outcomeKind", .string(Self.outcomeKind(report.outcome))),
                        .init("floorRootVersion", state.floor.map { .number(String($0.rootVersion)) } ?? .null),
                        .init("floorVersion", state.floor.map { .number(String($0.version)) } ?? .null),
                        .init("manifestExpiresAt", state.manifest.map { .string($0.expiresAt.description) } ?? .null),
                        .init("rootExpiresAt", .string(state.chain.newest.payload.expiresAt.description)),
                        .init("logReason", ClientLogOutput.reasonCode(report.outcome).map { .string($0) } ?? .null),
                        .init(
                            "log",
                            ClientLogOutput.json(
                                state, evidence: client.logEquivocationEvidence, at: client.effectiveNow)),
                    ] + (rehearsal.map { [.init("rehearsal", .string($0))] } ?? [])))
            context.out(JSONWriter.terminalSafeText(document))
        } else {
            if let rehearsal { context.print("rehearsal   \(rehearsal)") }
            context.print("outcome     \(outcomeText)")
            for event in events.events { context.print("event       \(EventLog.describe(event))") }
            context.print("root        version \(state.chain.newest.version)")
            context.print("floor       \(state.floor?.description ?? "none")")
            if let code = ClientLogOutput.reasonCode(report.outcome) { context.print("log reason  \(code)") }
            for line in ClientLogOutput.lines(
                state, evidence: client.logEquivocationEvidence, at: client.effectiveNow)
            { context.print(line) }
            for line in ClientSetup.policyLines(policy) { context.print(line) }
        }
        if let failure { throw CLIError(category: failure, outcomeText) }
    }

    /// The outcome as the enum `--json` writes: updated, unchanged, rejected, networkFailure.
    static func outcomeKind(_ outcome: RefreshOutcome) -> String {
        switch outcome {
        case .updated: return "updated"
        case .unchanged: return "unchanged"
        case .rejected: return "rejected"
        case .networkFailure: return "networkFailure"
        }
    }
}

struct ClientConnectCommand: Command {
    static let path = ["client", "connect"]
    static let summary = "make one pinned TLS connection; print trusted / not pinned / rejected"
    static let options: [OptionSpec] = ClientSetup.options
    static let help = """
        usage: pinion client connect --root ROOT_ENVELOPE --scope S --state DIR [--baseline FILE]
                                     [--cafile F] [--connect-to ADDRESS[:PORT]] [--at TIME]
                                     HOST:PORT

        Makes one connection to HOST:PORT (or to ADDRESS when given, validating and pinning
        for HOST) with the SDK's policy from DIR and the baseline: normal X.509 and
        hostname validation first, then the pins on the verified chain, before any request
        byte. Prints trusted (with the matching pin), not pinned, report-only failure, or
        rejected with the reason. Exit 0 trusted, not pinned or report-only; 1 rejected
        (X.509 or pins); 2 usage (a --state DIR that does not exist: only refresh creates
        one); 3 network. It does not refresh: run pinion client refresh first.
        --at TIME evaluates the policy at another time; DIR is then never written.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let target = try arguments.positional(["HOST:PORT"])[0]
        let (host, port) = try SPKICommand.splitHostPort(target, option: "HOST:PORT")
        var connectTo: (host: String, port: UInt16)?
        if let address = arguments.value("connect-to") {
            connectTo = try ConnectTo.parse(address, option: "--connect-to", defaultPort: port)
        }
        try ClientSetup.requireExistingState(arguments)
        let events = EventLog()
        let client = try ClientSetup.client(arguments, baseURL: nil, context: context, events: events)
        let startUpEvents = events.events.count
        for event in events.events { context.print("event       \(EventLog.describe(event))") }
        for line in ClientLogOutput.lines(
            client.trustedState, evidence: client.logEquivocationEvidence, at: client.effectiveNow)
        { context.print(line) }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        guard let url = URL(string: "https://\(hostPart):\(port)/") else {
            throw CLIError.usage("\(target): not a usable host name")
        }
        do {
            let (response, verdict) = try client.get(url, connectTo: connectTo)
            switch verdict {
            case .trusted(let pin, let entry): context.print("trusted: \(host) matches \(pin) of \(entry)")
            case .notPinned: context.print("not pinned: no entry covers \(host); normal X.509 validation passed")
            case .reportOnly(let failure):
                context.print("report-only failure: \(failure.reason) for \(failure.entry); the connection went on")
            case .rejected(let failure): context.print("rejected: \(failure.reason)")
            }
            // Raised by the connection's evaluation (a checkpoint gone stale).
            for event in events.events.dropFirst(startUpEvents) {
                context.print("event       \(EventLog.describe(event))")
            }
            context.print("HTTP status \(response.status)")
        } catch {
            // The exit code is the error's category (ExitCode.of); only the wording is chosen here.
            let message: String
            switch error.code {
            case .pinningRefused(_, _, let reason): message = "rejected: \(host): \(reason)"
            case .emptyVerifiedChain: message = "rejected: \(host): no verified chain"
            case .certificateVerificationFailed(_, _, let reason):
                message = "rejected: \(host): X.509 validation failed: \(reason)"
            default: message = "\(target): \(error)"
            }
            throw CLIError(category: error.category, message)
        }
    }
}
