// The auditor on trees built at test time: a clean history passes, and each rule of
// docs/DESIGN.md §10 that a tree breaks is named with its version and file.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// 50 versions, root rotations before versions 20 (new root key) and 35 (new pins key),
/// and pin, flag, domain and revocation changes along the way.
func cleanFiftyVersions() throws -> HistoryFixture {
    let fixture = try HistoryFixture()
    func upTo(_ version: Int64, edit: (inout ManifestPayload) -> Void = { _ in }) throws {
        while Int64(fixture.manifests.count) < version - 1 { try fixture.extend(1) }
        try fixture.extend(1, edit: edit)
    }
    try upTo(5) { $0.domains.append(.init(name: "cdn.example.com", enforce: false, pins: [pin(5), pin(6)])) }
    try upTo(10) { $0.domains[0].pins.append(pin(3)) }
    try upTo(12) {
        $0.domains[0].pins.removeAll { $0 == pin(1) }
        $0.revokedPins.append(pin(1))
    }
    while fixture.manifests.count < 19 { try fixture.extend(1) }
    try fixture.rotate(rootKeys: [try makeKey()])
    try upTo(25) { $0.domains[1].enforce = true }
    try upTo(30) { $0.domains[0].includeSubdomains = true }
    while fixture.manifests.count < 34 { try fixture.extend(1) }
    try fixture.rotate(pinsKeys: [try makeKey()])
    try upTo(40) { $0.domains.removeAll { $0.name == "cdn.example.com" } }
    while fixture.manifests.count < 50 { try fixture.extend(1) }
    return fixture
}

/// A clean history of `count` versions under root 1.
func simpleHistory(_ count: Int) throws -> HistoryFixture {
    let fixture = try HistoryFixture()
    try fixture.extend(count)
    return fixture
}

func rulesAndVersions(_ findings: [AuditFinding]) -> [String] {
    findings.map { "\($0.rule.rawValue)@\($0.version.map(String.init) ?? "-")" }
}

