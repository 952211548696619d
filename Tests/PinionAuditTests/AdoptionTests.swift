// `pinion adoption`: access log lines of the three formats read strictly, polls tallied by
// what clients hold, and the switch gate judged from the tree's manifests and the shipped
// baselines, over a known fleet whose shares are worked out by hand.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionTestSupport
import PinionTrust
import Testing

@Suite struct AdoptionTests {
    static let zeros = PollToken.noBaseline
    static let base = "0123456789abcdef"

    @Test func linesOfEachFormatAreReadAndOtherRequestsSkipped() throws {
        let time = try Timestamp(rfc3339: "2026-12-01T10:00:00Z")
        let serve = AccessLogLine.read(
            "2026-12-01T10:00:00Z 203.0.113.7:50312 GET /v1/com.example.app/manifest.json?have=7&base=\(Self.base) 304 0 0.4ms",
            format: .serve)
        #expect(
            serve
                == .poll(
                    ManifestPoll(
                        time: time, prefix: "203.0.113.0/24", scope: "com.example.app",
                        held: .token(have: 7, base: Self.base))))
        let serveV6 = AccessLogLine.read(
            "2026-12-01T10:00:00Z [2001:db8:1:2:3:4:5:6]:443 GET /v1/s/manifest.json 200 10 1.0ms", format: .serve)
        #expect(serveV6 == .poll(ManifestPoll(time: time, prefix: "2001:db8:1:2::/64", scope: "s", held: .none)))
        let nginx = AccessLogLine.read(
            "::ffff:198.51.100.9 - - [01/Dec/2026:11:30:00 +0130] \"GET /v1/s/manifest.json?have=1 HTTP/1.1\" 200 5 \"-\" \"okhttp/3\"",
            format: .nginx)
        #expect(nginx == .poll(ManifestPoll(time: time, prefix: "198.51.100.0/24", scope: "s", held: .invalid)))
        let json = AccessLogLine.read(
            #"{"time": "2026-12-01T10:00:00.250Z", "client": "192.0.2.1", "method": "GET", "target": "/v1/s/manifest.json?have=0&base=0000000000000000", "status": 200, "edge": "FRA"}"#,
            format: .json)
        #expect(
            json
                == .poll(
                    ManifestPoll(
                        time: time, prefix: "192.0.2.0/24", scope: "s", held: .token(have: 0, base: Self.zeros))))

        let absolute = AccessLogLine.read(
            "2026-12-01T10:00:00Z 192.0.2.1:1 GET https://pins.example/v1/s/manifest.json? 200 5 1ms", format: .serve)
        #expect(absolute == .poll(ManifestPoll(time: time, prefix: "192.0.2.0/24", scope: "s", held: .none)))
        let others: [(String, AccessLogFormat)] = [
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/s/index.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 HEAD /v1/s/manifest.json 200 0 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/s/manifest.json 404 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/s/sub/manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z listening on 127.0.0.1:8443", .serve),
            ("2026-12-01T10:00:00Z - - (header timeout) 408 0", .serve),
            ("192.0.2.1 - - [01/Dec/2026:10:00:00 +0000] \"-\" 400 0 \"-\" \"-\"", .nginx),
            (
                "192.0.2.1 - - [01/Dec/2026:10:00:00 +0000] \"POST /v1/s/manifest.json HTTP/1.1\" 200 0 \"-\" \"-\"",
                .nginx
            ),
        ]
        for (line, format) in others {
            #expect(AccessLogLine.read(Substring(line), format: format) == .other, "\(line)")
        }
        let malformed: [(String, AccessLogFormat)] = [
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/\u{1B}[31mx/manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/../manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/%73/manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1//s/manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/s/../s/manifest.json 200 5 1ms", .serve),
            ("junk", .serve),
            ("2026-12-01 10:00:00 192.0.2.1:1 GET /v1/s/manifest.json 200 5 1ms", .serve),
            ("2026-12-01T10:00:00Z host.example:1 GET /v1/s/manifest.json 200 5 1ms", .serve),
            ("192.0.2.1 - - [01/Dec/2026:10:00:00] \"GET /v1/s/manifest.json HTTP/1.1\" 200 0", .nginx),
            ("192.0.2.1 - - [31/Foo/2026:10:00:00 +0000] \"GET /v1/s/manifest.json HTTP/1.1\" 200 0", .nginx),
            ("192.0.2.1 - - [01/Dec/2026:10:00:00 +0000] \"GET /v1/s/manifest.json HTTP/1.1\" abc 0", .nginx),
            ("{\"time\": \"2026-12-01T10:00:00Z\"}", .json),
            ("[1, 2]", .json),
            (#"{"time": "yesterday", "client": "192.0.2.1", "method": "GET", "target": "/", "status": 200}"#, .json),
            (
                #"{"time": "2026-12-01T10:00:00Z", "client": "192.0.2.1", "method": "GET", "target": "/", "status": "200"}"#,
                .json
            ),
            (
                #"{"time": "2026-12-01T10:00:00Z", "client": "nope", "method": "GET", "target": "/v1/s/manifest.json", "status": 200}"#,
                .json
            ),
        ]
        for (line, format) in malformed {
            guard case .malformed = AccessLogLine.read(Substring(line), format: format) else {
                Issue.record("not refused: \(line)")
                continue
            }
        }
    }

    @Test func theQueryIsReadOnlyInItsExactForm() {
        let token = PollToken(query: "have=12&base=\(Self.base)")
        #expect(token?.have == 12 && token?.base == Self.base)
        for query in [
            "", "have=12", "have=012&base=\(Self.base)", "base=\(Self.base)&have=12", "have=12&base=\(Self.base)&x=1",
            "have=12&base=0123456789ABCDEF", "have=-1&base=\(Self.base)", "have=9223372036854775808&base=\(Self.base)",
            "have=1%32&base=\(Self.base)",
        ] {
            #expect(PollToken(query: Substring(query)) == nil, "\(query)")
            #expect(PollToken.heldVersion(query: Substring(query)) == nil, "\(query)")
        }
        #expect(PollToken.heldVersion(query: "have=12&base=\(Self.base)") == 12)
        #expect(PollToken.heldVersion(query: "have=0&base=\(Self.base)") == 0)
    }

    /// The fleet of `Fleet`, judged in the library: 7 of 10 polls and 4 of 7 prefixes accept.
    @Test func theGateTakesManifestsExpiryAndBaselinesIntoAccount() throws {
        let fleet = try Fleet()
        var tally = AdoptionTally()
        for poll in fleet.polls { tally.add(poll) }
        let scope = try #require(tally.scopes.first)
        #expect(scope.polls == 10)
        #expect(scope.prefixes == 7)
        #expect(
            scope.buckets.map { "\($0.held):\($0.polls):\($0.prefixes)" } == [
                "token(have: 0, base: \"\(fleet.withNewBase)\"):1:1", "token(have: 0, base: \"ffffffffffffffff\"):1:1",
                "token(have: 2, base: \"\(Self.zeros)\"):2:2", "token(have: 3, base: \"\(Self.zeros)\"):6:3",
            ])
        let gate = fleet.gate(at: fleet.at)
        let shares = try #require(tally.shares(scope: scope.scope, accepts: gate.accepts))
        #expect(shares.polls == 0.7)
        #expect(abs(shares.prefixes - 4.0 / 7.0) < 1e-9)
        // Once manifest 2 has expired, its holders fall back to the empty baseline: the
        // domain then has no pins at all, which refuses every key (fail-closed).
        let expiry = try #require(fleet.manifests[2]).expiresAt
        #expect(!fleet.gate(at: expiry).accepts(.token(have: 2, base: Self.zeros)))
        #expect(fleet.gate(at: expiry).accepts(.token(have: 3, base: Self.zeros)))
        #expect(!gate.accepts(.token(have: 9, base: Self.zeros)), "an unknown version")
        #expect(!gate.accepts(.invalid))
        #expect(!gate.accepts(.none))
    }

    // MARK: The command

    @Test func theCommandReportsTheFleetFromThreeLogFormats() throws {
        let fleet = try Fleet()
        let work = fleet.world.directory.path
        let logs = try fleet.writeLogs(in: work)
        let base = [
            "adoption", "--repo", work + "/tree", "--at", fleet.at.description, "--baseline", fleet.baselineWithNew,
            "--baseline", fleet.baselineWithout,
        ]
        let summary = runPinion(base + logs)
        #expect(summary.status == 0, "\(summary.err)")
        #expect(summary.out.contains("scope com.example.app: 10 polls from 7 prefixes"))
        #expect(summary.out.contains("  3         \(Self.zeros)  6 (60%)          3 (42.9%)"), "\(summary.out)")
        #expect(summary.out.contains("malformed lines: 2"))
        #expect(summary.err.contains("\(logs[0]):4: malformed line"), "\(summary.err)")
        #expect(summary.err.contains("\(logs[2]):3: malformed line"), "\(summary.err)")
        #expect(!summary.out.contains("10.1.1."), "no address is printed")

        let gate = ["--domain", "api.example.test", "--pin", fleet.newPin.description]
        let below = runPinion(base + gate + logs)
        #expect(below.status == 1)
        #expect(
            below.out.contains(
                "70% of polls, 57.1% of prefixes would accept; the lower, 57.1%, is below --min-share 95%"),
            "\(below.out)")
        let above = runPinion(base + gate + ["--min-share", "57", "--json"] + logs)
        #expect(above.status == 0, "\(above.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(above.out.utf8)) as? [String: Any])
        let verdict = try #require(((json["gate"] as? [String: Any])?["scopes"] as? [[String: Any]])?.first)
        #expect((verdict["pollShare"] as? Double) == 0.7)
        #expect((verdict["passes"] as? Bool) == true)
        #expect((json["malformedLines"] as? Int) == 2)
    }

    @Test func theCommandRefusesBadInput() throws {
        let fleet = try Fleet()
        let work = fleet.world.directory.path
        let logs = try fleet.writeLogs(in: work)
        let repo = ["adoption", "--repo", work + "/tree", "--at", fleet.at.description]
        try Data("{\"type\": \"pinion.baseline\"}".utf8).write(to: URL(fileURLWithPath: work + "/bad-baseline.json"))
        try Data("2026-12-01T10:00:00Z 192.0.2.1:1 GET /v1/s/index.json 200 5 1ms\n".utf8).write(
            to: URL(fileURLWithPath: work + "/no-polls.log"))
        let cases: [([String], Int32, String)] = [
            (["adoption", "--repo", work + "/tree"], 2, "missing LOG"),
            (["adoption"] + logs, 2, "missing --repo"),
            (repo + ["--format", "apache"] + logs, 2, "--format must be serve, nginx or json"),
            (repo + ["--domain", "api.example.test"] + logs, 2, "--domain and --pin go together"),
            (repo + ["--domain", "api.example.test", "--pin", "sha256/short"] + logs, 2, "--pin"),
            (repo + ["--domain", "10.0.0.1", "--pin", fleet.newPin.description] + logs, 2, "not a host name"),
            (
                repo + ["--domain", "api.example.test", "--pin", fleet.newPin.description, "--min-share", "101"] + logs,
                2, "--min-share must be a percentage"
            ),
            (repo + ["--since", "soon"] + logs, 2, "--since"),
            (repo + ["--baseline", work + "/bad-baseline.json"] + logs, 1, "not a baseline document"),
            (repo + [work + "/missing.log"], 3, "cannot open the log"),
            (repo + [work], 3, "cannot open the log"),
            (repo + [work + "/no-polls.log"], 1, "no manifest poll in the logs"),
            (["adoption", "--repo", work + "/tree", "--at", "2020-01-01T00:00:00Z"] + logs, 1, "outside that window"),
            (
                [
                    "adoption", "--repo", work + "/nowhere", "--at", fleet.at.description, "--domain",
                    "api.example.test",
                    "--pin", fleet.newPin.description,
                ] + logs, 3, "no such directory"
            ),
        ]
        // A scope the tree does not hold counts as not accepting; a line over the length limit
        // is reported, not kept.
        try Data(
            ("\(fleet.at.adding(seconds: -60)) 10.7.7.7:1 GET /v1/other.scope/manifest.json 200 5 1ms\n"
                + String(repeating: "x", count: 70_000) + "\n").utf8
        ).write(to: URL(fileURLWithPath: work + "/foreign.log"))
        let foreign = runPinion(
            repo + ["--domain", "api.example.test", "--pin", fleet.newPin.description, work + "/foreign.log"] + logs)
        #expect(foreign.status == 1, "\(foreign.err)")
        #expect(foreign.out.contains("gate other.scope api.example.test"), "\(foreign.out)")
        #expect(foreign.err.contains("foreign.log:2: malformed line (longer than 65536 bytes)"), "\(foreign.err)")
        for (arguments, status, message) in cases {
            let result = runPinion(arguments)
            #expect(result.status == status, "\(arguments): \(result.err)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
        }
    }
}

