// The one root-chain walk (RootChainWalk): where it ends, what it keeps, and what it refuses.

import PinionCore
import PinionTrust
import Testing

/// A chain of roots 1...count: root N has root key N and is signed by root N-1's key and its own.
private struct RootSeries {
    let keys: [SodiumSigner]
    let pinsKey: SodiumSigner
    let publisher: Publisher

    init(count: Int) throws {
        publisher = try Publisher()
        keys = try (1...count).map { try SodiumSigner(seed: [UInt8](repeating: UInt8(0x40 + $0), count: 32)) }
        pinsKey = publisher.pinsKey
    }

    /// Root `version`, signed by `signers` (default: the previous root's key and its own).
    func root(_ version: Int64, scope: String = scope, signers: [SodiumSigner]? = nil) throws -> [UInt8] {
        let key = keys[Int(version) - 1]
        var payload = publisher.rootPayload(version: version, rootKey: key, pinsKey: pinsKey)
        payload.scope = scope
        let chosen = signers ?? (version == 1 ? [key] : [keys[Int(version) - 2], key])
        return try publisher.sign(.root, payload.serialized(), with: chosen).serialized()
    }

    func anchor() throws -> RootChain {
        try RootChain(anchor: root(1), crypto: PortableCrypto.provider)
    }

    /// The published files: root/N.json for N in `versions`.
    func files(_ versions: ClosedRange<Int64>) throws -> [Int64: [UInt8]] {
        var files: [Int64: [UInt8]] = [:]
        for version in versions { files[version] = try root(version) }
        return files
    }
}

private struct LookupFailure: Error, Equatable {
    let version: Int64
}

@Suite struct RootChainWalkTests {
    @Test func followsEveryRotationUntilTheNextRootIsAbsent() throws {
        let series = try RootSeries(count: 4)
        let files = try series.files(2...4)
        var walk = RootChainWalk(from: try series.anchor(), crypto: PortableCrypto.provider)
        var asked: [Int64] = []
        var accepted: [Int64] = []
        let end = walk.run(
            lookup: { (version: Int64) throws(LookupFailure) -> [UInt8]? in
                asked.append(version)
                return files[version]
            },
            accepted: { root, bytes in
                accepted.append(root.version)
                #expect(bytes == files[root.version])
            })
        guard case .complete(let next) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(next == 5)
        #expect(asked == [2, 3, 4, 5])
        #expect(accepted == [2, 3, 4])
        #expect(walk.rotations == 3)
        #expect(walk.chain.roots.map(\.version) == [1, 2, 3, 4])
        #expect(walk.chain.newest.previousRoleReport?.valid.count == 1)
    }

    @Test func startsFromTheNewestRootOfTheGivenChain() throws {
        let series = try RootSeries(count: 3)
        var chain = try series.anchor()
        try chain.append(try series.root(2), crypto: PortableCrypto.provider)
        let files = try series.files(3...3)
        var walk = RootChainWalk(from: chain, crypto: PortableCrypto.provider)
        var asked: [Int64] = []
        let end = walk.run(lookup: { (version: Int64) throws(LookupFailure) -> [UInt8]? in
            asked.append(version)
            return files[version]
        })
        guard case .complete(nextVersion: 4) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(asked == [3, 4])
        #expect(walk.rotations == 1)
    }

    @Test func aFailedLookupKeepsTheVerifiedPrefix() throws {
        let series = try RootSeries(count: 4)
        let files = try series.files(2...4)
        var walk = RootChainWalk(from: try series.anchor(), crypto: PortableCrypto.provider)
        let end = walk.run(lookup: { (version: Int64) throws(LookupFailure) -> [UInt8]? in
            if version == 3 { throw LookupFailure(version: version) }
            return files[version]
        })
        guard case .lookupFailed(let version, let failure) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(version == 3)
        #expect(failure == LookupFailure(version: 3))
        #expect(walk.chain.newest.version == 2)
    }

