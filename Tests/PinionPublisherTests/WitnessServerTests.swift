// `pinion witness` over real HTTPS on 127.0.0.1: every status of the add-checkpoint route, the GET checkpoint route, the path prefix, the rate limit, and no split view cosigned, also across restarts.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTestSupport
import PinionTrust
import Synchronization
import Testing

@Suite struct WitnessServerTests {
    private func text(_ response: TestResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func answersEveryStatusOfAddCheckpointOverHTTPS() throws {
        let log = try TestLog(size: 8)
        let fixture = try WitnessSetupFixture(logs: [log])
        let running = try RunningWitness(try fixture.open())

        // 200: the first checkpoint, from size 0; the body is one cosignature line that verifies.
        let first = try running.post("/add-checkpoint", try log.body(old: 0, size: 5))
        #expect(first.status == 200)
        #expect(first.header("content-type")?.hasPrefix("text/plain") == true)
        #expect(try fixture.verifies(first.body, on: try log.checkpoint(size: 5)))

        // 200: a consistent extension, and the same tree again (re-cosign).
        #expect(try running.post("/add-checkpoint", try log.body(old: 5, size: 8)).status == 200)
        #expect(try running.post("/add-checkpoint", try log.body(old: 8, size: 8)).status == 200)

        // 409: the old size is not the latest cosigned size; the body is that size.
        let conflict = try running.post("/add-checkpoint", try log.body(old: 5, size: 8))
        #expect(conflict.status == 409)
        #expect(text(conflict) == "8\n")
        #expect(conflict.header("content-type") == "text/x.tlog.size")

        // 403: signed by another key under the log's name.
        let impostor = try TestLog(origin: log.origin, size: 9)
        #expect(try running.post("/add-checkpoint", try impostor.body(old: 8, size: 9)).status == 403)

        // 404: an origin this witness does not witness.
        let stranger = try TestLog(origin: "pinion.test/other/log", size: 3)
        let unknown = try running.post("/add-checkpoint", try stranger.body(old: 0, size: 3))
        #expect(unknown.status == 404)

        // 422: a consistency proof that does not prove (a hash flipped).
        var grown = log
        grown.grow(to: 12)
        var bad = try grown.body(old: 8, size: 12)
        let proofStart = Array("old 8\n".utf8).count
        bad[proofStart] = bad[proofStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try running.post("/add-checkpoint", bad).status == 422)

        // 400: not an add-checkpoint body; 413: larger than the body limit.
        #expect(try running.post("/add-checkpoint", Array("hello\n".utf8)).status == 400)
        // The engine refuses the head before the witness sees a request; the answer is still
        // text, like every answer of the witness.
        let tooLarge = try running.post("/add-checkpoint", [UInt8](repeating: 0x41, count: 70_000))
        #expect(tooLarge.status == 413)
        #expect(tooLarge.header("content-type") == "text/plain; charset=utf-8")
        #expect(text(tooLarge).contains("--max-body-bytes"))
        #expect(tooLarge.header("connection") == "close")

        // 405: other methods; 404: other paths.
        let get = try running.send("GET", "/add-checkpoint")
        #expect(get.status == 405)
        #expect(get.header("allow") == "POST")
        #expect(try running.send("DELETE", checkpointRoute("x")).status == 405)
        #expect(try running.send("GET", "/v1/s/manifest.json").status == 404)
        #expect(try running.post("/add-checkpoint/", try grown.body(old: 8, size: 12)).status == 404)

        // Nothing refused changed the state: still size 8, the honest tree.
        #expect(running.server.witness.latestCheckpoint(origin: log.origin) == (try log.checkpoint(size: 8)))
        #expect(try running.post("/add-checkpoint", try grown.body(old: 8, size: 12)).status == 200)
    }

    /// A clock behind the latest cosignature's time (as `witness cosign --at` can set) must not sign a cosignature dated before it. The server answers
    /// 503 with Retry-After, keeps its state, and cosigns again once the clock has passed it.
    @Test func aClockBehindTheLatestCosignatureAnswers503() throws {
        var log = try TestLog(size: 4)
        let fixture = try WitnessSetupFixture(logs: [log])
        let now = Mutex<UInt64>(1_800_000_000)
        let running = try RunningWitness(try fixture.open(), clock: { now.withLock { $0 } })
        #expect(try running.post("/add-checkpoint", try log.body(old: 0, size: 4)).status == 200)
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin)))
        now.withLock { $0 = 1_799_999_000 }
        log.grow(to: 6)
        let behind = try running.post("/add-checkpoint", try log.body(old: 4, size: 6))
        #expect(behind.status == 503)
        #expect(behind.header("retry-after") == "5")
        #expect(text(behind).contains("clock is behind its latest cosignature (time 1800000000)"), "\(text(behind))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin))) == before)
        #expect(running.server.witness.latestCheckpoint(origin: log.origin)?.size == 4)
        now.withLock { $0 = 1_800_000_001 }
        #expect(try running.post("/add-checkpoint", try log.body(old: 4, size: 6)).status == 200)
    }

    @Test func servesTheLatestCosignedCheckpointPerOriginBelowAPathPrefix() throws {
        let log = try TestLog(origin: "pinion.test/scöpe:1/log", size: 4)
        let fixture = try WitnessSetupFixture(logs: [log])
        let running = try RunningWitness(try fixture.open(), pathPrefix: "/w1")
        let path = "/w1" + checkpointRoute(log.origin)
        // C2SP tlog-witness: the SHA-256 of the origin's UTF-8, in lowercase hex
        // (`printf %s 'pinion.test/scöpe:1/log' | sha256sum`).
        #expect(path == "/w1/98b58a92e284fcde9bb09d6afe2d51e699421c1458692ad54e8524d4c54b29d0/checkpoint")
        #expect(try running.send("GET", path).status == 404)  // nothing cosigned yet
        #expect(try running.post("/add-checkpoint", try log.body(old: 0, size: 4)).status == 404)  // no prefix
        let added = try running.post("/w1/add-checkpoint", try log.body(old: 0, size: 4))
        #expect(added.status == 200)

        let fetched = try running.send("GET", path)
        #expect(fetched.status == 200)
        let note = try SignedNote.parse(fetched.body)
        #expect(note.text == (try log.checkpoint(size: 4).text))
        // The log's signature as submitted, then the witness's cosignature: both verify.
        #expect(try note.verify(keys: [try log.verifierKey], verifier: witnessCrypto.verifier).count == 1)
        let cosigned = try note.verify(keys: [try fixture.verifierKey], verifier: witnessCrypto.verifier)
        #expect(cosigned.map(\.timestamp) == [1_800_000_000])
        #expect(Array(fetched.body.suffix(added.body.count)) == added.body)

        let head = try running.send("HEAD", path)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(try running.send("GET", "/w1" + checkpointRoute("pinion.test/unknown")).status == 404)
        #expect(try running.send("GET", path.uppercased().replacingOccurrences(of: "/W1/", with: "/w1/")).status == 404)
        #expect(try running.send("GET", "/w1/checkpoint/pinion.test%2Flog").status == 404, "not the old path")
        #expect(try running.send("GET", checkpointRoute(log.origin)).status == 404, "no prefix")
    }

    @Test func limitsTheRequestRatePerClientAddress() throws {
        let log = try TestLog(size: 2)
        let fixture = try WitnessSetupFixture(logs: [log])
        // Three tokens, one more every 1,000 minutes: no refill can happen during the test.
        let running = try RunningWitness(try fixture.open(), rateLimit: WitnessRateLimit(burst: 3, perMinute: 0.001))
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(try running.send("GET", checkpointRoute("x")).status) }
        #expect(statuses == [404, 404, 404, 429, 429])
        let limited = try running.post("/add-checkpoint", try log.body(old: 0, size: 2))
        #expect(limited.status == 429)
        #expect(Int(limited.header("retry-after") ?? "") ?? 0 >= 1)
        #expect(running.server.witness.latestCheckpoint(origin: log.origin) == nil)
    }

    @Test func refusesAServerSettingThatCannotWork() throws {
        let fixture = try WitnessSetupFixture(logs: [try TestLog(size: 1)])
        let witness = try fixture.open()
        let credentials = try ServerCredentials.shared()
        let configuration = PublisherConfiguration(
            repository: "", certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        for prefix in ["w1", "/w1/", "//w1", "/w 1", "/w1?x"] {
            #expect(throws: PublisherError.self, "prefix \(prefix)") {
                try WitnessServer(witness: witness, server: configuration, pathPrefix: prefix, accessLog: .disabled)
            }
        }
        #expect(throws: PublisherError.self) {
            try WitnessServer(
                witness: witness, server: configuration, rateLimit: WitnessRateLimit(burst: 0, perMinute: 1),
                accessLog: .disabled)
        }
        var metrics = configuration
        metrics.metricsListen = ("127.0.0.1", 0)
        #expect(throws: PublisherError.badSetting("metrics and report collection exist only for a published tree")) {
            try WitnessServer(witness: witness, server: metrics, accessLog: .disabled)
        }
    }

    @Test func cosignsAtMostOneOfTwoCheckpointsOfOneSizeAlsoAcrossRestarts() throws {
        let log = try TestLog(size: 10)
        let fork = log.forked(at: 6)
        #expect(try log.checkpoint(size: 10) != fork.checkpoint(size: 10))
        let fixture = try WitnessSetupFixture(logs: [log])
        do {
            let running = try RunningWitness(try fixture.open())
            #expect(try running.post("/add-checkpoint", try log.body(old: 0, size: 4)).status == 200)
            #expect(try running.post("/add-checkpoint", try log.body(old: 4, size: 10)).status == 200)
            // The fork at the same size, and extended from the same size: refused.
            #expect(try running.post("/add-checkpoint", try fork.body(old: 10, size: 10)).status == 422)
            var longer = fork
            longer.grow(to: 14)
            #expect(try running.post("/add-checkpoint", try longer.body(old: 10, size: 14)).status == 422)
        }
        // A new process on the same state: it remembers size 10 and the honest hash. The drained
        // server's worker threads let go of the first witness (and its lock) as they exit, so
        // the reopen waits for that, within a generous bound.
        let reopened = try fixture.openOnceReleased()
        #expect(reopened.latestCheckpoint(origin: log.origin) == (try log.checkpoint(size: 10)))
        let running = try RunningWitness(reopened)
        #expect(try running.post("/add-checkpoint", try fork.body(old: 10, size: 10)).status == 422)
        let fromZero = try running.post("/add-checkpoint", try fork.body(old: 0, size: 10))
        #expect(fromZero.status == 409)
        #expect(text(fromZero) == "10\n")
        #expect(try running.post("/add-checkpoint", try log.body(old: 10, size: 10)).status == 200)
    }
}

