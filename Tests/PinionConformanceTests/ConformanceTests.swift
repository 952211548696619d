// The shared conformance suite (conformance/README.md) run against the Swift SDK, the parser corpus, and the fixtures' regeneration.

import Foundation
import PinionCore
import XCTest

/// The repository's conformance/ directory.
private let conformance = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("conformance")

private func caseDirectories(_ folder: String) throws -> [URL] {
    let root = conformance.appendingPathComponent(folder)
    return try FileManager.default.contentsOfDirectory(atPath: root.path).sorted().map {
        root.appendingPathComponent($0)
    }
}

final class ConformanceTests: XCTestCase {
    /// Every case of conformance/cases/ passes, and together they have at least 120 steps.
    func testEveryCasePasses() throws {
        var steps = 0
        let directories = try caseDirectories("cases")
        XCTAssertGreaterThanOrEqual(directories.count, 10)
        for directory in directories {
            do {
                let runner = try CaseRunner(directory: directory)
                XCTAssertNil(runner.pendingNote, "\(directory.lastPathComponent) is marked pending but sits in cases/")
                steps += try runner.run()
            } catch {
                XCTFail("\(error)")
            }
        }
        XCTAssertGreaterThanOrEqual(steps, 120)
        print("conformance: \(directories.count) cases, \(steps) steps passed")
    }

    /// Every case of conformance/cases/ through the Linux SDK's own update channel against an
    /// HTTPS publisher in `mode` (conformance/README.md, "Publisher modes").
    private func everyCaseOverHTTPS(_ mode: HTTPSPublisher.Mode) throws {
        let publisher = try HTTPSPublisher(mode: mode)
        defer { publisher.stop() }
        var steps = 0
        let directories = try caseDirectories("cases")
        for directory in directories {
            do {
                let runner = try CaseRunner(directory: directory)
                try runner.useHTTPS(publisher)
                steps += try runner.run()
            } catch {
                XCTFail("over HTTPS (\(mode)): \(error)")
            }
        }
        let (requests, connections) = publisher.counts()
        XCTAssertGreaterThan(requests, steps, "too few requests reached the publisher: \(publisher.serverErrors)")
        print(
            "conformance over HTTPS (\(mode)): \(directories.count) cases, \(steps) steps, \(requests) requests, "
                + "\(connections) connections")
    }

    /// Every case passes through the SDK's update channel against a publisher that closes every
    /// connection after one response (with a TLS close_notify), unannounced.
    func testEveryCasePassesAgainstAPublisherThatClosesEveryConnection() throws {
        try everyCaseOverHTTPS(.closeSilently)
    }

    /// Every case passes against a publisher that closes every connection after one response
    /// without a TLS close_notify (the body's length is given, so nothing is truncated).
    func testEveryCasePassesAgainstAPublisherThatClosesWithoutCloseNotify() throws {
        try everyCaseOverHTTPS(.closeAbruptly)
    }

    /// Every case passes against a keep-alive publisher that never closes after a response and
    /// drops its idle connections between refreshes.
    func testEveryCasePassesAgainstAPublisherThatDropsIdleConnections() throws {
        try everyCaseOverHTTPS(.keepAliveDroppingIdle)
    }

    /// Every case passes against a publisher that redirects every request (307) to another path
    /// on its own host: the update channel follows https redirects on the publisher's host.
    func testEveryCasePassesAgainstAPublisherThatRedirectsOnItsHost() throws {
        try everyCaseOverHTTPS(.redirectingOnTheSameHost)
    }

    /// Pending cases are run, counted and listed; those whose `supportedBy` lists `swift` must
    /// pass, the others do not fail the suite.
    func testPendingCasesAreReported() throws {
        let directories = try caseDirectories("cases-pending")
        for directory in directories {
            let runner = try CaseRunner(directory: directory)
            XCTAssertNotNil(runner.pendingNote, "\(directory.lastPathComponent) has no pending note")
            do {
                let steps = try runner.run()
                print("conformance: PENDING \(directory.lastPathComponent): passes (\(steps) steps); move it to cases/")
            } catch {
                if runner.supportedBySwift {
                    XCTFail("\(directory.lastPathComponent) lists swift in supportedBy: \(error)")
                }
                print("conformance: PENDING \(directory.lastPathComponent): \(error)")
            }
        }
        print("conformance: \(directories.count) pending cases")
    }