    @Test func aRefusedRootEndsTheWalkWithTheReasonAndKeepsThePrefix() throws {
        let series = try RootSeries(count: 4)
        let stranger = try SodiumSigner(seed: [UInt8](repeating: 0x7F, count: 32))
        let bad: [(String, [UInt8], (TrustError) -> Bool)] = [
            (
                "signed by its own key only, not the old root role", try series.root(3, signers: [series.keys[2]]),
                { if case .thresholdNotMet(.root, 2, 0, 1) = $0 { true } else { false } }
            ),
            (
                "signed by the old root role only", try series.root(3, signers: [series.keys[1]]),
                { if case .thresholdNotMet(.root, 3, 0, 1) = $0 { true } else { false } }
            ),
            (
                "signed by a stranger", try series.root(3, signers: [stranger]),
                { if case .thresholdNotMet = $0 { true } else { false } }
            ),
            (
                "another scope", try series.root(3, scope: "com.example.other"),
                { if case .scopeMismatch = $0 { true } else { false } }
            ),
            (
                "version 4 served as root 3", try series.root(4, signers: [series.keys[1], series.keys[3]]),
                { if case .rootNotNext(expected: 3, found: 4) = $0 { true } else { false } }
            ),
            ("not JSON", Array("{".utf8), { if case .format = $0 { true } else { false } }),
        ]
        for (name, bytes, expected) in bad {
            var files = try series.files(2...4)
            files[3] = bytes
            var walk = RootChainWalk(from: try series.anchor(), crypto: PortableCrypto.provider)
            var asked: [Int64] = []
            let end = walk.run(lookup: { (version: Int64) throws(LookupFailure) -> [UInt8]? in
                asked.append(version)
                return files[version]
            })
            guard case .refused(let version, let refused, let error) = end else {
                Issue.record("\(name): ended \(end)")
                continue
            }
            #expect(version == 3, "\(name)")
            #expect(refused == bytes, "\(name)")
            #expect(expected(error), "\(name): \(error)")
            #expect(asked == [2, 3], "\(name): the walk goes no further than the refused root")
            #expect(walk.chain.newest.version == 2, "\(name)")
            #expect(walk.rotations == 1, "\(name)")
        }
    }

    @Test func aGapEndsTheChainWhereTheGapStarts() throws {
        let series = try RootSeries(count: 4)
        var files = try series.files(2...4)
        files[3] = nil
        var walk = RootChainWalk(from: try series.anchor(), crypto: PortableCrypto.provider)
        let end = walk.run(lookup: { (version: Int64) throws(LookupFailure) -> [UInt8]? in files[version] })
        guard case .complete(nextVersion: 3) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(walk.chain.newest.version == 2)
    }

    @Test func theRotationLimitRefusesTheRootBeyondItAndAllowsExactlyTheLimit() throws {
        let series = try RootSeries(count: 4)
        let files = try series.files(2...4)
        let lookup = { (version: Int64) throws(LookupFailure) -> [UInt8]? in files[version] }

        var limited = RootChainWalk(from: try series.anchor(), maxRotations: 2, crypto: PortableCrypto.provider)
        let end = limited.run(lookup: lookup)
        guard case .refused(4, _, .tooManyRotations(limit: 2)) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(limited.chain.newest.version == 3)

        var exact = RootChainWalk(from: try series.anchor(), maxRotations: 3, crypto: PortableCrypto.provider)
        guard case .complete(nextVersion: 5) = exact.run(lookup: lookup) else {
            Issue.record("a walk of exactly the limit must complete")
            return
        }

        var unlimited = RootChainWalk(from: try series.anchor(), maxRotations: nil, crypto: PortableCrypto.provider)
        guard case .complete(nextVersion: 5) = unlimited.run(lookup: lookup) else {
            Issue.record("a walk without a limit must complete")
            return
        }
        #expect(RootChainWalk(from: try series.anchor(), crypto: PortableCrypto.provider).maxRotations == 256)
    }

    @Test func acceptingPreReadBytesCountsAgainstTheLimitAndLeavesTheChainOnFailure() throws {
        let series = try RootSeries(count: 3)
        var walk = RootChainWalk(from: try series.anchor(), maxRotations: 1, crypto: PortableCrypto.provider)
        let wrong = walk.accept(try series.root(3, signers: [series.keys[0], series.keys[2]]))
        guard case .failure(.rootNotNext(expected: 2, found: 3)) = wrong else {
            Issue.record("accepted \(wrong)")
            return
        }
        #expect(walk.chain.newest.version == 1)
        #expect(walk.rotations == 0)
        guard case .success(let root) = walk.accept(try series.root(2)) else {
            Issue.record("root 2 refused")
            return
        }
        #expect(root.version == 2)
        guard case .failure(.tooManyRotations(limit: 1)) = walk.accept(try series.root(3)) else {
            Issue.record("the limit was not enforced")
            return
        }
        #expect(walk.chain.newest.version == 2)
    }
}
