// The auditor names the cause of a tampered tree: signatures are verified over the raw payload
// bytes before the strict parse, no version vanishes from the report, unverified content is
// never shown as the domain's pins, and a wrong --root is asked about first.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// Envelope bytes with its payload replaced and its signatures kept: a file changed after signing.
func resealed(_ bytes: [UInt8], _ edit: (inout [UInt8]) -> Void) throws -> [UInt8] {
    let envelope = try Envelope.parse(bytes)
    var payload = envelope.payload
    edit(&payload)
    return Envelope(kind: envelope.kind, payload: payload, signatures: envelope.signatures).serialized()
}

/// Replaces the first occurrence of `old` in `bytes` by `new`.
func replacing(_ old: String, with new: String, in bytes: [UInt8]) throws -> [UInt8] {
    let text = try #require(String(bytes: bytes, encoding: .utf8))
    let range = try #require(text.range(of: old), "\(old) not found")
    return Array(text.replacingCharacters(in: range, with: new).utf8)
}

/// The byte offsets of the value of a `"member": "..."` string in a JSON file.
func stringValueRange(_ member: String, in bytes: [UInt8]) throws -> Range<Int> {
    let text = try #require(String(bytes: bytes, encoding: .utf8))
    let key = try #require(text.range(of: "\"\(member)\": \""), "\(member) not found")
    let start = text.utf8.distance(from: text.startIndex, to: key.upperBound)
    let end = try #require(bytes[start...].firstIndex(of: UInt8(ascii: "\"")))
    return start..<end
}

/// `bytes` with the byte at `offset` replaced by another base64 or hex letter.
func flipped(_ bytes: [UInt8], at offset: Int) -> [UInt8] {
    var copy = bytes
    copy[offset] = copy[offset] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
    return copy
}

@Suite struct TamperedTreeTests {
    /// Five versions; version 3 adds a pin to api.example.com.
    func fiveVersions() throws -> HistoryFixture {
        let fixture = try simpleHistory(2)
        try fixture.extend(1) { $0.domains[0].pins.append(pin(3)) }
        try fixture.extend(2)
        return fixture
    }

