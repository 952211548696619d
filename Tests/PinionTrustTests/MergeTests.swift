// The fail-closed merge of docs/DESIGN.md §7 and the baseline file format: every rule, and the
// attacks that a manifest could try against the baseline.

import PinionCore
import PinionTrust
import Testing

/// A distinct pin per number (its digest is 32 bytes of `byte`).
private func pin(_ byte: UInt8) throws -> Pin { try Pin(digest: [UInt8](repeating: byte, count: 32)) }

/// The digest a certificate with the key of `pin(byte)` has in a verified chain.
private func key(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

private let issued = Timestamp(secondsSince1970: 1_800_000_000)
private let expires = issued.adding(seconds: 86_400)
private let beforeExpiry = expires.adding(seconds: -1)

private func manifest(_ domains: [ManifestPayload.Domain], revoked: [Pin] = []) -> ManifestPayload {
    ManifestPayload(
        scope: "com.example.app", rootVersion: 1, version: 2, issuedAt: issued, expiresAt: expires,
        domains: domains, revokedPins: revoked)
}

private func snapshot(
    _ baseline: [PinnedDomain], _ manifest: ManifestPayload?, valid: Bool = true, revoked: Set<Pin> = [],
    staleGrace: Int64 = 0, forced: [String] = []
) throws -> PolicySnapshot {
    PolicySnapshot(
        baseline: try Baseline(domains: baseline), manifest: manifest, manifestValid: valid, revoked: revoked,
        staleGrace: staleGrace, forcedDomains: forced)
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A baseline file with the given domain objects (JSON text, comma-separated).
private func baselineFile(_ domains: String) -> [UInt8] {
    bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":["# + domains + "]}")
}

@Suite struct MergeTests {
    // MARK: Current manifest

    @Test func currentManifestReplacesBaselinePinsOfDomainsItNames() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])],
            manifest([.init(name: "api.example.test", pins: [pin(3), pin(4)])])
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(3), try pin(4)])
        #expect(policy.entry(named: "api.example.test")?.enforce == true)
    }

    @Test func currentManifestKeepsBaselinePinsOfDomainsItDoesNotName() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "cdn.example.test", pins: [pin(3)])])
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(1)])
        #expect(policy.entry(named: "cdn.example.test")?.pins == [try pin(3)])
    }

    @Test func currentManifestPinsMinusRevoked() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])],
            manifest([.init(name: "cdn.example.test", pins: [pin(3), pin(4)])]),
            revoked: [pin(2), pin(4)]
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(1)])
        #expect(policy.entry(named: "cdn.example.test")?.pins == [try pin(3)])
    }

    // MARK: Expired or invalid manifest

    @Test func expiredManifestIntersectsWithBaselineMinusRevoked() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2), pin(3)])],
            manifest([.init(name: "api.example.test", pins: [pin(3), pin(2), pin(9)])]),
            revoked: [pin(3)]
        ).policy(at: expires)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(2)])
    }

    @Test func expiredManifestLeavesBaselineOnlyDomainsAsBaselineMinusRevoked() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])],
            manifest([.init(name: "cdn.example.test", pins: [pin(3)])]),
            revoked: [pin(2)]
        ).policy(at: expires)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(1)])
    }

    @Test func expiredManifestOnlyDomainHasNoPinsAndStaysEnforced() throws {
        let entry = try snapshot([], manifest([.init(name: "cdn.example.test", pins: [pin(3)])]))
            .policy(at: expires).entry(named: "cdn.example.test")
        #expect(entry == PinnedDomain(name: "cdn.example.test", includeSubdomains: false, enforce: true, pins: []))
    }

    @Test func invalidManifestCountsAsExpiredBeforeItsExpiry() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])],
            manifest([
                .init(name: "api.example.test", pins: [pin(2), pin(3)]),
                .init(name: "cdn.example.test", pins: [pin(4)]),
            ]), valid: false)
        #expect(snapshot.manifestCurrentUntil == nil)
        #expect(snapshot.manifestExpiresAt == expires)
        #expect(snapshot.isManifestCurrent(at: issued) == false)
        let policy = snapshot.policy(at: issued)
        #expect(policy == snapshot.expired)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(2)])
        #expect(policy.entry(named: "cdn.example.test")?.pins == [])
    }

    @Test func noManifestMeansBaselineMinusRevoked() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: false, pins: [pin(1), pin(2)])],
            nil, revoked: [pin(1)])
        #expect(snapshot.manifestCurrentUntil == nil)
        #expect(snapshot.manifestExpiresAt == nil)
        #expect(snapshot.current == snapshot.expired)
        #expect(
            snapshot.policy(at: issued).domains == [
                PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: false, pins: [try pin(2)])
            ])
    }

    // MARK: Flags, always

    @Test(arguments: [(true, false), (false, true), (false, false), (true, true)])
    func enforceIsBaselineOrManifest(baselineEnforce: Bool, manifestEnforce: Bool) throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", enforce: baselineEnforce, pins: [pin(1)])],
            manifest([.init(name: "api.example.test", enforce: manifestEnforce, pins: [pin(1)])]))
        for policy in [snapshot.current, snapshot.expired] {
            #expect(policy.entry(named: "api.example.test")?.enforce == (baselineEnforce || manifestEnforce))
        }
    }

    @Test(arguments: [(true, false), (false, true), (false, false), (true, true)])
    func includeSubdomainsIsBaselineOrManifest(baselineFlag: Bool, manifestFlag: Bool) throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "example.test", includeSubdomains: baselineFlag, pins: [pin(1)])],
            manifest([.init(name: "example.test", includeSubdomains: manifestFlag, pins: [pin(1)])]))
        for policy in [snapshot.current, snapshot.expired] {
            #expect(policy.entry(named: "example.test")?.includeSubdomains == (baselineFlag || manifestFlag))
        }
    }

    @Test func domainInOnlyOneSourceTakesItsFlags() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: false, pins: [pin(1)])],
            manifest([.init(name: "cdn.example.test", includeSubdomains: true, enforce: false, pins: [pin(2)])]))
        for policy in [snapshot.current, snapshot.expired] {
            for name in ["api.example.test", "cdn.example.test"] {
                #expect(policy.entry(named: name)?.includeSubdomains == true)
                #expect(policy.entry(named: name)?.enforce == false)
            }
        }
    }

    // MARK: Attacks by a manifest

    @Test func manifestThatEmptiesBaselineDomainRefusesConnections() throws {
        // Manifests cannot list an empty pin set, but can name only pins that are revoked.
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "api.example.test", pins: [pin(5)])], revoked: [pin(5)]),
            revoked: [pin(5)]
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test") == PinnedDomain(name: "api.example.test", pins: []))
        let result = evaluate(host: "api.example.test", verifiedChain: [key(1), key(5)], policy: policy)
        #expect(
            result
                == .rejected(
                    PinFailure(
                        reason: .noUsablePin, host: "api.example.test", entry: "api.example.test",
                        includeSubdomains: false, knownPins: [])))
    }

    @Test func manifestThatRevokesEveryBaselinePinRefusesConnections() throws {
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])], manifest([], revoked: [pin(1), pin(2)]),
            revoked: [pin(1), pin(2)]
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.pins == [])
        #expect(policy.entry(named: "api.example.test")?.enforce == true)
        guard case .rejected(let failure) = evaluate(host: "api.example.test", verifiedChain: [key(1)], policy: policy)
        else {
            Issue.record("expected a rejection")
            return
        }
        #expect(failure.reason == .noUsablePin)
    }

    @Test func manifestThatDropsBaselineDomainLeavesItEnforcedWithBaselinePins() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "cdn.example.test", pins: [pin(2)])]))
        for policy in [snapshot.current, snapshot.expired] {
            #expect(
                policy.entry(named: "api.example.test") == PinnedDomain(name: "api.example.test", pins: [try pin(1)]))
            #expect(evaluate(host: "api.example.test", verifiedChain: [key(2)], policy: policy).isRejected)
        }
    }

    @Test func manifestThatMakesBaselineDomainReportOnlyLeavesItEnforced() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "api.example.test", enforce: false, pins: [pin(2)])]))
        let current = snapshot.policy(at: beforeExpiry)
        #expect(current.entry(named: "api.example.test") == PinnedDomain(name: "api.example.test", pins: [try pin(2)]))
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(9)], policy: current).isRejected)
        #expect(snapshot.policy(at: expires).entry(named: "api.example.test")?.enforce == true)
    }

    @Test func narrowerReportOnlyManifestEntryUnderEnforcedBaselineParentStaysEnforced() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "example.test", includeSubdomains: true, pins: [pin(1)])],
            manifest([.init(name: "api.example.test", includeSubdomains: true, enforce: false, pins: [pin(2)])]))
        let policy = snapshot.policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.enforce == false)
        for host in ["api.example.test", "www.api.example.test"] {
            #expect(evaluate(host: host, verifiedChain: [key(9)], policy: policy).isRejected)
            // Pins come from the narrower entry; the parent's enforce still applies.
            #expect(evaluate(host: host, verifiedChain: [key(1)], policy: policy).isRejected)
            #expect(
                evaluate(host: host, verifiedChain: [key(2)], policy: policy)
                    == .trusted(pin: try pin(2), entry: "api.example.test"))
        }
    }

    @Test func revokedPinThatReappearsInManifestStaysRevoked() throws {
        // R was built from an earlier manifest; the newest one lists the pin again (and
        // does not carry the revocation forward, which only the publisher and auditor check).
        let policy = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "api.example.test", pins: [pin(7), pin(8)])]), revoked: [pin(7)]
        ).policy(at: beforeExpiry)
        #expect(policy.entry(named: "api.example.test")?.pins == [try pin(8)])
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(7)], policy: policy).isRejected)
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(8)], policy: policy)
                == .trusted(pin: try pin(8), entry: "api.example.test"))
    }

    @Test func afterExpiryBaselinePinTheManifestDroppedStaysUntrusted() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)])],
            manifest([.init(name: "api.example.test", pins: [pin(2), pin(3)])]))
        let expired = snapshot.policy(at: expires)
        #expect(expired.entry(named: "api.example.test")?.pins == [try pin(2)])
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(1)], policy: expired).isRejected)
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(3)], policy: expired).isRejected)
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(2)], policy: expired)
                == .trusted(pin: try pin(2), entry: "api.example.test"))
    }

    @Test func manifestOnlyDomainAfterExpiryIsRefusedNotUnpinned() throws {
        let snapshot = try snapshot([], manifest([.init(name: "cdn.example.test", pins: [pin(3)])]))
        #expect(
            evaluate(host: "cdn.example.test", verifiedChain: [key(3)], policy: snapshot.policy(at: beforeExpiry))
                == .trusted(pin: try pin(3), entry: "cdn.example.test"))
        let result = evaluate(host: "cdn.example.test", verifiedChain: [key(3)], policy: snapshot.policy(at: expires))
        #expect(
            result
                == .rejected(
                    PinFailure(
                        reason: .noUsablePin, host: "cdn.example.test", entry: "cdn.example.test",
                        includeSubdomains: false, knownPins: [])))
    }

    // MARK: Expiry and staleGrace

    @Test func manifestExpiresExactlyAtExpiresAtWithoutGrace() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "api.example.test", pins: [pin(2)])]))
        #expect(snapshot.manifestCurrentUntil == expires)
        #expect(snapshot.isManifestCurrent(at: beforeExpiry))
        #expect(snapshot.policy(at: beforeExpiry).entry(named: "api.example.test")?.pins == [try pin(2)])
        #expect(!snapshot.isManifestCurrent(at: expires))
        #expect(snapshot.policy(at: expires).entry(named: "api.example.test")?.pins == [])
    }

    @Test func staleGraceKeepsManifestCurrentForExactlyThatManySeconds() throws {
        let snapshot = try snapshot(
            [PinnedDomain(name: "api.example.test", pins: [pin(1)])],
            manifest([.init(name: "api.example.test", pins: [pin(2)])]), staleGrace: 3_600)
        #expect(snapshot.manifestCurrentUntil == expires.adding(seconds: 3_600))
        #expect(snapshot.policy(at: expires).entry(named: "api.example.test")?.pins == [try pin(2)])
        #expect(snapshot.policy(at: expires.adding(seconds: 3_599)) == snapshot.current)
        #expect(snapshot.policy(at: expires.adding(seconds: 3_600)) == snapshot.expired)
        #expect(snapshot.policy(at: expires.adding(seconds: 3_600)).entry(named: "api.example.test")?.pins == [])
    }

    @Test func negativeStaleGraceCountsAsZero() throws {
        let snapshot = try snapshot([], manifest([.init(name: "api.example.test", pins: [pin(2)])]), staleGrace: -60)
        #expect(snapshot.manifestCurrentUntil == expires)
    }

    @Test func invalidManifestGetsNoStaleGrace() throws {
        let snapshot = try snapshot(
            [], manifest([.init(name: "api.example.test", pins: [pin(2)])]), valid: false, staleGrace: 3_600)
        #expect(snapshot.manifestCurrentUntil == nil)
        #expect(snapshot.policy(at: issued).entry(named: "api.example.test")?.pins == [])
    }

    // MARK: Forced domains of a dropped store

    @Test func forcedDomainsFromDroppedStoreAreRefused() throws {
        let snapshot = try snapshot([], nil, forced: ["lost.example.test"])
        let entry = PinnedDomain(name: "lost.example.test", includeSubdomains: true, enforce: true, pins: [])
        #expect(snapshot.current.entry(named: "lost.example.test") == entry)
        #expect(snapshot.expired.entry(named: "lost.example.test") == entry)
        guard
            case .rejected(let failure) = evaluate(
                host: "lost.example.test", verifiedChain: [key(1)], policy: snapshot.policy(at: issued))
        else {
            Issue.record("expected a rejection")
            return
        }
        #expect(failure.reason == .noUsablePin)
        // Whether the lost entry covered subdomains is unknown: they are refused too.
        guard
            case .rejected = evaluate(host: "sub.lost.example.test", verifiedChain: [key(1)], policy: snapshot.current)
        else {
            Issue.record("a subdomain of a forced name became unpinned")
            return
        }
    }

    @Test func forcedDomainInBaselineIsRefusedUntilAFreshManifest() throws {
        // The lost manifest may have replaced or revoked the baseline's pin: trust none.
        let baselineEntry = PinnedDomain(name: "api.example.test", includeSubdomains: true, pins: [try pin(1)])
        let snapshot = try snapshot([baselineEntry], nil, forced: ["api.example.test"])
        let entry = snapshot.policy(at: issued).entry(named: "api.example.test")
        #expect(entry?.pins == [])
        #expect(entry?.enforce == true)
        #expect(entry?.includeSubdomains == true)
    }

    // MARK: MergedPolicy

    @Test func mergedPolicyCombinesDuplicateEntriesFailClosed() throws {
        let policy = MergedPolicy([
            PinnedDomain(
                name: "api.example.test", includeSubdomains: false, enforce: false, pins: [try pin(1), try pin(2)]),
            PinnedDomain(
                name: "api.example.test", includeSubdomains: true, enforce: true, pins: [try pin(2), try pin(3)]),
        ])
        #expect(
            policy.domains == [
                PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: true, pins: [try pin(2)])
            ])
    }

    // MARK: Baseline

    @Test func baselineRefusesInvalidDomains() throws {
        #expect(throws: FormatError(path: "domains[0].name", rule: .invalidHostName("trailing dot"))) {
            try Baseline(domains: [PinnedDomain(name: "api.example.test.", pins: [try pin(1)])])
        }
        #expect(throws: FormatError(path: "domains[1].name", rule: .duplicateDomain("api.example.test"))) {
            try Baseline(domains: [
                PinnedDomain(name: "api.example.test", pins: [try pin(1)]),
                PinnedDomain(name: "api.example.test", pins: [try pin(2)]),
            ])
        }
        #expect(throws: FormatError(path: "domains[0].pins", rule: .empty)) {
            try Baseline(domains: [PinnedDomain(name: "api.example.test", pins: [])])
        }
        #expect(throws: FormatError(path: "domains[0].pins[1]", rule: .duplicatePin(try pin(1).description))) {
            try Baseline(domains: [PinnedDomain(name: "api.example.test", pins: [try pin(1), try pin(1)])])
        }
    }

    @Test func baselineFileParses() throws {
        let text = """
            {"type": "pinion.baseline", "specVersion": 1, "x-note": "ignored",
             "domains": [
               {"name": "api.example.test", "pins": ["\(try pin(1))", "\(try pin(2))"], "x-owner": "ops"},
               {"name": "example.test", "includeSubdomains": true, "enforce": false, "pins": ["\(try pin(3))"]}
             ]}
            """
        let baseline = try Baseline.parse(bytes(text))
        #expect(
            baseline.domains == [
                PinnedDomain(
                    name: "api.example.test", includeSubdomains: false, enforce: true, pins: [try pin(1), try pin(2)]),
                PinnedDomain(name: "example.test", includeSubdomains: true, enforce: false, pins: [try pin(3)]),
            ])
        #expect(
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":[]}"#)) == Baseline.empty)
    }

    @Test func baselineFileRefusesUnknownMember() throws {
        #expect(throws: FormatError(path: "", rule: .unknownMember("revokedPins"))) {
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":[],"revokedPins":[]}"#))
        }
        let text = baselineFile(#"{"name":"api.example.test","pins":["\#(try pin(1))"],"pin":"x"}"#)
        #expect(throws: FormatError(path: "domains[0]", rule: .unknownMember("pin"))) { try Baseline.parse(text) }
    }

    @Test func baselineFileRefusesDuplicateNames() throws {
        let entry = #"{"name":"api.example.test","pins":["\#(try pin(1))"]}"#
        #expect(throws: FormatError(path: "domains[1].name", rule: .duplicateDomain("api.example.test"))) {
            try Baseline.parse(baselineFile(entry + "," + entry))
        }
    }

    @Test func baselineFileRefusesBadPin() throws {
        let text = baselineFile(#"{"name":"api.example.test","pins":["sha256/abc"]}"#)
        #expect(throws: FormatError(path: "domains[0].pins[0]", rule: .invalidPin("not canonical padded base64"))) {
            try Baseline.parse(text)
        }
    }

    @Test func baselineFileRefusesUppercaseHost() throws {
        let text = baselineFile(#"{"name":"API.example.test","pins":["\#(try pin(1))"]}"#)
        #expect(
            throws: FormatError(
                path: "domains[0].name", rule: .invalidHostName("uppercase letters; host names are listed in lowercase")
            )
        ) { try Baseline.parse(text) }
    }

    @Test func baselineFileRefusesWrongTypes() throws {
        #expect(
            throws: FormatError(
                path: "type", rule: .wrongDocumentType(expected: "pinion.baseline", found: "pinion.pins"))
        ) { try Baseline.parse(bytes(#"{"type":"pinion.pins","specVersion":1,"domains":[]}"#)) }
        #expect(throws: FormatError(path: "", rule: .wrongType(expected: "an object"))) {
            try Baseline.parse(bytes("[]"))
        }
        #expect(throws: FormatError(path: "domains", rule: .wrongType(expected: "an array"))) {
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":{}}"#))
        }
        let text = baselineFile(#"{"name":"api.example.test","enforce":"yes","pins":["\#(try pin(1))"]}"#)
        #expect(throws: FormatError(path: "domains[0].enforce", rule: .wrongType(expected: "true or false"))) {
            try Baseline.parse(text)
        }
    }

    @Test func baselineFileRefusesMissingMembersAndNewerSpec() throws {
        #expect(throws: FormatError(path: "", rule: .missingMember("domains"))) {
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":1}"#))
        }
        #expect(throws: FormatError(path: "specVersion", rule: .unsupportedSpecVersion(found: 2, supported: 1))) {
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":2,"domains":[]}"#))
        }
        #expect(throws: FormatError(path: "domains[0].pins", rule: .empty)) {
            try Baseline.parse(
                bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":[{"name":"api.example.test","pins":[]}]}"#))
        }
    }

    @Test func baselineFileRefusesDuplicateJSONMembers() throws {
        #expect(throws: FormatError(path: "", rule: .duplicateKey("domains"))) {
            try Baseline.parse(bytes(#"{"type":"pinion.baseline","specVersion":1,"domains":[],"domains":[]}"#))
        }
    }
}

extension ConnectionVerdict {
    fileprivate var isRejected: Bool {
        if case .rejected = self { return true }
        return false
    }
}