@Suite struct AuditTests {
    @Test func cleanHistoryOfFiftyVersionsWithRotationsPasses() throws {
        let directory = try TemporaryDirectory()
        let fixture = try cleanFiftyVersions()
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        #expect(report.passed)
        #expect(report.roots.map(\.version) == [1, 2, 3])
        #expect(report.roots.map(\.pinsRoleChanged) == [false, false, true])
        #expect(report.manifests.map(\.version) == Array(1...50))
        #expect(report.manifestJSONVersion == 50)
        #expect(report.gaps.isEmpty)
        // Signers: the pins key of root 1 (unchanged in root 2), then root 3's new key.
        let oldPins = fixture.pinsKeys[0][0].publicKey.keyID
        let newPins = fixture.pinsKeys[2][0].publicKey.keyID
        #expect(report.manifests[33].signers == [oldPins])
        #expect(report.manifests[34].signers == [newPins])
        #expect(report.manifests[34].rootVersion == 3)
        // Timeline of each domain, with versions and dates.
        let api = try #require(report.timeline("api.example.com"))
        let apiEvents = api.entries.map { "\($0.version) \($0.event)" }
        #expect(
            apiEvents.first == "1 \(DomainEvent.added(enforce: true, includeSubdomains: false, pins: [pin(1), pin(2)]))"
        )
        #expect(apiEvents.contains("10 \(DomainEvent.pinAdded(pin(3)))"))
        #expect(apiEvents.contains("12 \(DomainEvent.pinRemoved(pin(1)))"))
        #expect(apiEvents.contains("12 \(DomainEvent.pinRevoked(pin(1)))"))
        #expect(apiEvents.contains("30 \(DomainEvent.includeSubdomainsChanged(true))"))
        #expect(api.entries.first { $0.version == 10 }?.date == t0.adding(seconds: 10 * day))
        let cdn = try #require(report.timeline("cdn.example.com"))
        #expect(
            cdn.entries.map(\.event) == [
                .added(enforce: false, includeSubdomains: false, pins: [pin(5), pin(6)]), .enforceChanged(true),
                .removed,
            ])
        #expect(cdn.entries.map(\.version) == [5, 25, 40])
        #expect(
            report.revocations == [
                RevocationEvent(version: 12, date: t0.adding(seconds: 12 * day), pin: pin(1), lifted: false)
            ])
    }

    @Test func manifestSignedByAKeyOutsideThePinsRoleIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(5)
        let intruder = try makeKey()
        try fixture.append(fixture.next(), signers: [intruder])
        try fixture.extend(2)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["manifest-foreign-key@6"])
        let finding = try #require(report.violations.first)
        #expect(finding.file == "history/6.json")
        #expect(finding.message.contains(intruder.publicKey.keyID))
        #expect(finding.message.contains("pins role of root 1"))
        #expect(report.manifests[5].signers.isEmpty)
    }

    @Test func missingVersionIsAGap() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(10)
        let tree = try fixture.write(to: directory.path)
        try tree.remove(.history(6))
        var index = try tree.index()
        index.manifests.removeAll { $0.version == 6 }
        try tree.writeIndex(index)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.violations(.versionGap).map(\.version) == [6])
        #expect(report.violations(.versionGap).first?.message.contains("version 6 is missing") == true)
        #expect(report.violations(.indexOrder).map(\.version) == [7])
        // previous of version 7 cannot be checked across the gap: no second finding for it.
        #expect(report.violations(.previousLink).isEmpty)
    }

    @Test func versionPublishedTwiceWithDifferentPayloadsIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(10)
        let tree = try fixture.write(to: directory.path)
        var other = fixture.manifests[9].payload
        other.expiresAt = other.expiresAt.adding(seconds: day)
        let otherEnvelope = try sign(.pins, other.serialized(), with: fixture.pinsKeys[0])
        try tree.write(.manifest, otherEnvelope.serialized())
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["version-published-twice@10"])
        #expect(report.violations.first?.file == "manifest.json")
    }

    @Test func brokenPreviousLinkIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(6)
        try fixture.extend(1) { $0.previous = [UInt8](repeating: 7, count: 32) }
        try fixture.extend(3)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["previous-link@7"])
        #expect(report.violations.first?.message.contains("version 6's payload") == true)
    }

    @Test func issuedAtGoingBackwardsIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(6)
        try fixture.extend(1) { $0.issuedAt = t0.adding(seconds: 2 * day) }
        try fixture.extend(2)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["issued-at-backwards@7"])
    }

    @Test func rootVersionGoingBackwardsIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(4)
        try fixture.rotate()
        try fixture.extend(3)
        try fixture.extend(1) { $0.rootVersion = 1 }
        try fixture.extend(2)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["root-version-backwards@8"])
        #expect(report.manifests[7].rootVersion == 1)
    }

    @Test func liftedRevocationIsAWarningOnly() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        try fixture.extend(1) { $0.revokedPins = [pin(9)] }
        try fixture.extend(1) { $0.revokedPins = [] }
        try fixture.extend(1)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.passed)
        #expect(rulesAndVersions(report.warnings) == ["revocation-lifted@5"])
        #expect(report.revocations.map(\.lifted) == [false, true])
        #expect(report.revocations.map(\.version) == [4, 5])
    }

    @Test func indexEntryWithAnotherHashIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(8)
        let tree = try fixture.write(to: directory.path)
        var index = try tree.index()
        index.manifests[3].payloadSHA256 = [UInt8](repeating: 0xFF, count: 32)
        try tree.writeIndex(index)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["index-entry-mismatch@4"])
        #expect(report.violations.first?.file == "index.json")
    }

    @Test func manifestJSONThatIsNotTheLatestIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(10)
        let tree = try fixture.write(to: directory.path)
        try tree.write(.manifest, try tree.read(.history(8)))
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["manifest-not-latest@8"])
        #expect(report.manifestJSONVersion == 8)
    }

    @Test func rootRotationSignedOnlyByTheNewKeysIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        let newRoot = try makeKey()
        try fixture.rotate(rootKeys: [newRoot], signers: [newRoot])
        try fixture.extend(3)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["root-rotation@2"])
        #expect(report.violations.first?.file == "root/2.json")
        #expect(report.violations.first?.message.contains("root 1's root role") == true)
        // The manifests under root 2 are still checked against it.
        #expect(report.manifests.last?.signers == [fixture.pinsKeys[1][0].publicKey.keyID])
    }

    @Test func historyFileWhosePayloadHasAnotherVersionIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(8)
        let tree = try fixture.write(to: directory.path)
        var misplaced = fixture.manifests[5].payload
        misplaced.version = 66
        try tree.write(.history(6), try sign(.pins, misplaced.serialized(), with: fixture.pinsKeys[0]).serialized())
        let report = try audit(fixture, repo: directory.path)
        let names = report.violations(.historyFileName)
        #expect(names.map(\.version) == [6])
        #expect(names.first?.message == "holds manifest version 66, not 6")
        // Its index entry and version 7's previous no longer match: also listed.
        #expect(report.violations(.indexEntryMismatch).map(\.version) == [6])
        #expect(report.violations(.previousLink).map(\.version) == [7])
    }

    @Test func severalViolationsInOneTreeAreAllListed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        try fixture.append(fixture.next(), signers: [try makeKey()])
        try fixture.extend(1)
        try fixture.extend(1) { $0.previous = [UInt8](repeating: 1, count: 32) }
        try fixture.extend(5)
        let tree = try fixture.write(to: directory.path)
        var index = try tree.index()
        index.manifests[6].payloadSHA256 = [UInt8](repeating: 0xEE, count: 32)
        try tree.writeIndex(index)
        try tree.write(.manifest, try tree.read(.history(8)))
        let report = try audit(fixture, repo: directory.path)
        #expect(
            Set(rulesAndVersions(report.violations)) == [
                "manifest-foreign-key@3", "previous-link@5", "index-entry-mismatch@7", "manifest-not-latest@8",
            ])
        #expect(!report.passed)
    }

    @Test func aPublishThatDiedMidwayIsAWarning() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(6)
        let tree = try fixture.write(to: directory.path)
        var index = try tree.index()
        index.manifests.removeLast()
        try tree.writeIndex(index)
        try tree.write(.manifest, try tree.read(.history(5)))
        let report = try audit(fixture, repo: directory.path)
        #expect(report.passed, "\(report.violations)")
        #expect(rulesAndVersions(report.warnings) == ["history-beyond-index@6"])
        #expect(report.manifests.last.map { ($0.version, $0.inIndex) } ?? (0, true) == (6, false))
    }

    @Test func invalidExtraSignatureIsAWarning() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        let second = try makeKey()
        try fixture.rotate(pinsKeys: [fixture.pinsKeys[0][0], second])
        let payload = fixture.next()
        var envelope = try sign(.pins, payload.serialized(), with: [fixture.pinsKeys[0][0], second])
        envelope.signatures[1].signature[0] ^= 1
        fixture.append(envelope: envelope, payload: payload)
        try fixture.extend(1)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.passed, "\(report.violations)")
        #expect(rulesAndVersions(report.warnings) == ["invalid-signature@3"])
        #expect(report.warnings.first?.message.contains(second.publicKey.keyID) == true)
    }

    @Test func gapsWithoutAnUnexpiredManifestAreReported() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        try fixture.extend(1) {
            $0.issuedAt = t0.adding(seconds: 60 * day)
            $0.expiresAt = $0.issuedAt.adding(seconds: 30 * day)
        }
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path, at: t0.adding(seconds: 100 * day))
        // The latest manifest expired before the audit time: clients have no current one.
        #expect(!report.passed)
        #expect(
            report.gaps == [
                CoverageGap(
                    from: t0.adding(seconds: 33 * day), until: t0.adding(seconds: 60 * day), afterVersion: 3,
                    beforeVersion: 4),
                CoverageGap(
                    from: t0.adding(seconds: 90 * day), until: t0.adding(seconds: 100 * day), afterVersion: 4,
                    beforeVersion: nil),
            ])
        #expect(rulesAndVersions(report.violations) == ["latest-expired@4"])
        #expect(report.warnings.isEmpty)
    }

    @Test func lifetimeOverTheRootsCapIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        try fixture.extend(1) { $0.expiresAt = $0.issuedAt.adding(seconds: 91 * day) }
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["lifetime-cap@3"])
    }

    @Test func aNewerGivenRootIsFoundInTheChainAndAMissingOneIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try cleanFiftyVersions()
        let tree = try fixture.write(to: directory.path)
        let source = DirectoryTreeSource(repo: directory.path, scope: fixture.scope)
        let options = AuditOptions(at: fixture.auditTime)
        let middle = try RootChain(anchor: fixture.rootEnvelopes[1].serialized(), crypto: sodium)
        let report = try Auditor.audit(anchor: middle, source: source, crypto: sodium, options: options)
        #expect(report.passed, "\(report.violations)")
        #expect(report.anchorVersion == 2)
        #expect(report.roots.map(\.version) == [1, 2, 3])
        // The publisher withholds root 3, which the auditor was given.
        try tree.remove(.root(3))
        let newest = try RootChain(anchor: fixture.rootEnvelopes[2].serialized(), crypto: sodium)
        let withheld = try Auditor.audit(anchor: newest, source: source, crypto: sodium, options: options)
        #expect(rulesAndVersions(withheld.violations) == ["root-missing@3"])
    }

    @Test func givenRootThatDiffersFromThePublishedOneIsEquivocation() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(2)
        _ = try fixture.write(to: directory.path)
        let other = try HistoryFixture()
        let anchor = try RootChain(anchor: other.rootBytes, crypto: sodium)
        let report = try Auditor.audit(
            anchor: anchor, source: DirectoryTreeSource(repo: directory.path, scope: fixture.scope), crypto: sodium,
            options: AuditOptions(at: fixture.auditTime))
        #expect(report.violations(.rootEquivocation).map(\.version) == [1])
        // Clients trust the given root: the tree's manifests are not signed by its pins role.
        #expect(report.violations(.manifestForeignKey).map(\.version) == [1, 2])
        #expect(report.givenRootDiffers == 1)
    }
}

