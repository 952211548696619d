// `pinion audit` and `pinion diff` run in-process: exit codes, the table, --json, and the
// messages for hostile or wrong input.

import Foundation
import PinionAudit
import PinionCLI
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// A written fixture and the given root's file.
struct AuditWorld {
    let directory: TemporaryDirectory
    let fixture: HistoryFixture
    let tree: PublishedTreeFiles
    var rootFile: String { directory.path + "/given-root.json" }

    init(_ fixture: HistoryFixture) throws {
        directory = try TemporaryDirectory()
        self.fixture = fixture
        tree = try fixture.write(to: directory.path + "/tree")
        try Data(fixture.rootBytes).write(to: URL(fileURLWithPath: directory.path + "/given-root.json"))
    }

    func audit(_ extra: [String] = []) -> CommandResult {
        runPinion(
            ["audit", "--root", rootFile, directory.path + "/tree", "--at", fixture.auditTime.description] + extra)
    }
}

@Suite struct AuditCommandTests {
    @Test func cleanTreeExitsZeroWithTheTimelineTable() throws {
        let world = try AuditWorld(try cleanFiftyVersions())
        let result = world.audit()
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("result      PASS: every rule holds (0 warning(s))"))
        #expect(result.out.contains("roots (3)"))
        #expect(result.out.contains("(pins role changed)"))
        #expect(result.out.contains("manifests (50, versions 1...50; manifest.json holds version 50)"))
        // Runs of versions with their root and signer.
        let newPins = world.fixture.pinsKeys[2][0].publicKey.keyID
        #expect(result.out.split(separator: "\n").contains { $0.hasPrefix("  35-50 ") && $0.hasSuffix(newPins) })
        #expect(result.out.contains("    v10     \(t0.adding(seconds: 10 * day))  + pin \(pin(3))"))
        #expect(result.out.contains("report-only (was enforce)") == false)
        #expect(result.out.contains("enforce (was report-only)"))
        #expect(result.out.contains("no gap: an unexpired manifest existed"))
        #expect(result.err.isEmpty)
    }

    @Test func violationsExitOneAndAreAllListed() throws {
        let fixture = try simpleHistory(4)
        try fixture.extend(1) { $0.previous = [UInt8](repeating: 3, count: 32) }
        try fixture.extend(1) { $0.issuedAt = t0 }
        let world = try AuditWorld(fixture)
        let result = world.audit()
        #expect(result.status == 1)
        #expect(result.out.contains("violations (2)"))
        #expect(result.out.contains("history/5.json (version 5): [previous-link]"))
        #expect(result.out.contains("history/6.json (version 6): [issued-at-backwards]"))
        #expect(result.out.contains("result      FAIL: 2 violation(s)"))
        #expect(result.err.contains("failed: 2 violation(s), listed above"))
    }

    @Test func jsonHasTheSameFacts() throws {
        let fixture = try simpleHistory(3)
        try fixture.extend(1) { $0.revokedPins = [pin(9)] }
        try fixture.extend(1) { $0.revokedPins = [] }
        try fixture.append(fixture.next(), signers: [try makeKey()])
        let world = try AuditWorld(fixture)
        let result = world.audit(["--json"])
        #expect(result.status == 1)
        guard case .object(let json) = try StrictJSONParser.parse(Array(result.out.utf8), limits: Limits.standard.json)
        else {
            Issue.record("not a JSON object")
            return
        }
        #expect(json["result"] == .string("fail"))
        #expect(json["scope"] == .string("com.example.app"))
        guard case .array(let violations)? = json["violations"], case .array(let warnings)? = json["warnings"],
            case .array(let manifests)? = json["manifests"]
        else {
            Issue.record("missing arrays")
            return
        }
        #expect(manifests.count == 6)
        if case .object(let forged)? = manifests.last {
            #expect(forged["verified"] == .bool(false))
            #expect(forged["failure"] == .string("manifest-foreign-key"))
        }
        #expect(json["givenRootDiffers"] == .null)
        #expect(violations.count == 1)
        if case .object(let violation)? = violations.first {
            #expect(violation["rule"] == .string("manifest-foreign-key"))
            #expect(violation["version"] == .number("6"))
            #expect(violation["file"] == .string("history/6.json"))
            #expect(violation["followsFrom"] == .null)
            #expect(violation["advice"] == .string(AuditRule.manifestForeignKey.advice))
        }
        if case .object(let warning)? = warnings.first {
            #expect(warning["rule"] == .string("revocation-lifted"))
            #expect(warning["version"] == .number("5"))
        }
        #expect(result.err.contains("listed in the JSON output"))
    }

    @Test func liftedRevocationExitsZeroWithAWarning() throws {
        let fixture = try simpleHistory(2)
        try fixture.extend(1) { $0.revokedPins = [pin(9)] }
        try fixture.extend(1) { $0.revokedPins = [] }
        let world = try AuditWorld(fixture)
        let result = world.audit()
        #expect(result.status == 0)
        #expect(result.out.contains("history/4.json (version 4): [revocation-lifted]"))
        #expect(result.out.contains("PASS: every rule holds (1 warning(s))"))
    }

    @Test func usageAndIOErrors() throws {
        let world = try AuditWorld(try simpleHistory(2))
        let tree = world.directory.path + "/tree"
        #expect(runPinion(["audit", tree]).status == 2)
        #expect(runPinion(["audit", "--root", world.rootFile]).status == 2)
        let manifestAsRoot = runPinion(["audit", "--root", world.tree.path(.manifest), tree])
        #expect(manifestAsRoot.status == 2)
        #expect(manifestAsRoot.err.contains("expected application/vnd.pinion.root+json"))
        let http = runPinion(["audit", "--root", world.rootFile, "http://127.0.0.1:1/"])
        #expect(http.status == 2)
        #expect(http.err.contains("https"))
        #expect(runPinion(["audit", "--root", world.rootFile, tree, "--cafile", world.rootFile]).status == 2)
        let missing = runPinion(["audit", "--root", world.rootFile, world.directory.path + "/nowhere"])
        #expect(missing.status == 3)
        #expect(missing.err.contains("nowhere"))
        let noScope = runPinion(["audit", "--root", world.rootFile, world.directory.path])
        #expect(noScope.status == 3)
        #expect(noScope.err.contains("no tree published for scope com.example.app"))
        let unreachable = runPinion(["audit", "--root", world.rootFile, "https://127.0.0.1:1/"])
        #expect(unreachable.status == 3)
    }

    @Test func hostileTreeGivesClearMessages() throws {
        let world = try AuditWorld(try simpleHistory(3))
        try world.tree.remove(.index)
        try world.tree.write(.history(2), Array("{\"payloadType\": 7}".utf8))
        try FileManager.default.createSymbolicLink(
            atPath: world.tree.path(.history(4)), withDestinationPath: world.tree.path(.history(3)))
        let result = world.audit()
        #expect(result.status == 1)
        #expect(result.out.contains("index.json: [index-missing]"))
        #expect(result.out.contains("history/2.json (version 2): [manifest-format] payloadType: expected a string"))
        #expect(result.out.contains("history/4.json (version 4): [file-refused] is a symbolic link"))
    }

    @Test func eachFindingPrintsItsAdviceAndTamperedContentIsMarked() throws {
        let fixture = try simpleHistory(2)
        try fixture.extend(2)
        let world = try AuditWorld(fixture)
        var payload = fixture.manifests[2].payload
        payload.domains[0].pins.append(pin(66))
        let kept = fixture.manifests[2].envelope.signatures
        try world.tree.write(
            .history(3), Envelope(kind: .pins, payload: payload.serialized(), signatures: kept).serialized())
        let result = world.audit()
        #expect(result.status == 1)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let found = lines.firstIndex {
            $0.hasPrefix(
                "  history/3.json (version 3): [manifest-signature] the signature does not verify (the file was changed after signing, or signed by another key)"
            )
        }
        let cause = try #require(found, "\(result.out)")
        #expect(lines[cause + 1] == "      " + AuditRule.manifestSignature.advice)
        #expect(lines[cause + 2].hasPrefix("    (about content whose signature does not verify"))
        #expect(lines[cause + 3].hasPrefix("      index.json (version 3): [index-entry-mismatch]"))
        #expect(lines[cause + 4] == "          " + AuditRule.indexEntryMismatch.advice)
        #expect(
            result.out.contains("manifests (4, versions 1...4, 1 FAILING verification; manifest.json holds version 4)"))
        #expect(lines.contains { $0.hasPrefix("  3 ") && $0.contains("FAILING [manifest-signature]") })
        #expect(result.out.contains("UNTRUSTED (v3 failed verification) + pin \(pin(66))"))
        #expect(!result.out.contains("revocations\n"))
    }

    @Test func aWrongRootIsAskedAboutOnTheFirstLine() throws {
        let world = try AuditWorld(try simpleHistory(2))
        let other = try HistoryFixture()
        try Data(other.rootBytes).write(to: URL(fileURLWithPath: world.rootFile))
        let result = world.audit()
        #expect(result.status == 1)
        #expect(
            result.out.hasPrefix(
                "the tree's root 1 differs from the root you gave: is this the root your app embeds?\n"),
            "\(result.out)")
        let lines = result.out.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex { $0.hasPrefix("  root/1.json (version 1): [root-equivocation]") })
        #expect(
            lines[heading + 2]
                == "    (follows from the root you gave: it does not occur with the tree's own root 1):")
        #expect(lines[heading + 3].hasPrefix("      history/1.json (version 1): [manifest-foreign-key]"))
        let json = world.audit(["--json"])
        guard case .object(let object) = try StrictJSONParser.parse(Array(json.out.utf8), limits: Limits.standard.json),
            case .array(let violations)? = object["violations"]
        else {
            Issue.record("not a JSON report")
            return
        }
        #expect(object["givenRootDiffers"] == .number("1"))
        let follows = violations.compactMap { value -> JSONValue? in
            guard case .object(let finding) = value else { return nil }
            return finding["followsFrom"]
        }
        #expect(follows == [.null, .string("given-root"), .string("given-root")])
    }
}