/// A tree whose manifests 1 and 2 pin `api.example.test` to the old key and manifest 3 to
/// the old and the new key, two baselines (one with the new key as a backup pin), and a fleet:
/// - 6 polls holding 3 with no baseline, from 3 IPv4 /24s (accept);
/// - 2 polls holding 2 with no baseline, from 2 /24s (refuse: manifest 2 lacks the new key);
/// - 1 poll holding nothing with the baseline that has the new key, from an IPv6 /64 (accept);
/// - 1 poll holding nothing with an unknown baseline (refuse).
/// So 7 of 10 polls and 4 of 7 prefixes accept.
struct Fleet {
    let world: AuditWorld
    let oldPin: Pin
    let newPin: Pin
    let manifests: [Int64: ManifestPayload]
    let baselineWithNew: String
    let baselineWithout: String
    let withNewBase: String
    let withNewBaseline: Baseline
    let at: Timestamp
    let polls: [ManifestPoll]

    init() throws {
        oldPin = try Pin(digest: [UInt8](repeating: 0x11, count: 32))
        newPin = try Pin(digest: [UInt8](repeating: 0x22, count: 32))
        let fixture = try HistoryFixture()
        let (oldPin, newPin) = (oldPin, newPin)
        try fixture.extend(2) { $0.domains = [.init(name: "api.example.test", pins: [oldPin])] }
        try fixture.extend(1) { $0.domains = [.init(name: "api.example.test", pins: [oldPin, newPin])] }
        world = try AuditWorld(fixture)
        manifests = Dictionary(uniqueKeysWithValues: fixture.manifests.map { ($0.payload.version, $0.payload) })
        let work = world.directory.path
        func baseline(_ pins: [Pin], _ name: String) throws -> (String, [UInt8]) {
            let text =
                "{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": [{\"name\": \"api.example.test\", \"pins\": ["
                + pins.map { "\"\($0)\"" }.joined(separator: ", ") + "]}]}\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: work + "/" + name))
            return (work + "/" + name, Array(text.utf8))
        }
        let withNew = try baseline([oldPin, newPin], "baseline-2.json")
        baselineWithNew = withNew.0
        baselineWithout = try baseline([oldPin], "baseline-1.json").0
        withNewBase = PollToken(have: 0, baselineDocument: withNew.1, hasher: CryptoProvider.sodium.hasher).base
        withNewBaseline = try Baseline.parse(withNew.1)
        at = fixture.auditTime
        let time = at.adding(seconds: -3600)
        let zeros = PollToken.noBaseline
        var polls: [ManifestPoll] = []
        for (prefix, count) in [("10.1.1.0/24", 2), ("10.1.2.0/24", 2), ("10.1.3.0/24", 2)] {
            for _ in 0..<count {
                polls.append(
                    .init(time: time, prefix: prefix, scope: "com.example.app", held: .token(have: 3, base: zeros)))
            }
        }
        for prefix in ["10.2.1.0/24", "10.2.2.0/24"] {
            polls.append(
                .init(time: time, prefix: prefix, scope: "com.example.app", held: .token(have: 2, base: zeros)))
        }
        polls.append(
            .init(
                time: time, prefix: "2001:db8:0:1::/64", scope: "com.example.app",
                held: .token(have: 0, base: withNewBase)))
        polls.append(
            .init(
                time: time, prefix: "10.4.1.0/24", scope: "com.example.app",
                held: .token(have: 0, base: "ffffffffffffffff")))
        self.polls = polls
    }

    func gate(at time: Timestamp) -> AdoptionGate {
        AdoptionGate(
            domain: "api.example.test", pin: newPin, time: time, manifests: manifests,
            baselines: [withNewBase: withNewBaseline])
    }

    /// The fleet as three logs: the version-3 holders in `pinion serve`'s format, the
    /// version-2 holders in nginx's combined format, the rest as JSON lines; with other
    /// requests, one poll older than the default window, and one malformed line in the first
    /// and the last log.
    func writeLogs(in directory: String) throws -> [String] {
        let scope = "/v1/com.example.app/manifest.json"
        let zeros = PollToken.noBaseline
        let time = at.adding(seconds: -3600).description
        var serve = ["\(time) listening on 127.0.0.1:8443"]
        for (index, address) in ["10.1.1.5", "10.1.1.6", "10.1.2.5", "10.1.2.6", "10.1.3.5", "10.1.3.6"].enumerated() {
            serve.append(
                "\(time) \(address):4\(index) GET \(scope)?have=3&base=\(zeros) \(index % 2 == 0 ? 200 : 304) 900 0.3ms"
            )
            if index == 1 { serve.append("a line that is not a log line") }
        }
        serve.append("\(time) 10.1.1.5:1 GET /v1/com.example.app/index.json 200 10 0.1ms")
        serve.append(
            "\(at.adding(seconds: -30 * day).description) 10.9.9.9:1 GET \(scope)?have=1&base=\(zeros) 200 9 0.1ms")
        let nginxTime = "[\(nginxDate(at.adding(seconds: -3600)))]"
        let nginx = ["10.2.1.9", "10.2.2.9"].map {
            "\($0) - - \(nginxTime) \"GET \(scope)?have=2&base=\(zeros) HTTP/1.1\" 200 900 \"-\" \"pinion-jvm/1\""
        }
        let json = [
            #"{"time": "\#(time)", "client": "2001:db8:0:1::5", "method": "GET", "target": "\#(scope)?have=0&base=\#(withNewBase)", "status": 200}"#,
            #"{"time": "\#(time)", "client": "10.4.1.1", "method": "GET", "target": "\#(scope)?have=0&base=ffffffffffffffff", "status": 304}"#,
            "not json",
        ]
        var files: [String] = []
        for (name, lines) in [("serve.log", serve), ("nginx.log", nginx), ("cdn.jsonl", json)] {
            let path = directory + "/" + name
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        return files
    }

    /// nginx's `$time_local` in UTC: `dd/Mon/yyyy:HH:MM:SS +0000`.
    private func nginxDate(_ time: Timestamp) -> String {
        let text = time.description  // YYYY-MM-DDTHH:MM:SSZ
        let parts = Array(text)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let month = months[Int(String(parts[5...6]))! - 1]
        return "\(String(parts[8...9]))/\(month)/\(String(parts[0...3])):\(String(parts[11...18])) +0000"
    }
}