/// A tree source that counts reads and can change a file after its first read.
final class InstrumentedSource: TreeSource, @unchecked Sendable {
    let inner: any TreeSource
    private let lock = NSLock()
    private var counts: [TreeFile: Int] = [:]
    private let changes: [TreeFile: [UInt8]]

    /// - Parameter changes: bytes served for a file from its second read on.
    init(_ inner: any TreeSource, changes: [TreeFile: [UInt8]] = [:]) {
        self.inner = inner
        self.changes = changes
    }

    var location: String { inner.location }

    func reads(_ file: TreeFile) -> Int { lock.withLock { counts[file] ?? 0 } }
    var totalReads: Int { lock.withLock { counts.values.reduce(0, +) } }

    func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        let count = lock.withLock {
            counts[file, default: 0] += 1
            return counts[file] ?? 0
        }
        if count > 1, let changed = changes[file] { return changed }
        return try inner.read(file, limit: limit)
    }

    func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? { try inner.list(folder) }
}

/// Ed25519 verification that counts calls per payload type.
final class CountingVerifier: Ed25519Verifier, @unchecked Sendable {
    private let lock = NSLock()
    private var pins = 0
    private var roots = 0
    private let inner = SodiumEd25519Verifier()

    var pinsVerifications: Int { lock.withLock { pins } }
    var rootVerifications: Int { lock.withLock { roots } }

    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        let pinsPrefix = Envelope.pae(type: PayloadKind.pins.rawValue, body: [])
        let isPins = message.starts(with: pinsPrefix.prefix(pinsPrefix.count - 3))
        lock.withLock {
            if isPins { pins += 1 } else { roots += 1 }
        }
        return inner.isValidSignature(signature, of: message, publicKey: publicKey)
    }

    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool { inner.isUsablePublicKey(publicKey) }
}

