// PublisherStatusCheck (the library behind `pinion status`) driven by an in-memory
// TreeSource: rotations, refusals, read failures mid-walk, caching headers, expiry edges
// and the order of verdicts.

import PinionAudit
import PinionCore
import PinionCrypto
import PinionTestSupport
import PinionTrust
import Synchronization
import Testing

/// Files by name, failures by name, and optional caching headers; records what was read.
final class StatusMemorySource: HeaderReportingTreeSource, @unchecked Sendable {
    let files: [TreeFile: [UInt8]]
    let failures: [TreeFile: TreeSourceError]
    let headers: PublisherHeaders?
    private let readLog = Mutex<[TreeFile]>([])

    init(
        _ files: [TreeFile: [UInt8]], failures: [TreeFile: TreeSourceError] = [:], headers: PublisherHeaders? = nil
    ) {
        self.files = files
        self.failures = failures
        self.headers = headers
    }

    var location: String { "memory:/v1/com.example.app" }
    var reads: [TreeFile] { readLog.withLock { $0 } }

    func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        readLog.withLock { $0.append(file) }
        if let failure = failures[file] { throw failure }
        guard let bytes = files[file] else { return nil }
        if bytes.count > limit { throw .tooLarge(file: file.path, limit: limit) }
        return bytes
    }

    func readWithHeaders(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> (
        bytes: [UInt8]?, headers: PublisherHeaders
    ) {
        (try read(file, limit: limit), headers ?? PublisherHeaders())
    }

    func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? { nil }
}

/// A plain TreeSource (no headers), like a directory.
struct StatusPlainSource: TreeSource {
    let inner: StatusMemorySource
    var location: String { inner.location }
    func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? { try inner.read(file, limit: limit) }
    func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? { nil }
}

@Suite struct PublisherStatusTests {
    let setup: Setup
    let manifest1: [UInt8]

    init() throws {
        setup = try Setup()
        manifest1 = try sign(.pins, manifestPayload(version: 1).serialized(), with: [setup.pinsKey]).serialized()
    }

    func check(
        _ source: any TreeSource, at: Timestamp = t0.adding(seconds: day), warnBefore: Int64 = 7 * day,
        expect: Int64? = nil
    ) throws -> PublisherStatus {
        PublisherStatusCheck.check(
            anchor: try setup.chain(), source: source, crypto: sodium,
            options: StatusOptions(at: at, warnBefore: warnBefore, expectVersion: expect))
    }

    /// Root 2 rotating the root key to `newRootKey` and the pins role to `pinsKey`.
    func root2(newRootKey: Ed25519SecretKey, pinsKey: Ed25519SecretKey, signers: [Ed25519SecretKey]? = nil) throws
        -> [UInt8]
    {
        let payload = rootPayload(version: 2, rootKeys: [newRootKey], pinsKeys: [pinsKey])
        return try sign(.root, payload.serialized(), with: signers ?? [setup.rootKey, newRootKey]).serialized()
    }

    @Test func aRotationIsFollowedAndTheManifestVerifiedUnderTheNewestRoot() throws {
        let newRoot = try makeKey()
        let newPins = try makeKey()
        let manifest = try sign(.pins, manifestPayload(version: 2, rootVersion: 2).serialized(), with: [newPins])
        let source = StatusMemorySource(
            [
                .root(1): setup.rootEnvelope.serialized(),
                .root(2): try root2(newRootKey: newRoot, pinsKey: newPins), .manifest: manifest.serialized(),
            ], headers: PublisherHeaders(etag: "\"abc\"", cacheControl: "no-cache"))
        let status = try check(source)
        #expect(status.health == .healthy, "\(status.problems)")
        #expect(status.anchorVersion == 1)
        #expect(status.root?.version == 2)
        #expect(status.manifest?.version == 2)
        #expect(status.manifest?.signers == [newPins.publicKey.keyID])
        #expect(status.headers == PublisherHeaders(etag: "\"abc\"", cacheControl: "no-cache"))
        #expect(status.narrowsAt == t0.adding(seconds: 30 * day))
        // The walk asks for root/3 (absent) and never for root/1 (the anchor is trusted as given).
        #expect(source.reads == [.root(2), .root(3), .manifest])
    }

    @Test func aRotationThatReplacesThePinsKeyBreaksTheOldManifest() throws {
        let newRoot = try makeKey()
        let newPins = try makeKey()
        let source = StatusMemorySource([
            .root(2): try root2(newRootKey: newRoot, pinsKey: newPins), .manifest: manifest1,
        ])
        let status = try check(StatusPlainSource(inner: source))
        #expect(status.health == .broken)
        #expect(status.manifest == nil)
        #expect(status.headers == nil, "a plain source has no headers")
        guard case .manifestInvalid(let error) = status.problems.first else {
            Issue.record("\(status.problems)")
            return
        }
        #expect("\(error)".contains("pins"), "\(error)")
    }

    @Test func aRootNotSignedByThePreviousRootRoleIsRefused() throws {
        let newRoot = try makeKey()
        let source = StatusMemorySource([
            .root(2): try root2(newRootKey: newRoot, pinsKey: setup.pinsKey, signers: [newRoot]), .manifest: manifest1,
        ])
        let status = try check(source)
        #expect(status.health == .broken)
        #expect(status.problems.map(\.code) == ["root-invalid"])
        #expect(status.root?.version == 1, "the verified prefix")
        #expect(!source.reads.contains(.manifest), "no manifest is judged under a broken chain")
    }