@Suite struct WitnessConcurrencyAndFailureTests {
    @Test func racingForksOfOneSizeGetOneTreeCosigned() throws {
        let log = try TestLog(size: 6)
        let forks = [log] + (0..<5).map { log.forked(at: $0) }
        let fixture = try WitnessSetupFixture(logs: [log])
        let witness = try fixture.open()
        let bodies = try forks.map { try $0.body(old: 0, size: 6) }
        let results = Mutex<[Checkpoint]>([])
        DispatchQueue.concurrentPerform(iterations: 48) { index in
            if case .cosigned(_, let checkpoint) = witness.addCheckpoint(
                bodies[index % bodies.count], timestamp: 1_800_000_000)
            {
                results.withLock { $0.append(checkpoint) }
            }
        }
        let cosigned = results.withLock { $0 }
        // The first request wins; every other fork of size 6 is then 409 (old 0) or refused.
        #expect(cosigned.count >= 1)
        #expect(Set(cosigned.map(\.rootHash)).count == 1)
        #expect(witness.latestCheckpoint(origin: log.origin) == cosigned.first)
    }

    @Test func answers503AndKeepsTheStateWhenTheStateCannotBeWritten() throws {
        var log = try TestLog(size: 3)
        let fixture = try WitnessSetupFixture(logs: [log])
        let running = try RunningWitness(try fixture.open())
        #expect(try running.post("/add-checkpoint", try log.body(old: 0, size: 3)).status == 200)
        // A directory where the state file goes: the rename over it fails, even for root.
        let path = fixture.stateFile(log.origin)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path + "/blocker", withIntermediateDirectories: true)
        log.grow(to: 5)
        let failed = try running.post("/add-checkpoint", try log.body(old: 3, size: 5))
        #expect(failed.status == 503)
        #expect(failed.header("retry-after") == "5")
        #expect(String(decoding: failed.body, as: UTF8.self).contains("cannot persist"))
        #expect(running.server.witness.latestCheckpoint(origin: log.origin) == (try log.checkpoint(size: 3)))
        // Once the disk is back, the same request is cosigned from the state it kept.
        try FileManager.default.removeItem(atPath: path)
        #expect(try running.post("/add-checkpoint", try log.body(old: 3, size: 5)).status == 200)
    }
}