@Suite struct AuditReadingTests {
    @Test func aTreeThatChangesBetweenTwoReadsIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(4)
        let tree = try fixture.write(to: directory.path)
        var grown = try tree.index()
        grown.manifests.append(grown.manifests[3])
        grown.manifests[4].version = 5
        let source = InstrumentedSource(
            DirectoryTreeSource(repo: directory.path, scope: fixture.scope), changes: [.index: grown.serialized()])
        let report = try audit(fixture, repo: directory.path, source: source)
        #expect(rulesAndVersions(report.violations) == ["tree-changed@-"])
        #expect(report.violations.first?.file == "index.json")
        #expect(report.violations.first?.message.contains("changed between two reads") == true)
    }

    @Test func eachFileIsReadOnceAndEachManifestSignatureVerifiedOnce() throws {
        let directory = try TemporaryDirectory()
        let fixture = try cleanFiftyVersions()
        _ = try fixture.write(to: directory.path)
        let counter = CountingVerifier()
        let crypto = CryptoProvider(verifier: counter, hasher: sodium.hasher)
        let source = InstrumentedSource(DirectoryTreeSource(repo: directory.path, scope: fixture.scope))
        let report = try audit(fixture, repo: directory.path, crypto: crypto, source: source)
        #expect(report.passed)
        #expect(counter.pinsVerifications == 50)
        // The given root (1), root 1 (1), roots 2 and 3: one signature checked against the
        // previous and the own root role each (root 2 has two signers, each in one role).
        #expect(counter.rootVerifications == 1 + 1 + 2 + 2)
        for version in Int64(1)...50 { #expect(source.reads(.history(version)) == 1) }
        #expect(source.reads(.index) == 2)
        #expect(source.reads(.manifest) == 2)
        // root/1...3 once, and the probe of root/4 that ends the chain.
        #expect(source.totalReads == 50 + 2 + 2 + 4)
    }

    @Test func symlinkedHistoryFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(5)
        let tree = try fixture.write(to: directory.path)
        let copy = directory.path + "/elsewhere.json"
        try FileManager.default.moveItem(atPath: tree.path(.history(4)), toPath: copy)
        try FileManager.default.createSymbolicLink(atPath: tree.path(.history(4)), withDestinationPath: copy)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["file-refused@4"])
        #expect(report.violations.first?.message.contains("symbolic link") == true)
    }

    @Test func garbageHugeAndStrayFilesAreNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(5)
        let tree = try fixture.write(to: directory.path)
        try tree.write(.history(2), Array("not json at all\u{1B}[31m".utf8))
        try tree.write(.history(4), [UInt8](repeating: 0x20, count: Limits.standard.maxEnvelopeBytes + 1))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: tree.directory + "/history/README.txt"))
        let report = try audit(fixture, repo: directory.path)
        #expect(Set(rulesAndVersions(report.violations)) == ["manifest-format@2", "file-refused@4"])
        #expect(report.violations(.fileRefused).first?.message.contains("larger than the limit") == true)
        #expect(rulesAndVersions(report.warnings) == ["stray-file@-"])
    }

    @Test func missingIndexIsNamed() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        let tree = try fixture.write(to: directory.path)
        try tree.remove(.index)
        let report = try audit(fixture, repo: directory.path)
        #expect(rulesAndVersions(report.violations) == ["index-missing@-"])
        #expect(report.manifests.count == 3)
    }

    @Test func missingScopeDirectoryIsAnIOError() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(1)
        #expect(throws: AuditError.self) { try audit(fixture, repo: directory.path) }
    }
}
