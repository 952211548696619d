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

@Suite struct HostNameTests {
    @Test(arguments: [
        "api.example.com", "a.b", "xn--bcher-kva.example", "a-b.example.com", "0.example.com",
        String(repeating: "a", count: 63) + ".example",
        [String](repeating: String(repeating: "a", count: 61), count: 4).joined(separator: ".") + ".ab",
    ])
    func acceptsLowercaseALabelNames(_ name: String) throws {
        #expect(name.utf8.count <= HostName.maxLength)
        try HostName.validate(name)
    }

    @Test(arguments: [
        ("", "empty"), ("example", "a single label; at least two are required"),
        ("API.example.com", "uppercase letters; host names are listed in lowercase"),
        ("*.example.com", "wildcards are not allowed; use includeSubdomains"),
        ("example.com.", "trailing dot"), ("a..example.com", "empty label"),
        ("-a.example.com", "a label starts or ends with a hyphen"),
        ("a-.example.com", "a label starts or ends with a hyphen"),
        ("a_b.example.com", "character \"_\" is not a letter, digit or hyphen"),
        ("bücher.example", "non-ASCII; write internationalised names as A-labels (xn--...)"),
        ("127.0.0.1", "IP addresses cannot be pinned by name"), ("[::1]", "IP addresses cannot be pinned by name"),
        ("::1", "IP addresses cannot be pinned by name"), ("0x7f.0x1", "IP addresses cannot be pinned by name"),
        ("example.123", "IP addresses cannot be pinned by name"),
        (String(repeating: "a", count: 64) + ".example", "a label longer than 63 characters"),
    ])
    func refusesWithTheReason(_ name: String, _ reason: String) {
        #expect(throws: FormatRule.invalidHostName(reason)) { try HostName.validate(name) }
    }

    @Test func refusesAName254CharactersLong() {
        let name = [String](repeating: String(repeating: "a", count: 62), count: 4).joined(separator: ".") + ".ab"
        #expect(name.utf8.count == 254)
        #expect(throws: FormatRule.invalidHostName("longer than 253 characters")) { try HostName.validate(name) }
    }

    @Test func aHexLookingLastLabelThatIsNotHexIsAName() throws {
        try HostName.validate("example.0xg1")
        // "0x" alone is the number 0 to WHATWG URL parsers: refused like any IPv4 part.
        #expect(throws: FormatRule.invalidHostName("IP addresses cannot be pinned by name")) {
            try HostName.validate("example.0x")
        }
    }
}