    @Test func aReadFailureMidWalkIsUnreachableAndStopsThere() throws {
        let newRoot = try makeKey()
        let source = StatusMemorySource(
            [.root(2): try root2(newRootKey: newRoot, pinsKey: setup.pinsKey), .manifest: manifest1],
            failures: [.root(3): .io(file: "root/3.json", detail: "HTTP status 502")])
        let status = try check(source)
        #expect(status.health == .unreachable)
        #expect(status.health.exitCode == 3)
        #expect(status.problems == [.unreachable(file: "root/3.json", detail: "HTTP status 502")])
        #expect(status.root?.version == 2)
        #expect(!source.reads.contains(.manifest))
    }

    @Test func refusedAndOversizedFilesAreBrokenNotUnreachable() throws {
        let refused = StatusMemorySource(
            [.manifest: manifest1], failures: [.manifest: .refused(file: "manifest.json", kind: "a FIFO")])
        #expect(try check(refused).problems.map(\.code) == ["file-refused"])
        #expect(try check(refused).health == .broken)

        let huge = StatusMemorySource([.manifest: [UInt8](repeating: 0x20, count: Limits.standard.maxEnvelopeBytes + 1)]
        )
        #expect(try check(huge).problems.map(\.code) == ["file-refused"])
    }

    @Test func aMissingManifestIsBrokenButAMissingScopeIsUnreachable() throws {
        let lostManifest = StatusMemorySource([.root(1): setup.rootEnvelope.serialized()])
        #expect(try check(lostManifest).problems == [.manifestMissing])
        #expect(try check(lostManifest).health == .broken)

        let nothing = StatusMemorySource([:])
        #expect(try check(nothing).problems == [.scopeNotPublished(anchorVersion: 1)])
        #expect(try check(nothing).health == .unreachable)
    }

    @Test func expiryEdgesAreExact() throws {
        let source = StatusMemorySource([.manifest: manifest1])
        let expiry = t0.adding(seconds: 30 * day)
        // Expired at the second it expires (expiresAt <= at), as clients judge it.
        #expect(try check(source, at: expiry).problems.map(\.code) == ["manifest-expired"])
        #expect(try check(source, at: expiry).manifest?.secondsLeft == 0)
        // Exactly the window left: a warning; one second more: healthy.
        let warned = try check(source, at: expiry.adding(seconds: -7 * day))
        #expect(warned.problems == [.manifestExpiresSoon(version: 1, expiresAt: expiry, secondsLeft: 7 * day)])
        #expect(try check(source, at: expiry.adding(seconds: -7 * day - 1)).health == .healthy)
        // The root: expired at its expiresAt; the manifest is then irrelevant to clients.
        let rootExpiry = t0.adding(seconds: 365 * day)
        #expect(
            try check(source, at: rootExpiry).problems.map(\.code).first == "root-expired")
    }

    @Test func brokenOutranksUnreachableAndWarning() throws {
        // Lagging and expiring soon: broken (1), not warning (4).
        let source = StatusMemorySource([.manifest: manifest1])
        let lagging = try check(source, at: t0.adding(seconds: 25 * day), expect: 2)
        #expect(Set(lagging.problems.map(\.code)) == ["manifest-expires-soon", "publisher-lagging"])
        #expect(lagging.health == .broken)
        #expect(try check(source, expect: 1).health == .healthy)

        // An expired root and an unreadable manifest: broken is what is known.
        let failing = StatusMemorySource(
            [:], failures: [.manifest: .io(file: "manifest.json", detail: "connection refused")])
        let both = try check(failing, at: t0.adding(seconds: 400 * day))
        #expect(both.problems.map(\.code) == ["root-expired", "unreachable"])
        #expect(both.health == .broken)
    }

    @Test func theLastSuccessIsReadBackOnlyFromOurOwnLine() throws {
        let status = try check(StatusMemorySource([.manifest: manifest1]))
        let text = StatusMetrics.render(status, previousSuccess: nil)
        #expect(
            StatusMetrics.lastSuccess(in: text, scope: "com.example.app") == t0.adding(seconds: day).secondsSince1970)
        #expect(StatusMetrics.lastSuccess(in: text, scope: "org.other.app") == nil)
        let prefix = StatusMetrics.lastSuccessName + "{scope=\"com.example.app\"} "
        for garbage in ["", "garbage", prefix + "-5", prefix + "1e9", prefix + "12 13", prefix] {
            #expect(StatusMetrics.lastSuccess(in: garbage + "\n", scope: "com.example.app") == nil, "\(garbage)")
        }
        // A failed run carries the previous success forward, and only then.
        let unreachable = try check(
            StatusMemorySource([:], failures: [.root(2): .io(file: "root/2.json", detail: "timeout")]))
        let carried = StatusMetrics.render(unreachable, previousSuccess: 1_700_000_000)
        #expect(StatusMetrics.lastSuccess(in: carried, scope: "com.example.app") == 1_700_000_000)
        #expect(!carried.contains("pinion_status_manifest_version"), "unknown values are omitted, not zero")
        let never = StatusMetrics.render(unreachable, previousSuccess: nil)
        #expect(!never.contains(StatusMetrics.lastSuccessName))
    }
}
