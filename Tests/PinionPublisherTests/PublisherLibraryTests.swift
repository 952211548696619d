// `Publisher.publish` as a library (docs/DESIGN.md §9): what it returns, and the typed error
// of each refusal, with the tree unchanged afterwards.

import Foundation
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Testing

@Suite struct PublisherLibraryTests {
    let setup: Setup
    let repo: String
    var scope: String { repo + "/v1/com.example.app" }

    init() throws {
        setup = try Setup()
        repo = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-publisher-\(UUID())").path
    }

    func publish(_ envelopes: [[UInt8]], at time: Timestamp = t0) throws(PublishError) -> PublishOutcome {
        try Publisher.publish(envelopes, into: repo, at: time, crypto: sodium)
    }

    /// The error `body` throws, or nil (recorded as an issue) when it does not throw.
    func refusal(_ body: () throws(PublishError) -> PublishOutcome) -> PublishError? {
        do {
            let outcome = try body()
            Issue.record("published: \(outcome)")
            return nil
        } catch {
            return error
        }
    }

    func manifest(version: Int64 = 1, previous: [UInt8]? = nil, keys: [Ed25519SecretKey]? = nil) throws -> [UInt8] {
        var payload = manifestPayload(version: version)
        payload.previous = previous
        return try sign(.pins, payload.serialized(), with: keys ?? [setup.pinsKey]).serialized()
    }

    @Test func publishesRootsAndManifestsAndSaysWhat() throws {
        defer { try? FileManager.default.removeItem(atPath: repo) }
        let root = try publish([setup.rootEnvelope.serialized()])
        #expect(root.steps == [.root(version: 1, path: scope + "/root/1.json", alreadyPublished: false)])
        #expect(root.sequence == 1)
        let first = try manifest()
        let published = try publish([first])
        #expect(
            published.steps == [
                .manifest(version: 1, rootVersion: 1, expiresAt: t0.adding(seconds: 30 * day), alreadyPublished: false)
            ])
        #expect(published.sequence == 2)
        let again = try publish([first, setup.rootEnvelope.serialized()])
        #expect(
            again.steps == [
                .root(version: 1, path: scope + "/root/1.json", alreadyPublished: true),
                .manifest(version: 1, rootVersion: 1, expiresAt: t0.adding(seconds: 30 * day), alreadyPublished: true),
            ])
        #expect(again.sequence == nil)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: scope + "/manifest.json"))) == first)
    }

    @Test func refusalsAreTypedAndChangeNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: repo) }
        #expect(refusal { () throws(PublishError) in try publish([]) } == .usage("no envelope to publish"))
        guard case .refused(input: 0, _)? = refusal({ () throws(PublishError) in try publish([Array("{}".utf8)]) })
        else {
            Issue.record("garbage was not refused as input 0")
            return
        }
        // A refused publish leaves no directory behind.
        #expect(!FileManager.default.fileExists(atPath: repo))
        let first = try manifest()
        guard case .refused(nil, let noRoot)? = refusal({ () throws(PublishError) in try publish([first]) })
        else {
            Issue.record("a manifest before any root was not refused")
            return
        }
        #expect(noRoot.contains("publish root version 1 first"))
        _ = try publish([setup.rootEnvelope.serialized()])

        let forged = try manifest(keys: [try makeKey()])
        guard
            case .manifest(input: 0, let error, let chain)? = refusal({ () throws(PublishError) in try publish([forged])
            })
        else {
            Issue.record("a forged manifest was not refused")
            return
        }
        #expect(error == .thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1))
        #expect(chain.newest.version == 1)
        let late = t0.adding(seconds: 31 * day)
        guard
            case .manifest(input: 0, .manifestExpired, _)? = refusal({ () throws(PublishError) in
                try publish([first], at: late)
            })
        else {
            Issue.record("an expired manifest was not refused")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: scope + "/manifest.json"))

        // manifest.json replaced by a symbolic link: the tree needs repair, nothing is written.
        try FileManager.default.createSymbolicLink(
            atPath: scope + "/manifest.json", withDestinationPath: "/etc/hostname")
        guard case .refused(nil, let link)? = refusal({ () throws(PublishError) in try publish([first]) })
        else {
            Issue.record("a symbolic link in the tree was not refused")
            return
        }
        #expect(link.contains("not a regular file"))
        #expect(!FileManager.default.fileExists(atPath: scope + "/history/1.json"))
    }

    @Test func theFileLayerRefusesLinksAndSpecialFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-files-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/link.json", withDestinationPath: "/etc/hostname")
        #expect(throws: PublishFileError.wrongKind(path: directory + "/link.json", expected: "a regular file")) {
            try PublishFiles.readRegularIfPresent(directory + "/link.json", limit: 1024)
        }
        #expect(throws: PublishFileError.wrongKind(path: directory + "/link.json", expected: "a regular file")) {
            try PublishFiles.writeAtomically([1], to: directory + "/link.json", replace: true)
        }
        #expect(try PublishFiles.readRegularIfPresent(directory + "/absent.json", limit: 1024) == nil)
        try PublishFiles.writeAtomically(Array("12345".utf8), to: directory + "/file.json", replace: false)
        #expect(throws: PublishFileError.exists(path: directory + "/file.json")) {
            try PublishFiles.writeAtomically([1], to: directory + "/file.json", replace: false)
        }
        #expect(throws: PublishFileError.tooLarge(path: directory + "/file.json", limit: 4)) {
            try PublishFiles.readRegularIfPresent(directory + "/file.json", limit: 4)
        }
        #expect(try PublishFiles.readRegularIfPresent(directory + "/file.json", limit: 5) == Array("12345".utf8))
        #expect(throws: PublishFileError.wrongKind(path: directory + "/file.json", expected: "a directory")) {
            try PublishFiles.list(directory + "/file.json")
        }
    }
}
