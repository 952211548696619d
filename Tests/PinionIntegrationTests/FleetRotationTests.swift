// The server key rotation of docs/OPERATIONS.md run on a fleet: the runbook's own shell
// blocks (extracted as the docs test extracts them) against a live API server
// (`openssl s_server`) and a live publisher (`pinion serve` with its access log), while a
// few hundred in-process SDK clients (`PinningClient`, in-memory state, an injected clock)
// refresh at random moments between the steps. The oracle: every client trusts the API
// server at every moment, except clients whose (version held, baseline) the adoption gate
// counts as not accepting, as many as the gate reports; each of those recovers at its first
// refresh. The rotation as the runbook used to describe it (testdata/) must fail that oracle.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import PinionTrust
import Synchronization
import Testing

/// A child process that prints a line naming its port before serving (openssl s_server's
/// `ACCEPT 127.0.0.1:PORT`, pinion serve's `listening on https://127.0.0.1:PORT`).
final class AnnouncingChild: @unchecked Sendable {
    let process = Process()
    let port: UInt16

    init(_ program: String, _ arguments: [String], in directory: String, announcement: String) throws {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(60)
        var text = ""
        var found: UInt16?
        while found == nil, Date() < deadline {
            var entry = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 1000)
            if ready < 0, errno != EINTR { break }
            if ready <= 0 { continue }
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix(announcement) {
                found = line.split(separator: ":").last.flatMap { UInt16($0) }
            }
        }
        guard let found else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw TestSetupError(description: "\(program) did not announce its port: \(text)")
        }
        port = found
    }

    /// SIGKILL: a child started from a test worker thread may have SIGTERM blocked.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// One rotation played on a fleet, and what the oracle saw.
final class FleetRotation {
    /// Clients that refused the API server when the oracle allowed it (or not), by reason.
    struct Outcome {
        /// Refusals the oracle does not allow: "client N at T: why".
        var violations: [String] = []
        /// Clients that refused the server after the switch until their first refresh.
        var refusingAfterSwitch: Set<Int> = []
        /// Not-accepting polls the adoption gate counted among the polls after the switch
        /// (judged at the switch); nil when the runbook has no adoption gate.
        var gateNotAccepting: Int?
        /// Whether the runbook's switch gate passed before the switch.
        var switchGatePassed: Bool?
        /// The clients the oracle asked about the server in each state the fleet must cover.
        var seen: [String: Set<Int>] = [:]
        /// How many times the switch gate ran before it passed (or gave up).
        var gateRuns = 0
        /// Refreshes made, and how many failed.
        var refreshes = 0
        var failedRefreshes = 0
    }

    static let scope = "com.example.app"
    static let domain = "api.example.com"
    let directory: String
    let seed: UInt64
    let fleetSize: Int
    var random: SplitMix
    let clock = TestClock(Timestamp(Date()))
    var apiServer: AnnouncingChild?
    var publisher: AnnouncingChild?
    /// The SHA-256 digests of the SPKIs on the chain the API server presents (leaf, CA).
    var presented: [[UInt8]] = []
    var switched = false
    var outcome = Outcome()
    /// Shell variable assignments of the blocks run so far (`name=$(...)`), replayed before
    /// each later block, as a reader's shell keeps them.
    var assignments: [String] = []
    var published: Set<String> = []
    /// Each manifest poll the fleet made, in order: the client and its clock's time.
    var polls: [(index: Int, at: Timestamp)] = []

    init(seed: UInt64, fleetSize: Int) throws {
        self.seed = seed
        self.fleetSize = fleetSize
        random = SplitMix(state: seed)
        directory = try makeTemporaryDirectory(prefix: "pinion-fleet")
    }