    /// The parser-differential corpus: the verdict and reason code of every document.
    func testParserCorpus() throws {
        let folder = conformance.appendingPathComponent("parser")
        let data = try Data(contentsOf: folder.appendingPathComponent("expectations.json"))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try XCTUnwrap(document["entries"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(entries.count, 40)
        for entry in entries {
            let file = try XCTUnwrap(entry["file"] as? String)
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
            let verdict: String
            var reason: String?
            do {
                _ = try ManifestPayload.parse(bytes, limits: .standard)
                verdict = "accept"
            } catch {
                verdict = "reject"
                reason = error.rule.reasonCode
            }
            XCTAssertEqual(verdict, entry["verdict"] as? String, file)
            XCTAssertEqual(reason, entry["reason"] as? String, file)
        }
    }

    /// The generator rebuilds every fixture byte for byte (Ed25519 is deterministic, keys are fixed).
    func testGeneratorReproducesTheCommittedFixtures() throws {
        let pinion = conformance.deletingLastPathComponent().appendingPathComponent(".build/debug/pinion").path
        guard FileManager.default.isExecutableFile(atPath: pinion) else {
            return XCTFail("\(pinion) is missing: swift build --product pinion first")
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", conformance.appendingPathComponent("generate").path, "--pinion", pinion, "--out", out.path,
        ]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "conformance/generate failed")
        XCTAssertEqual(try differences(out, conformance), [])
        // The comparison itself catches a one-byte change and an extra file.
        let probe = out.appendingPathComponent("cases/thresholds/steps.json")
        var bytes = try Data(contentsOf: probe)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: probe)
        try Data().write(to: out.appendingPathComponent("parser/extra.json"))
        XCTAssertEqual(
            try differences(out, conformance),
            ["cases/thresholds/steps.json differs", "parser: other files"])
    }

    /// What differs between two conformance trees' generated folders.
    private func differences(_ fresh: URL, _ committed: URL) throws -> [String] {
        var found: [String] = []
        for folder in ["cases", "cases-pending", "parser"] {
            let new = try files(under: fresh.appendingPathComponent(folder))
            let old = try files(under: committed.appendingPathComponent(folder))
            if new.keys.sorted() != old.keys.sorted() { found.append("\(folder): other files") }
            for name in old.keys.sorted() where new[name] != nil && new[name] != old[name] {
                found.append("\(folder)/\(name) differs")
            }
        }
        return found.sorted()
    }

    private func files(under root: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = root.appendingPathComponent(relative).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }
}

/// The size limit both SDKs share (docs/DESIGN.md §5: envelope 8 MiB), on documents built in memory
/// (jvm/.../conformance/SharedLimitsTest.java checks the same in the JVM SDK).
final class SharedLimitsTests: XCTestCase {
    private func padded(_ size: Int) throws -> [UInt8] {
        var bytes = Array(try Data(contentsOf: conformance.appendingPathComponent("parser/valid.json")))
        bytes += [UInt8](repeating: UInt8(ascii: " "), count: size - bytes.count)
        return bytes
    }

    /// A 5 MiB payload (whitespace after the value is allowed) is within the limit.
    func testFiveMebibytesAreWithinTheLimit() throws {
        XCTAssertEqual(Limits.standard.maxEnvelopeBytes, 8 * 1024 * 1024)
        XCTAssertNoThrow(try ManifestPayload.parse(try padded(5 * 1024 * 1024), limits: .standard))
    }

    /// One byte over 8 MiB is refused as too large.
    func testOneByteOverTheLimitIsRefused() throws {
        XCTAssertThrowsError(try ManifestPayload.parse(try padded(8 * 1024 * 1024 + 1), limits: .standard)) { error in
            guard case .tooLarge = (error as? FormatError)?.rule else { return XCTFail("\(error)") }
        }
    }
}