@Suite struct DiffCommandTests {
    func files() throws -> (TemporaryDirectory, HistoryFixture) {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(1)
        try fixture.extend(1) {
            $0.domains[0].pins.append(pin(3))
            $0.domains[0].pins.removeAll { $0 == pin(1) }
            $0.domains[0].enforce = false
            $0.domains.append(.init(name: "new.example.com", includeSubdomains: true, pins: [pin(7), pin(8)]))
            $0.revokedPins = [pin(1)]
        }
        for (offset, manifest) in fixture.manifests.enumerated() {
            try Data(manifest.envelope.serialized()).write(
                to: URL(fileURLWithPath: directory.path + "/m\(offset + 1).json"))
            try Data(manifest.payload.serialized()).write(
                to: URL(fileURLWithPath: directory.path + "/p\(offset + 1).json"))
        }
        try Data(fixture.rootBytes).write(to: URL(fileURLWithPath: directory.path + "/root.json"))
        return (directory, fixture)
    }

    @Test func showsEveryChangeBetweenTwoManifests() throws {
        let (directory, _) = try files()
        let result = runPinion(["diff", directory.path + "/m1.json", directory.path + "/p2.json"])
        #expect(result.status == 0, "\(result.err)")
        let out = result.out
        #expect(out.contains("version     1 -> 2"))
        #expect(out.contains("rootVersion 1 (unchanged)"))
        #expect(out.contains("previous    NEW chains to OLD"))
        #expect(out.contains("  + new.example.com  enforce, includeSubdomains true"))
        #expect(
            out.contains(
                "  ~ api.example.com\n      + pin \(pin(3))\n      - pin \(pin(1))\n      enforce true -> false"))
        #expect(out.contains("  + \(pin(1))  revoked"))
    }

    @Test func jsonDiffAndSignatures() throws {
        let (directory, _) = try files()
        let result = runPinion(["diff", directory.path + "/m2.json", directory.path + "/m1.json", "--json"])
        #expect(result.status == 0)
        guard case .object(let json) = try StrictJSONParser.parse(Array(result.out.utf8), limits: Limits.standard.json)
        else {
            Issue.record("not a JSON object")
            return
        }
        #expect(json["kind"] == .string("pins"))
        #expect(json["chainsToOld"] == .bool(false))
        #expect(json["revocationsLifted"] == .array([.string(pin(1).description)]))
        #expect(json["domainsRemoved"] == .array([.string("new.example.com")]))
        #expect(json["payloadIdentical"] == .bool(false))
    }

    @Test func refusesARootAgainstAManifestAndOtherScopes() throws {
        let (directory, _) = try files()
        let mixed = runPinion(["diff", directory.path + "/root.json", directory.path + "/m1.json"])
        #expect(mixed.status == 2)
        #expect(mixed.err.contains("cannot compare a root with a manifest"))
        let other = try HistoryFixture(scope: "org.example.other")
        try other.extend(1)
        try Data(other.manifests[0].envelope.serialized()).write(
            to: URL(fileURLWithPath: directory.path + "/other.json"))
        let scopes = runPinion(["diff", directory.path + "/m1.json", directory.path + "/other.json"])
        #expect(scopes.status == 2)
        #expect(scopes.err.contains("different scopes (\"com.example.app\" and \"org.example.other\")"))
    }

    @Test func comparesTwoRoots() throws {
        let directory = try TemporaryDirectory()
        let fixture = try HistoryFixture()
        try fixture.rotate(pinsKeys: [try makeKey()])
        for (offset, envelope) in fixture.rootEnvelopes.enumerated() {
            try Data(envelope.serialized()).write(to: URL(fileURLWithPath: directory.path + "/r\(offset + 1).json"))
        }
        let result = runPinion(["diff", directory.path + "/r1.json", directory.path + "/r2.json"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("version     1 -> 2"))
        #expect(result.out.contains("pins role   changed\n  + keyid \(fixture.pinsKeys[1][0].publicKey.keyID)"))
        #expect(result.out.contains("  - keyid \(fixture.pinsKeys[0][0].publicKey.keyID)"))
        #expect(result.out.contains("root role   no change"))
    }
}
