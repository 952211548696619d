// The rules between two consecutive published manifests (docs/DESIGN.md §5, §9, §10), which
// `pinion publish` applies to the step it adds and the auditor to every step.

import PinionCore
import PinionTestSupport
import Testing

@Suite struct HistoryRulesTests {
    let latestHash = [UInt8](repeating: 0xab, count: 32)

    func latest(revoked: [Pin] = []) -> ManifestPayload {
        var payload = manifestPayload(version: 4, rootVersion: 2, issuedAt: t0)
        payload.revokedPins = revoked
        return payload
    }

    func next(of latest: ManifestPayload) -> ManifestPayload {
        var payload = manifestPayload(version: latest.version + 1, rootVersion: latest.rootVersion, issuedAt: t0)
        payload.previous = latestHash
        payload.revokedPins = latest.revokedPins
        return payload
    }

    @Test func aProperSuccessorBreaksNoRule() throws {
        let latest = latest(revoked: [pin(9)])
        #expect(HistoryRules.successorViolations(next(of: latest), of: latest, latestPayloadSHA256: latestHash).isEmpty)
        try HistoryRules.checkSuccessor(next(of: latest), of: latest, latestPayloadSHA256: latestHash, allowLift: false)
    }

    @Test func theVersionMustBeExactlyNext() {
        let latest = latest()
        for version: Int64 in [latest.version, latest.version + 2, 1] {
            var candidate = next(of: latest)
            candidate.version = version
            #expect(
                HistoryRules.successorViolations(candidate, of: latest, latestPayloadSHA256: latestHash)
                    == [.versionNotNext(expected: latest.version + 1, found: version)])
        }
    }

    @Test func theLargestVersionHasNoSuccessor() {
        var latest = latest()
        latest.version = Limits.maxInteger
        var candidate = next(of: latest)
        candidate.version = Limits.maxInteger
        #expect(
            HistoryRules.successorViolations(candidate, of: latest, latestPayloadSHA256: latestHash).contains {
                if case .versionNotNext = $0 { true } else { false }
            })
    }

    @Test func previousMustBeTheLatestPayloadHash() {
        let latest = latest()
        var missing = next(of: latest)
        missing.previous = nil
        #expect(
            HistoryRules.successorViolations(missing, of: latest, latestPayloadSHA256: latestHash)
                == [.previousMismatch(expected: latestHash, found: nil)])
        var other = next(of: latest)
        other.previous = [UInt8](repeating: 0xcd, count: 32)
        #expect(
            HistoryRules.successorViolations(other, of: latest, latestPayloadSHA256: latestHash)
                == [.previousMismatch(expected: latestHash, found: other.previous)])
    }

    @Test func issuedAtAndRootVersionNeverGoBack() {
        let latest = latest()
        var earlier = next(of: latest)
        earlier.issuedAt = t0.adding(seconds: -1)
        earlier.expiresAt = earlier.issuedAt.adding(seconds: day)
        earlier.rootVersion = latest.rootVersion - 1
        #expect(
            HistoryRules.successorViolations(earlier, of: latest, latestPayloadSHA256: latestHash) == [
                .rootVersionDecreased(latest: latest.rootVersion, found: latest.rootVersion - 1),
                .issuedAtBeforeLatest(latest: latest.issuedAt, found: earlier.issuedAt),
            ])
        var later = next(of: latest)
        later.rootVersion = latest.rootVersion + 1
        #expect(HistoryRules.successorViolations(later, of: latest, latestPayloadSHA256: latestHash).isEmpty)
    }

    @Test func revocationsCarryForwardUnlessLiftedExplicitly() throws {
        let latest = latest(revoked: [pin(7), pin(8)])
        var lifting = next(of: latest)
        lifting.revokedPins = [pin(8)]
        #expect(HistoryRules.liftedRevocations(lifting, of: latest) == [pin(7)])
        #expect(
            throws: HistoryViolation.revocationLifted([pin(7)]),
            performing: {
                try HistoryRules.checkSuccessor(
                    lifting, of: latest, latestPayloadSHA256: self.latestHash, allowLift: false)
            })
        try HistoryRules.checkSuccessor(lifting, of: latest, latestPayloadSHA256: latestHash, allowLift: true)
        var adding = next(of: latest)
        adding.revokedPins = [pin(7), pin(8), pin(6)]
        #expect(HistoryRules.liftedRevocations(adding, of: latest).isEmpty)
    }

    @Test func allowLiftExcusesOnlyTheLift() {
        let latest = latest(revoked: [pin(7)])
        var candidate = next(of: latest)
        candidate.revokedPins = []
        candidate.previous = nil
        #expect(
            throws: HistoryViolation.previousMismatch(expected: latestHash, found: nil),
            performing: {
                try HistoryRules.checkSuccessor(
                    candidate, of: latest, latestPayloadSHA256: self.latestHash, allowLift: true)
            })
    }

    @Test func everyViolationIsNamedForPeople() {
        let text = HistoryViolation.previousMismatch(expected: latestHash, found: nil).description
        #expect(text == "previous is missing, expected sha256:\(Hex.encode(latestHash)) (the latest published payload)")
        #expect(
            HistoryViolation.versionNotNext(expected: 5, found: 7).description
                == "version 7 is not the next version 5")
    }
}