    deinit {
        apiServer?.stop()
        publisher?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The lines of `markdown` from the heading `start` up to (not including) the next
    /// heading of the same or a higher level.
    static func section(_ markdown: String, _ start: String) -> String {
        let lines = markdown.components(separatedBy: "\n")
        guard let first = lines.firstIndex(of: start) else { return "" }
        let level = start.prefix { $0 == "#" }.count
        var end = first + 1
        while end < lines.count {
            let hashes = lines[end].prefix { $0 == "#" }.count
            if hashes > 0, hashes <= level, lines[end].dropFirst(hashes).hasPrefix(" ") { break }
            end += 1
        }
        return lines[first..<end].joined(separator: "\n")
    }

    // MARK: - Set-up: the directory the README's tour leaves, made small and fast

    /// Keys, CSRs and certificates (openssl), a 1-of-1 root, manifest 1 (the old primary and
    /// `backup.csr`'s key, 30 days) and manifest 2 (`backup.csr` and `new-backup.csr`, 2 days,
    /// so that clients offline long enough hold an expired manifest), both published; the two
    /// app releases' baselines exported from manifests 1 (4.2, without the key the server
    /// moves to) and 2 (4.3).
    static let setUp = #"""
        set -euo pipefail
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 30 \
          -subj "/CN=Fleet CA" 2>/dev/null
        leaf() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
          -subj "/CN=$2" 2>/dev/null; printf 'subjectAltName=DNS:%s\n' "$2" > "$1.ext"
          openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile "$1.ext" \
            -out "$1.pem" 2>/dev/null; }
        leaf old api.example.com
        leaf backup api.example.com
        leaf new-backup api.example.com
        leaf new api.example.com
        leaf publisher pins.example.com
        pinion keygen --out root --insecure-no-passphrase > /dev/null
        pinion keygen --out pins --insecure-no-passphrase > /dev/null
        pinion root init --scope com.example.app --root-key root.pub --root-threshold 1 --pins-key pins.pub \
          --pins-threshold 1 -o root-payload.json
        pinion sign --key root.key root-payload.json -o root.json
        primary=$(pinion spki old.csr | cut -d ' ' -f 1)
        backup=$(pinion spki backup.csr | cut -d ' ' -f 1)
        next_backup=$(pinion spki new-backup.csr | cut -d ' ' -f 1)
        pinion manifest init --root root.json --expires-in 30d -o payload.json
        pinion manifest set-domain payload.json api.example.com --pin "$primary" --pin "$backup"
        pinion sign --key pins.key payload.json -o manifest.json
        pinion manifest init --previous manifest.json --expires-in 2d -o payload2.json
        pinion manifest set-domain payload2.json api.example.com --pin "$backup" --pin "$next_backup"
        pinion sign --key pins.key payload2.json -o manifest2.json
        pinion publish --repo tree root.json
        pinion publish --repo tree manifest.json
        pinion publish --repo tree manifest2.json
        pinion export baseline --root root.json manifest.json -o app-4.2-baseline.json
        pinion export baseline --root root.json manifest2.json -o app-4.3-baseline.json
        """#

    func shell(_ script: String) throws -> CommandResult {
        let bin = URL(fileURLWithPath: pinionExecutable).deletingLastPathComponent().path
        return try runProgram(
            "/bin/bash", ["-c", "set -euo pipefail\n" + assignments.joined(separator: "\n") + "\n" + script],
            in: directory,
            environment: [
                "PATH": bin + ":/usr/local/bin:/usr/bin:/bin", "HOME": directory, "LC_ALL": "C.UTF-8",
                "PINION_PASSPHRASE": "fleet", "TMPDIR": directory,
            ], mergeStandardError: true)
    }

    func startAPIServer(_ name: String) throws {
        apiServer?.stop()
        apiServer = try AnnouncingChild(
            "/usr/bin/openssl",
            ["s_server", "-accept", "127.0.0.1:0", "-www", "-cert", name + ".pem", "-key", name + ".key"],
            in: directory, announcement: "ACCEPT ")
        // The pins of the chain the live server presents: its leaf and the CA.
        let pins = try shell("pinion spki \(name).pem ca.pem | cut -d ' ' -f 1")
        presented = try pins.out.split(separator: "\n").map { try Pin(String($0)).digest }
        guard pins.status == 0, presented.count == 2 else { throw TestSetupError(description: pins.out) }
    }

    func start() throws {
        let prepared = try shell(Self.setUp)
        guard prepared.status == 0 else { throw TestSetupError(description: "set-up failed: \(prepared.out)") }
        try startAPIServer("backup")
        publisher = try AnnouncingChild(
            pinionExecutable,
            [
                "serve", "--repo", "tree", "--cert", "publisher.pem", "--key", "publisher.key", "--listen",
                "127.0.0.1:0", "--access-log", "access.log", "--workers", "1",
            ], in: directory, announcement: "listening on ")
        clock.set(Timestamp(Date()))
    }

    // MARK: - The fleet

    struct Member {
        /// 0: app 4.2 (its baseline lacks the key the server moves to), 1: app 4.3.
        var release: Int
        /// The gap the app is installed in.
        var installGap: Int
        /// Gaps the device spends offline: no refresh (the oracle still asks it about the server).
        var offline: Set<Int>
        /// Installed in the first gap after the switch (a fresh install of either release).
        var installsAfterSwitch = false
        /// Offline from its install until the switch: a device that slept through every
        /// step before it, on its baseline alone.
        var dormantUntilSwitch = false
        var client: PinningClient?
        var refreshedSinceSwitch = false
    }

    var members: [Member] = []
    /// The gap being played.
    var currentGap = 0
    /// Gaps the fleet waits for a failing switch gate before it gives up and switches anyway.
    static let gateAttempts = 7
    let day: Int64 = 86_400

    func makeFleet(gaps: Int) {
        for _ in 0..<fleetSize {
            let release = random.below(10) < 2 ? 0 : 1
            // A third installed later than the start (fresh installs on either baseline).
            let installGap = random.below(3) == 0 ? random.below(gaps - 1) : 0
            var offline: Set<Int> = []
            // A quarter sleep through one or more whole steps; every device is online in the
            // last gap, so that each refusal's recovery is seen.
            if random.below(4) == 0 {
                let from = random.below(gaps - 1)
                let length = 1 + random.below(gaps - 1 - from)
                offline = Set(from..<(from + length))
            }
            var member = Member(release: release, installGap: installGap, offline: offline)
            // A few devices of each kind the gate cannot see before the switch: asleep
            // since the first gap, or installed only after the switch.
            switch random.below(20) {
            case 0:
                member.dormantUntilSwitch = true
                member.installGap = 0
            case 1: member.installsAfterSwitch = true
            default: break
            }
            members.append(member)
        }
    }

    func install(_ index: Int) throws {
        let baseline = try Baseline.parse(
            Array(
                try Data(
                    contentsOf: URL(
                        fileURLWithPath: directory
                            + (members[index].release == 0 ? "/app-4.2-baseline.json" : "/app-4.3-baseline.json")))))
        let root = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/root.json")))
        let configuration = ClientConfiguration(
            scope: Self.scope, baseURL: URL(string: "https://pins.example.com/"), embeddedRoot: root,
            baseline: baseline, stateDirectory: directory + "/unused", caFile: directory + "/ca.pem",
            clock: clock.function,
            publisherConnectTo: ("127.0.0.1", publisher?.port ?? 0))
        members[index].client = try PinningClient(configuration: configuration, storage: MemoryStorage())
    }

    /// Asks client `index` whether it trusts the live API server now; records a refusal the
    /// oracle does not allow.
    func check(_ index: Int, _ when: String) {
        guard let client = members[index].client else { return }
        let held = client.trustedState.manifest
        if held == nil { outcome.seen["on its baseline alone", default: []].insert(index) }
        if let held, held.expiresAt <= clock.time {
            outcome.seen["holding an expired manifest", default: []].insert(index)
        }
        if members[index].offline.contains(currentGap) || (!switched && members[index].dormantUntilSwitch) {
            outcome.seen["offline", default: []].insert(index)
        }
        if members[index].installsAfterSwitch { outcome.seen["installed after the switch", default: []].insert(index) }
        outcome.seen["app \(members[index].release == 0 ? "4.2" : "4.3")", default: []].insert(index)
        let policy = client.policyNow()
        if case .trusted = evaluate(host: Self.domain, verifiedChain: presented, policy: policy) { return }
        let now = clock.time
        if switched, !members[index].refreshedSinceSwitch {
            outcome.refusingAfterSwitch.insert(index)
        } else {
            outcome.violations.append(
                "client \(index) (app \(members[index].release == 0 ? "4.2" : "4.3")) refused the server \(when) at \(now)"
                    + (switched ? " after its first refresh since the switch" : " before the switch"))
        }
    }

    func refresh(_ index: Int) {
        guard let client = members[index].client else { return }
        let report = client.refresh()
        outcome.refreshes += 1
        polls.append((index, clock.time))
        switch report.outcome {
        case .updated, .unchanged: break
        case .rejected, .networkFailure: outcome.failedRefreshes += 1
        }
        if switched { members[index].refreshedSinceSwitch = true }
    }

    /// One gap between steps, `length` seconds of the clients' time: devices installed by
    /// now refresh once or twice and reach the server at random moments; at the end, every
    /// device is asked once more.
    func gap(_ number: Int, length: Int64) throws {
        currentGap = number
        let start = clock.time
        var events: [(at: Int64, index: Int, refresh: Bool)] = []
        for index in members.indices
        where members[index].installGap <= number && (switched || !members[index].installsAfterSwitch) {
            if members[index].client == nil {
                try install(index)
                check(index, "at install")
            }
            let online = !members[index].offline.contains(number) && (switched || !members[index].dormantUntilSwitch)
            for _ in 0..<(1 + random.below(2)) {
                events.append((Int64(random.below(Int(length))), index, online))
            }
        }
        events.sort { ($0.at, $0.index) < ($1.at, $1.index) }
        for event in events {
            clock.set(start.adding(seconds: event.at))
            check(event.index, "before a refresh")
            if event.refresh {
                refresh(event.index)
                check(event.index, "after a refresh")
            }
        }
        clock.set(start.adding(seconds: length))
        for index in members.indices { check(index, "at the end of gap \(number)") }
    }

    // MARK: - The runbook

    enum Block {
        case run(String)
        case liveLint(String)
        case adoption(String)
        case checkedPublish(String)
        case skip
    }

    /// What the fleet does with a block of the runbook: live checks get the live server's
    /// address and CA, the adoption gate the publisher's access log; blocks that only
    /// explain (PromQL) are skipped, and so is the tour's probe-less publish of a manifest
    /// the checked publish already wrote.
    func classify(_ block: DocumentBlock) -> Block {
        let text = block.text
        if block.notRun == nil {
            let publishes = text.split(separator: "\n").filter { $0.hasPrefix("pinion publish ") }
            if !publishes.isEmpty, publishes.count == text.split(separator: "\n").count,
                publishes.allSatisfy({ line in published.contains { line.hasSuffix(" " + $0) } })
            {
                return .skip
            }
            return .run(text)
        }
        if text.contains("pinion adoption") { return .adoption(text) }
        if text.contains("pinion publish"), text.contains("--check-live") { return .checkedPublish(text) }
        if text.contains("pinion lint"), text.contains("--live") { return .liveLint(text) }
        return .skip
    }

    var liveOptions: String {
        "--connect-to 127.0.0.1:\(apiServer?.port ?? 0) --cafile ca.pem"
    }

    func runBlock(_ text: String) throws -> CommandResult {
        let result = try shell(text)
        for line in text.split(separator: "\n") {
            if line.range(of: #"^[a-z_]+=\$\(.*\)$"#, options: .regularExpression) != nil {
                assignments.append(String(line))
            }
            if line.hasPrefix("pinion publish "), let file = line.split(separator: " ").last {
                published.insert(String(file))
            }
        }
        return result
    }

    /// The publisher's manifest poll lines, once it has written one for each poll made.
    func manifestPollLines() throws -> [Substring] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let text = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { $0.contains("/manifest.json") }
            if lines.count >= polls.count || Date() > deadline {
                guard lines.count == polls.count else {
                    throw TestSetupError(description: "\(polls.count) polls made, \(lines.count) logged")
                }
                return lines
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The access log as the fleet's devices would have left it: the publisher logs the
    /// machine's clock and 127.0.0.1 for every client, so each poll line (in order, the
    /// publisher serves one request at a time) gets its client's clock time, or `stamp`, and
    /// its client's own network, 10.0.N.0/24 for client N. The rest of each line, the
    /// target with the poll token included, is as the publisher wrote it.
    func fleetLog(_ range: Range<Int>, firstPerClient: Bool = false, stamp: Timestamp? = nil) throws -> String {
        let lines = try manifestPollLines()
        var seen: Set<Int> = []
        var output = ""
        for number in range where !firstPerClient || seen.insert(polls[number].index).inserted {
            let words = lines[number].split(separator: " ", omittingEmptySubsequences: false)
            let client = polls[number].index
            let peer = "10.\(client >> 8).\(client & 0xFF).7:40000"
            output += (["\(stamp ?? polls[number].at)", peer] + words.dropFirst(2).map(String.init)).joined(
                separator: " ")
            output += "\n"
        }
        return output
    }

    /// Runs `sections` (the monthly step, then a server key rotation) on the fleet: a gap
    /// before any step, a gap after each publish and after the switch. The switch happens
    /// after the adoption gate or, in a runbook without one, after its last block.
    func play(_ sections: [String], gapDays: Int64 = 2) throws -> Outcome {
        let blocks = try sections.flatMap { try DocumentBlocks.shellBlocks($0, file: "runbook") }
        let gaps = 1 + blocks.filter { $0.text.contains("pinion publish") }.count + 1
        makeFleet(gaps: gaps)
        var gapNumber = 0
        try gap(gapNumber, length: day)
        var adoptionCommand: String?
        var switchedAt: Timestamp?
        var pollsAtSwitch = 0
        func afterStep() throws {
            gapNumber += 1
            try gap(gapNumber, length: gapDays * day)
        }
        func doSwitch() throws {
            pollsAtSwitch = polls.count
            try startAPIServer("new-backup")
            switched = true
            switchedAt = clock.time
            for index in members.indices { check(index, "at the switch") }
            try afterStep()
        }
        for block in blocks {
            switch classify(block) {
            case .skip: continue
            case .run(let text):
                let result = try runBlock(text)
                #expect(result.status == 0, "\(text)\n-> \(result.out)")
                if text.contains("pinion publish") { try afterStep() }
            case .liveLint(let text):
                let result = try runBlock(
                    text.replacingOccurrences(
                        of: "--live api.example.com:443", with: "--live api.example.com:443 " + liveOptions))
                #expect(result.status == 0, "the add step's live gate: \(result.out)")
            case .checkedPublish(let text):
                let result = try runBlock(
                    text.replacingOccurrences(
                        of: "--check-live", with: "--check-live --live api.example.com:443 " + liveOptions))
                #expect(result.status == 0, "the retire step's checked publish: \(result.out)")
                try afterStep()
            case .adoption(let text):
                adoptionCommand = text
                // The runbook's rule: the servers move only once the gate passes. A team
                // that sees it fail waits and runs it again; so does the fleet, a gap at a time.
                for attempt in 0...Self.gateAttempts {
                    try fleetLog(0..<polls.count).write(
                        toFile: directory + "/before-switch.log", atomically: true, encoding: .utf8)
                    let at = clock.time
                    let gate = try runBlock(
                        text.replacingOccurrences(of: "/var/log/pinion/access.log", with: "before-switch.log")
                            + " --at \(at)")
                    outcome.switchGatePassed = gate.status == 0
                    outcome.gateRuns = attempt + 1
                    if gate.status == 0 || attempt == Self.gateAttempts { break }
                    #expect(gate.status == 1, "the gate either passes or says wait: \(gate.out)")
                    try afterStep()
                }
                try doSwitch()
            }
        }
        if !switched { try doSwitch() }
        // The census: each client's first poll after the switch carries the (version,
        // baseline) it held at the switch (every device is online in the last gap, so each
        // polls); stamped at the switch, the gate judges each there.
        if let adoptionCommand, let switchedAt {
            try fleetLog(pollsAtSwitch..<polls.count, firstPerClient: true, stamp: switchedAt).write(
                toFile: directory + "/after-switch.log", atomically: true, encoding: .utf8)
            let census = try shell(
                adoptionCommand.replacingOccurrences(of: "/var/log/pinion/access.log", with: "after-switch.log")
                    + " --at \(switchedAt) --json")
            let json = (try? JSONSerialization.jsonObject(with: Data(census.out.utf8))) as? [String: Any]
            let scopes = json?["scopes"] as? [[String: Any]]
            let gate = (json?["gate"] as? [String: Any])?["scopes"] as? [[String: Any]]
            if let counted = scopes?.first?["polls"] as? Int, let share = gate?.first?["pollShare"] as? Double {
                outcome.gateNotAccepting = Int((Double(counted) * (1 - share)).rounded())
            } else {
                outcome.violations.append("the census gate printed no share: \(census.out)")
            }
        }
        return outcome
    }
}

@Suite(.serialized) struct FleetRotationTests {
    static let operations: String = {
        (try? String(contentsOfFile: FleetRotation.packageRoot + "/docs/OPERATIONS.md", encoding: .utf8)) ?? ""
    }()

    static var monthly: String {
        FleetRotation.section(operations, "### Every month: re-sign before the manifest expires")
    }

    @Test(.timeLimit(.minutes(3))) func theRunbookKeepsEveryClientTrustingTheServer() throws {
        let rotation = FleetRotation.section(Self.operations, "### A server key rotation (add, switch, retire)")
        #expect(rotation.contains("**2. Switch.**"))
        let fleet = try FleetRotation(seed: 0x5EED_F1EE, fleetSize: 240)
        try fleet.start()
        let outcome = try fleet.play([Self.monthly, rotation])
        #expect(outcome.violations.isEmpty, "\(outcome.violations.prefix(10))")
        #expect(outcome.switchGatePassed == true, "the runbook's adoption gate must pass before the switch")
        #expect(outcome.failedRefreshes == 0)
        for state in [
            "app 4.2", "app 4.3", "on its baseline alone", "holding an expired manifest", "offline",
            "installed after the switch",
        ] {
            #expect((outcome.seen[state]?.count ?? 0) >= 5, "the fleet must have clients \(state)")
        }
        // Clients on app 4.2 (no baseline pin for the new key) without a current manifest
        // refuse the switched server until they refresh: the gate saw each of them.
        #expect(!outcome.refusingAfterSwitch.isEmpty)
        #expect(outcome.gateNotAccepting == outcome.refusingAfterSwitch.count)
        print(
            "fleet: \(fleet.fleetSize) clients, \(outcome.refreshes) refreshes, "
                + "\(outcome.refusingAfterSwitch.count) refused after the switch until their first refresh, "
                + "gate counted \(outcome.gateNotAccepting ?? -1); switch gate run \(outcome.gateRuns) times; "
                + outcome.seen.sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", "))
    }

    @Test(.timeLimit(.minutes(3))) func theOldRunbookLocksClientsOut() throws {
        let old = try String(
            contentsOfFile: FleetRotation.packageRoot
                + "/Tests/PinionIntegrationTests/testdata/old-server-key-rotation.md", encoding: .utf8)
        let fleet = try FleetRotation(seed: 0x5EED_F1EE, fleetSize: 240)
        try fleet.start()
        let outcome = try fleet.play([Self.monthly, old])
        // The manifest without the key the server still presents is published before the
        // switch: clients that fetch it refuse the server, and no gate accounts for them.
        #expect(outcome.violations.contains { $0.contains("before the switch") }, "\(outcome.violations.prefix(3))")
        print(
            "old runbook: \(outcome.violations.count) refusals the oracle does not allow, e.g. \(outcome.violations.first ?? "")"
        )
    }
}