    @Test func aLetterMadeUppercaseInASignedFileIsASignatureFailureAndTheVersionStays() throws {
        let directory = try TemporaryDirectory()
        let fixture = try fiveVersions()
        let tree = try fixture.write(to: directory.path)
        try tree.write(
            .history(3),
            try resealed(try tree.read(.history(3))) { payload in
                payload = (try? replacing("api.example.com", with: "Api.example.com", in: payload)) ?? payload
            })
        let report = try audit(fixture, repo: directory.path)
        #expect(!report.passed)
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(rulesAndVersions(causes) == ["manifest-signature@3"])
        let cause = try #require(causes.first)
        #expect(cause.file == "history/3.json")
        #expect(
            cause.message.hasPrefix(
                "the signature does not verify (the file was changed after signing, or signed by another key)"))
        #expect(cause.message.contains(fixture.pinsKeys[0][0].publicKey.keyID))
        // The strict format finding is about content nobody signed: secondary.
        let format = report.violations(.manifestFormat)
        #expect(format.map(\.version) == [3])
        #expect(format.first?.followsFrom == .unverifiedContent)
        #expect(report.violations(.indexEntryMismatch).map(\.followsFrom) == [.unverifiedContent])
        // Version 4's signed previous link proves the file changed after version 4 was signed.
        let link = report.violations(.previousLink)
        #expect(link.map(\.version) == [3])
        #expect(link.first?.file == "history/3.json")
        #expect(link.first?.followsFrom == .unverifiedContent)
        #expect(link.first?.message.contains("it changed after version 4 was signed") == true)
        // No version vanishes: version 3 is listed, failing.
        #expect(report.manifests.map(\.version) == [1, 2, 3, 4, 5])
        #expect(report.manifests.map(\.verified) == [true, true, false, true, true])
        #expect(report.manifests[2].failure == .manifestSignature)
    }

    @Test func tamperedContentThatStillParsesIsCheckedAndShownUntrusted() throws {
        let directory = try TemporaryDirectory()
        let fixture = try fiveVersions()
        let tree = try fixture.write(to: directory.path)
        // The attacker adds a pin of their own to version 4 and keeps its signature.
        var payload = fixture.manifests[3].payload
        payload.domains[0].pins.append(pin(66))
        payload.expiresAt = payload.expiresAt.adding(seconds: 400 * day)
        let original = fixture.manifests[3].envelope
        try tree.write(
            .history(4),
            Envelope(kind: .pins, payload: payload.serialized(), signatures: original.signatures).serialized())
        let report = try audit(fixture, repo: directory.path)
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(rulesAndVersions(causes) == ["manifest-signature@4"])
        // Every check that still applies runs, marked as following from the signature.
        let secondary = report.violations.filter { $0.followsFrom == .unverifiedContent }
        #expect(
            Set(rulesAndVersions(secondary)) == ["lifetime-cap@4", "index-entry-mismatch@4", "previous-link@4"])
        #expect(report.manifests[3].rootVersion == 1)
        #expect(!report.manifests[3].verified)
        // The timeline shows the forged pin as untrusted; version 5 is compared with version
        // 3, the last verified one, so the forged pin is never the domain's.
        let api = try #require(report.timeline("api.example.com"))
        let forged = api.entries.filter { $0.event == .pinAdded(pin(66)) }
        #expect(forged.map(\.version) == [4])
        #expect(forged.map(\.trusted) == [false])
        #expect(api.entries.filter(\.trusted).allSatisfy { $0.event != .pinAdded(pin(66)) })
        #expect(!api.entries.contains { $0.event == .pinRemoved(pin(66)) })
        #expect(api.entries.filter { $0.version == 5 }.isEmpty)
        // --json carries the mark on each event.
        guard case .object(let json) = report.json(), case .array(let domains)? = json["domains"],
            case .object(let domain)? = domains.first, case .array(let events)? = domain["events"]
        else {
            Issue.record("no domain events in the JSON report")
            return
        }
        let marks = events.compactMap { event -> String? in
            guard case .object(let members) = event, case .number(let version)? = members["version"],
                case .bool(let trusted)? = members["trusted"]
            else { return nil }
            return "\(version) \(trusted)"
        }
        #expect(marks.count == events.count)
        #expect(marks.contains("4 false"))
        #expect(!marks.contains("1 false"))
    }

    /// Version 1 changed after signing: nothing verified comes before it, so what it lists is
    /// a claim, never "added"; version 2, the first that verifies, is where the domain is added.
    @Test func anUnverifiedFirstVersionIsAClaimNotAnAddition() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        let tree = try fixture.write(to: directory.path)
        try tree.write(
            .history(1),
            try resealed(try tree.read(.history(1))) { payload in
                payload = Array(
                    String(decoding: payload, as: UTF8.self).replacingOccurrences(
                        of: "api.example.com", with: "api.example.org"
                    ).utf8)
            })
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations.filter { $0.followsFrom == nil }) == ["manifest-signature@1"])
        let claimed = try #require(report.timeline("api.example.org"))
        #expect(claimed.entries.count == 1)
        #expect(claimed.entries.allSatisfy { !$0.trusted })
        guard case .claimed? = claimed.entries.first?.event else {
            Issue.record("version 1's listing is \(String(describing: claimed.entries.first?.event)), not a claim")
            return
        }
        let api = try #require(report.timeline("api.example.com"))
        #expect(api.entries.first.map { ($0.version, $0.trusted) } ?? (0, false) == (2, true))
        guard case .added? = api.entries.first?.event else {
            Issue.record("version 2 does not add api.example.com: \(api.entries)")
            return
        }
        #expect(
            !report.domains.flatMap(\.entries).contains {
                !$0.trusted && { if case .added = $0.event { return true } else { return false } }($0)
            })
    }

    @Test func aForgedVersionBeyondTheIndexNamesTheKeyAndGetsNoCrashRecoveryHint() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(4)
        let tree = try fixture.write(to: directory.path)
        let rogue = try makeKey()
        var forged = fixture.next()
        forged.domains[0].pins = [pin(66)]
        try tree.write(.history(5), try sign(.pins, forged.serialized(), with: [rogue]).serialized())
        let report = try audit(fixture, repo: directory.path)
        #expect(report.warnings(.historyBeyondIndex).isEmpty)
        #expect(!report.warnings.contains { $0.message.contains("died mid-way") })
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(rulesAndVersions(causes) == ["manifest-foreign-key@5"])
        let cause = try #require(causes.first)
        #expect(cause.message.contains("forged or mis-signed"))
        #expect(cause.message.contains(rogue.publicKey.keyID))
        #expect(cause.message.contains("no root the audit trusts lists it"))
        #expect(report.manifests.last.map { ($0.version, $0.verified) } ?? (0, true) == (5, false))
        let api = try #require(report.timeline("api.example.com"))
        #expect(api.entries.filter { $0.version == 5 }.allSatisfy { !$0.trusted })
        #expect(api.entries.contains { $0.version == 5 && $0.event == .pinAdded(pin(66)) })
    }

    @Test func aManifestSignedByTheRootKeyIsMisSignedAndTheKeyIsNamedWithItsRole() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        try fixture.append(fixture.next(), signers: fixture.rootKeys[0])
        try fixture.extend(1)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["manifest-foreign-key@3"])
        let message = try #require(report.violations.first?.message)
        #expect(message.contains("\(fixture.rootKeys[0][0].publicKey.keyID) (a root key of root 1)"))
    }

    @Test func aWrongGivenRootIsAskedAboutFirstAndWhatFollowsIsGroupedUnderIt() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        let tree = try fixture.write(to: directory.path)
        // A fault of its own: the index entry of version 2 has another hash.
        var index = try tree.index()
        index.manifests[1].payloadSHA256 = [UInt8](repeating: 0xEE, count: 32)
        try tree.writeIndex(index)
        let other = try HistoryFixture()
        let anchor = try RootChain(anchor: other.rootBytes, crypto: sodium)
        let report = try Auditor.audit(
            anchor: anchor, source: DirectoryTreeSource(repo: directory.path, scope: fixture.scope), crypto: sodium,
            options: AuditOptions(at: fixture.auditTime))
        #expect(report.givenRootDiffers == 1)
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(rulesAndVersions(causes) == ["root-equivocation@1", "index-entry-mismatch@2"])
        let grouped = report.violations.filter { $0.followsFrom == .givenRoot }
        #expect(
            rulesAndVersions(grouped) == ["manifest-foreign-key@1", "manifest-foreign-key@2", "manifest-foreign-key@3"])
    }

    @Test func aFaultTheWrongRootHidesIsListedAsTheTreesRootShowsIt() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(4)
        let tree = try fixture.write(to: directory.path)
        try tree.write(.history(3), try resealed(try tree.read(.history(3))) { $0[$0.count / 2] ^= 0x20 })
        let other = try HistoryFixture()
        let report = try Auditor.audit(
            anchor: try RootChain(anchor: other.rootBytes, crypto: sodium),
            source: DirectoryTreeSource(repo: directory.path, scope: fixture.scope), crypto: sodium,
            options: AuditOptions(at: fixture.auditTime))
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(rulesAndVersions(causes) == ["root-equivocation@1", "manifest-signature@3"])
        #expect(causes.last?.message.hasPrefix("with the tree's own root 1: the signature does not verify") == true)
        // Under the given root version 3 is signed by an unknown key: that follows from it.
        #expect(report.violations(.manifestForeignKey).map(\.followsFrom) == Array(repeating: .givenRoot, count: 4))
        #expect(report.violations(.indexEntryMismatch).map(\.followsFrom) == [.unverifiedContent])
    }

    @Test func aTamperedTreeRootIsNotMistakenForAnotherGivenRoot() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        let tree = try fixture.write(to: directory.path)
        try tree.write(.root(1), try resealed(try tree.read(.root(1))) { $0[$0.count / 2] ^= 1 })
        let report = try audit(fixture, repo: directory.path)
        #expect(report.givenRootDiffers == nil)
        #expect(report.violations(.rootSignature).map(\.version) == [1])
    }

    /// One tampering of a clean five-version tree (root 1, then root 2 from version 3 on) and
    /// the cause the audit must name: its rule, version and file, as a finding of its own.
    struct Tampering: CustomStringConvertible, Sendable {
        let name: String
        let rule: AuditRule
        let version: Int64?
        let file: String
        let apply: @Sendable (HistoryFixture, PublishedTreeFiles) throws -> Void
        /// Whether every history version must still be listed.
        var keepsEveryVersion = true
        var description: String { name }
    }

    static func byteInString(
        _ member: String, of file: TreeFile, at fraction: Double, occurrence: Int = 0
    ) -> @Sendable (HistoryFixture, PublishedTreeFiles) throws -> Void {
        { _, tree in
            let bytes = try tree.read(file)
            var range = try stringValueRange(member, in: bytes)
            for _ in 0..<occurrence {
                let rest = Array(bytes[range.upperBound...])
                let next = try stringValueRange(member, in: rest)
                range = (next.lowerBound + range.upperBound)..<(next.upperBound + range.upperBound)
            }
            let offset = range.lowerBound + Int(Double(range.count - 4) * fraction)
            try tree.write(file, flipped(bytes, at: offset))
        }
    }

    static let tamperings: [Tampering] = [
        // Single bytes of a history file's payload, signature and key id.
        Tampering(
            name: "payload byte at 10%", rule: .manifestSignature, version: 3, file: "history/3.json",
            apply: byteInString("payload", of: .history(3), at: 0.1)),
        Tampering(
            name: "payload byte at 35%", rule: .manifestSignature, version: 3, file: "history/3.json",
            apply: byteInString("payload", of: .history(3), at: 0.35)),
        Tampering(
            name: "payload byte at 60%", rule: .manifestSignature, version: 2, file: "history/2.json",
            apply: byteInString("payload", of: .history(2), at: 0.6)),
        Tampering(
            name: "payload byte at 95%", rule: .manifestSignature, version: 1, file: "history/1.json",
            apply: byteInString("payload", of: .history(1), at: 0.95)),
        Tampering(
            name: "payload byte of the latest", rule: .manifestSignature, version: 5, file: "history/5.json",
            apply: byteInString("payload", of: .history(5), at: 0.5)),
        Tampering(
            name: "signature byte", rule: .manifestSignature, version: 3, file: "history/3.json",
            apply: byteInString("sig", of: .history(3), at: 0.5)),
        Tampering(
            name: "first signature byte", rule: .manifestSignature, version: 4, file: "history/4.json",
            apply: byteInString("sig", of: .history(4), at: 0)),
        Tampering(
            name: "key id byte", rule: .manifestForeignKey, version: 3, file: "history/3.json",
            apply: byteInString("keyid", of: .history(3), at: 0.5)),
        Tampering(
            name: "payloadType byte", rule: .manifestFormat, version: 3, file: "history/3.json",
            apply: byteInString("payloadType", of: .history(3), at: 0.5)),
        Tampering(
            name: "envelope brace", rule: .manifestFormat, version: 2, file: "history/2.json",
            apply: { _, tree in
                var bytes = try tree.read(.history(2))
                bytes[0] = UInt8(ascii: "[")
                try tree.write(.history(2), bytes)
            }),
        // Single bytes of the other files.
        Tampering(
            name: "manifest.json payload byte", rule: .manifestSignature, version: 5, file: "manifest.json",
            apply: byteInString("payload", of: .manifest, at: 0.5)),
        Tampering(
            name: "manifest.json signature byte", rule: .manifestSignature, version: 5, file: "manifest.json",
            apply: byteInString("sig", of: .manifest, at: 0.5)),
        Tampering(
            name: "index payloadSHA256 byte", rule: .indexEntryMismatch, version: 2, file: "index.json",
            apply: byteInString("payloadSHA256", of: .index, at: 0.5, occurrence: 1)),
        Tampering(
            name: "root 1 payload byte", rule: .rootSignature, version: 1, file: "root/1.json",
            apply: byteInString("payload", of: .root(1), at: 0.5)),
        Tampering(
            name: "root 2 payload byte", rule: .rootSignature, version: 2, file: "root/2.json",
            apply: byteInString("payload", of: .root(2), at: 0.5)),
        Tampering(
            name: "root 2 signature byte", rule: .rootSignature, version: 2, file: "root/2.json",
            apply: byteInString("sig", of: .root(2), at: 0.5)),
        // Whole files.
        Tampering(
            name: "history file replaced by its predecessor", rule: .historyFileName, version: 3,
            file: "history/3.json",
            apply: { _, tree in try tree.write(.history(3), try tree.read(.history(2))) }),
        Tampering(
            name: "history file deleted", rule: .historyMissing, version: 3, file: "history/3.json",
            apply: { _, tree in try tree.remove(.history(3)) }, keepsEveryVersion: false),
        Tampering(
            name: "history file truncated", rule: .manifestFormat, version: 4, file: "history/4.json",
            apply: { _, tree in
                let bytes = try tree.read(.history(4))
                try tree.write(.history(4), Array(bytes.prefix(bytes.count / 2)))
            }),
        Tampering(
            name: "history file re-signed by a rogue key", rule: .manifestForeignKey, version: 3,
            file: "history/3.json",
            apply: { fixture, tree in
                try tree.write(
                    .history(3),
                    try sign(.pins, fixture.manifests[2].payload.serialized(), with: [try makeKey()]).serialized())
            }),
        Tampering(
            name: "history file re-signed by the old pins key", rule: .manifestForeignKey, version: 4,
            file: "history/4.json",
            apply: { fixture, tree in
                try tree.write(
                    .history(4),
                    try sign(.pins, fixture.manifests[3].payload.serialized(), with: fixture.pinsKeys[0]).serialized())
            }),
        Tampering(
            name: "another version 3, validly signed", rule: .indexEntryMismatch, version: 3, file: "index.json",
            apply: { fixture, tree in
                var payload = fixture.manifests[2].payload
                payload.domains[0].pins.append(pin(77))
                try tree.write(
                    .history(3), try sign(.pins, payload.serialized(), with: fixture.pinsKeys[1]).serialized())
            }),
        Tampering(
            name: "manifest.json replaced by an older version", rule: .manifestNotLatest, version: 4,
            file: "manifest.json",
            apply: { _, tree in try tree.write(.manifest, try tree.read(.history(4))) }),
        Tampering(
            name: "index.json deleted", rule: .indexMissing, version: nil, file: "index.json",
            apply: { _, tree in try tree.remove(.index) }),
        Tampering(
            name: "root 2 deleted", rule: .manifestRootMissing, version: 3, file: "history/3.json",
            apply: { _, tree in try tree.remove(.root(2)) }),
    ]

    /// Root 1, versions 1-2; root 2 with a new pins key; versions 3-5 under it.
    static func rotatedFiveVersions() throws -> HistoryFixture {
        let fixture = try simpleHistory(2)
        try fixture.rotate(pinsKeys: [try makeKey()])
        try fixture.extend(3)
        return fixture
    }

    @Test func theCleanTreeOfTheTamperingsPasses() throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.rotatedFiveVersions()
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.passed, "\(report.violations)")
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        #expect(report.manifests.map(\.verified) == [true, true, true, true, true])
    }

    @Test(arguments: tamperings)
    func eachTamperingFailsTheAuditWithItsCause(_ tampering: Tampering) throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.rotatedFiveVersions()
        let tree = try fixture.write(to: directory.path)
        try tampering.apply(fixture, tree)
        let report = try audit(fixture, repo: directory.path)
        #expect(!report.passed)
        let causes = report.violations.filter { $0.followsFrom == nil }
        #expect(
            causes.contains {
                $0.rule == tampering.rule && $0.version == tampering.version && $0.file == tampering.file
            },
            "\(tampering.name): \(report.violations)")
        if tampering.keepsEveryVersion {
            #expect(report.manifests.map(\.version) == [1, 2, 3, 4, 5], "\(tampering.name)")
        }
        // A signature that does not verify never comes with the crash-recovery hint.
        #expect(report.warnings(.historyBeyondIndex).isEmpty)
    }

    @Test func thereAreAtLeastTwentyTamperings() {
        #expect(Self.tamperings.count >= 20)
    }
}
