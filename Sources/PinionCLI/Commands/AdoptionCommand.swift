// `pinion adoption`: what share of active clients hold which manifest and baseline, read from
// access logs, and whether enough of them would accept the key a server moves to (the switch
// gate of docs/OPERATIONS.md).

import Foundation
import PinionAudit
import PinionCore
import PinionTrust

struct AdoptionCommand: Command {
    static let path = ["adoption"]
    static let summary = "share of clients by manifest version and baseline, from access logs; the switch gate"
    static let options: [OptionSpec] = [
        .value("repo"), .value("since"), .value("at"), .value("format"), .value("baseline", repeatable: true),
        .value("domain"), .value("pin"), .value("min-share"), .flag("json"),
    ]
    static let help = """
        usage: pinion adoption --repo TREE [--since DURATION] [--at TIME] [--format serve|nginx|json]
                               [--baseline FILE ...] [--domain HOST --pin sha256/... [--min-share PERCENT]]
                               [--json] LOG...

        Reads manifest polls (GETs of v1/SCOPE/manifest.json answered 200 or 304) from access
        logs and prints, per scope, the share of polls and the share of distinct network
        prefixes (IPv4 /24, IPv6 /64) for each (version held, baseline) the poll token
        manifest.json?have=V&base=B names. It counts polls and prefixes, not devices, and
        keeps and prints no address.

        With --domain and --pin it answers the switch question: for each group, the policy
        for HOST at --at (the held manifest from TREE's history with its expiry, or the
        baseline alone for version 0, merged fail-closed) and whether it accepts the pin;
        unknown baselines, unknown versions, malformed queries and polls without one count
        as not accepting. It reports the lower of the poll share and the prefix share, and
        exits 1 below --min-share. The gate is advice: anyone can send any query.

        options:
          --repo TREE       the tree pinion publish writes (its v1/SCOPE/history/ files)
          --since DURATION  only polls logged this long before --at (default 7d)
          --at TIME         RFC 3339 UTC time to judge at (default now)
          --format F        serve (pinion serve --access-log), nginx (combined), json (one
                            object per line: time, client, method, target, status); default:
                            decided per file from its first line
          --baseline FILE   a baseline document an app release ships (repeatable), matched to
                            base by the first 16 hex digits of its SHA-256
          --domain HOST     the host whose server moves to a new key
          --pin PIN         that key's SPKI pin
          --min-share P     the share, in percent, the gate needs (default 95)
          --json            the same facts as JSON

        Malformed lines are counted, and the first five are named with file and line.
        Exit codes: 0, 1 no manifest poll in the logs or the gate below --min-share or a
        baseline that does not parse, 2 usage, 3 unreadable log or tree.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let logs = arguments.positional
        guard !logs.isEmpty else { throw CLIError.usage("missing LOG (one or more access logs)") }
        guard let repo = arguments.value("repo") else { throw CLIError.usage("missing --repo TREE") }
        let at =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        let since = try DurationText.seconds(arguments.value("since") ?? "7d", option: "since")
        let format = try arguments.value("format").map { (text) throws(CLIError) -> AccessLogFormat in
            guard let format = AccessLogFormat(rawValue: text) else {
                throw CLIError.usage("--format must be serve, nginx or json, got \"\(text)\"")
            }
            return format
        }
        try Load.existingTree(repo)
        let gate = try gateOptions(arguments)
        let baselines = try readBaselines(arguments.values("baseline"))

        var tally = AdoptionTally()
        var malformed: [(file: String, line: Int, reason: String)] = []
        var malformedCount = 0
        var outside = 0
        for log in logs {
            try forEachLine(of: log) { number, line, detected in
                guard let line else {
                    malformedCount += 1
                    if malformed.count < 5 { malformed.append((log, number, "longer than \(maxLineBytes) bytes")) }
                    return
                }
                switch AccessLogLine.read(line, format: format ?? detected) {
                case .poll(let poll):
                    guard poll.time <= at, poll.time >= at.adding(seconds: -since) else {
                        outside += 1
                        return
                    }
                    tally.add(poll)
                case .other: break
                case .malformed(let reason):
                    malformedCount += 1
                    if malformed.count < 5 { malformed.append((log, number, reason)) }
                }
            }
        }
        for entry in malformed {
            context.warn("\(entry.file):\(entry.line): malformed line (\(entry.reason))")
        }
        if malformedCount > malformed.count {
            context.warn("\(malformedCount - malformed.count) more malformed lines")
        }
        let scopes = tally.scopes
        guard !scopes.isEmpty else {
            throw CLIError.failure(
                "no manifest poll in the logs between \(at.adding(seconds: -since)) and \(at)"
                    + (outside > 0 ? " (\(outside) outside that window)" : "")
                    + (malformedCount > 0 ? "; \(malformedCount) malformed lines" : ""))
        }
        var verdicts: [(scope: String, polls: Double, prefixes: Double)] = []
        if let gate {
            for scope in scopes {
                let manifests = try readManifests(repo: repo, scope: scope.scope)
                let judge = AdoptionGate(
                    domain: gate.domain, pin: gate.pin, time: at, manifests: manifests,
                    baselines: baselines.mapValues(\.baseline))
                if let shares = tally.shares(scope: scope.scope, accepts: judge.accepts) {
                    verdicts.append((scope.scope, shares.polls, shares.prefixes))
                }
            }
        }
        if arguments.flag("json") {
            context.out(
                JSONWriter.terminalSafeText(
                    json(scopes, verdicts: verdicts, gate: gate, malformed: malformedCount, at: at, since: since)))
        } else {
            printText(scopes, verdicts: verdicts, gate: gate, malformed: malformedCount, at: at, since: since, context)
        }
        if let gate, verdicts.contains(where: { min($0.polls, $0.prefixes) * 100 < gate.minShare }) {
            throw CLIError.failure("the gate is below --min-share \(percent(gate.minShare))%")
        }
    }

    private struct GateOptions {
        let domain: String
        let pin: Pin
        let minShare: Double
    }

    private static func gateOptions(_ arguments: ParsedArguments) throws(CLIError) -> GateOptions? {
        let domain = arguments.value("domain")
        let pinText = arguments.value("pin")
        guard domain != nil || pinText != nil || arguments.value("min-share") != nil else { return nil }
        guard let domain, let pinText else { throw CLIError.usage("--domain and --pin go together") }
        guard MergedPolicy.normalizedHost(domain) != nil else {
            throw CLIError.usage("--domain \(domain): not a host name")
        }
        let pin: Pin
        do { pin = try Pin(pinText) } catch { throw CLIError.usage("--pin: \(error)") }
        var minShare = 95.0
        if let text = arguments.value("min-share") {
            guard let value = Double(text), value.isFinite, (0...100).contains(value) else {
                throw CLIError.usage("--min-share must be a percentage from 0 to 100, got \"\(text)\"")
            }
            minShare = value
        }
        return GateOptions(domain: domain, pin: pin, minShare: minShare)
    }

    private static func readBaselines(_ files: [String]) throws(CLIError) -> [String: (
        file: String, baseline: Baseline
    )] {
        var baselines: [String: (file: String, baseline: Baseline)] = [:]
        for file in files {
            let bytes = try Files.read(file, limit: Limits.standard.maxEnvelopeBytes)
            let baseline: Baseline
            do { baseline = try Baseline.parse(bytes) } catch {
                throw CLIError.failure("\(file): not a baseline document: \(error)")
            }
            let base = PollToken(have: 0, baselineDocument: bytes, hasher: crypto.hasher).base
            baselines[base] = (file, baseline)
        }
        return baselines
    }

    /// The scope's published manifests by version, read from `history/` without verifying
    /// them (`pinion audit` verifies the tree).
    private static func readManifests(repo: String, scope: String) throws(CLIError) -> [Int64: ManifestPayload] {
        let directory = repo + "/v1/" + scope + "/history"
        // A scope the tree does not hold (a client's path, a typo) has no manifests: its
        // polls count as not accepting.
        guard FileManager.default.fileExists(atPath: repo + "/v1/" + scope) else { return [:] }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw CLIError.io("\(directory): cannot list the published manifests")
        }
        var manifests: [Int64: ManifestPayload] = [:]
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let path = directory + "/" + name
            let bytes = try Files.readRegular(path, limit: Limits.standard.maxEnvelopeBytes)
            do {
                let payload = try ManifestPayload.parse(try Envelope.parse(bytes).payload)
                manifests[payload.version] = payload
            } catch {
                throw CLIError.failure("\(path): not a manifest envelope: \(error)")
            }
        }
        return manifests
    }

    /// The longest log line read, in bytes; a longer one is reported as malformed and
    /// skipped without being kept in memory.
    static let maxLineBytes = 64 * 1024

    /// Calls `body` with each line (1-based number; its text without the newline, or nil
    /// when it is longer than `maxLineBytes`) of a log read in chunks, and the format the
    /// first line shows. Each byte is looked at once.
    private static func forEachLine(
        of path: String, _ body: (Int, Substring?, AccessLogFormat) -> Void
    ) throws(CLIError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            let handle = FileHandle(forReadingAtPath: path)
        else {
            throw CLIError.io("\(path): cannot open the log (no such file, a directory, or no permission)")
        }
        defer { try? handle.close() }
        var line: [UInt8] = []
        var overlong = false
        var number = 0
        var format: AccessLogFormat?
        func emit() {
            number += 1
            defer {
                line.removeAll(keepingCapacity: true)
                overlong = false
            }
            if overlong {
                body(number, nil, format ?? .serve)
                return
            }
            let text = Substring(String(decoding: line, as: UTF8.self))
            guard !text.isEmpty else { return }
            let detected = format ?? detect(text)
            format = detected
            body(number, text, detected)
        }
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch {
                throw CLIError.io("\(path): cannot read the log (\(error.localizedDescription))")
            }
            guard let chunk, !chunk.isEmpty else { break }
            var start = chunk.startIndex
            while start < chunk.endIndex {
                let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n"))
                let end = newline ?? chunk.endIndex
                if !overlong {
                    if line.count + (end - start) > maxLineBytes {
                        overlong = true
                        line.removeAll(keepingCapacity: true)
                    } else {
                        line.append(contentsOf: chunk[start..<end])
                    }
                }
                guard let newline else { break }
                emit()
                start = newline + 1
            }
        }
        if !line.isEmpty || overlong { emit() }
    }

    private static func detect(_ line: Substring) -> AccessLogFormat {
        if line.hasPrefix("{") { return .json }
        if let first = line.split(separator: " ").first, (try? Timestamp(rfc3339: String(first))) != nil {
            return .serve
        }
        return .nginx
    }

    private static func percent(_ share: Double) -> String {
        let tenths = (share * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }

    private static func heldText(_ held: ManifestPoll.Held) -> (have: String, base: String) {
        switch held {
        case .token(let have, let base): (String(have), base)
        case .invalid: ("invalid", "-")
        case .none: ("none", "-")
        }
    }

    private static func printText(
        _ scopes: [AdoptionTally.Scope], verdicts: [(scope: String, polls: Double, prefixes: Double)],
        gate: GateOptions?, malformed: Int, at: Timestamp, since: Int64, _ context: CLIContext
    ) {
        context.print("polls from \(at.adding(seconds: -since)) to \(at)")
        for scope in scopes {
            context.print(
                TerminalText.escape("scope \(scope.scope): \(scope.polls) polls from \(scope.prefixes) prefixes"))
            // Columns widen for long values (a version may have up to 19 digits); never cut.
            func padded(_ text: String, _ width: Int) -> String {
                text + String(repeating: " ", count: max(0, width - text.count))
            }
            let rows = scope.buckets.map { bucket in
                let (have, base) = heldText(bucket.held)
                let polls = "\(bucket.polls) (\(percent(100 * Double(bucket.polls) / Double(scope.polls)))%)"
                let prefixes =
                    "\(bucket.prefixes) (\(percent(100 * Double(bucket.prefixes) / Double(scope.prefixes)))%)"
                return (have, base, polls, prefixes)
            }
            let haveWidth = max(9, rows.map(\.0.count).max() ?? 0)
            context.print("  " + padded("have", haveWidth) + " base              polls            prefixes")
            for (have, base, polls, prefixes) in rows {
                context.print(
                    "  " + padded(have, haveWidth) + " " + padded(base, 17) + " " + padded(polls, 16) + " " + prefixes)
            }
        }
        if malformed > 0 { context.print("malformed lines: \(malformed)") }
        guard let gate else { return }
        for verdict in verdicts {
            let lower = min(verdict.polls, verdict.prefixes) * 100
            let passes = lower >= gate.minShare
            context.print(
                TerminalText.escape(
                    "gate \(verdict.scope) \(gate.domain) \(gate.pin): \(percent(verdict.polls * 100))% of polls, "
                        + "\(percent(verdict.prefixes * 100))% of prefixes would accept; the lower, \(percent(lower))%, is "
                        + (passes ? "at or above" : "below") + " --min-share \(percent(gate.minShare))%"))
        }
    }

    private static func json(
        _ scopes: [AdoptionTally.Scope], verdicts: [(scope: String, polls: Double, prefixes: Double)],
        gate: GateOptions?, malformed: Int, at: Timestamp, since: Int64
    ) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        func share(_ value: Double) -> JSONValue { .number(String(format: "%.4f", value)) }
        var members: [JSONObject.Member] = [
            .init("from", .string(at.adding(seconds: -since).description)), .init("to", .string(at.description)),
            .init("malformedLines", number(malformed)),
            .init(
                "scopes",
                .array(
                    scopes.map { scope in
                        .object(
                            JSONObject([
                                .init("scope", .string(scope.scope)), .init("polls", number(scope.polls)),
                                .init("prefixes", number(scope.prefixes)),
                                .init(
                                    "groups",
                                    .array(
                                        scope.buckets.map { bucket in
                                            let (have, base) = heldText(bucket.held)
                                            return .object(
                                                JSONObject([
                                                    .init("have", .string(have)), .init("base", .string(base)),
                                                    .init("polls", number(bucket.polls)),
                                                    .init("prefixes", number(bucket.prefixes)),
                                                ]))
                                        })),
                            ]))
                    })),
        ]
        if let gate {
            members.append(
                .init(
                    "gate",
                    .object(
                        JSONObject([
                            .init("domain", .string(gate.domain)), .init("pin", .string(gate.pin.description)),
                            .init("minShare", share(gate.minShare / 100)),
                            .init(
                                "scopes",
                                .array(
                                    verdicts.map { verdict in
                                        .object(
                                            JSONObject([
                                                .init("scope", .string(verdict.scope)),
                                                .init("pollShare", share(verdict.polls)),
                                                .init("prefixShare", share(verdict.prefixes)),
                                                .init(
                                                    "passes",
                                                    .bool(min(verdict.polls, verdict.prefixes) * 100 >= gate.minShare)),
                                            ]))
                                    })),
                        ]))))
        }
        return .object(JSONObject(members))
    }
}
