// PolicySnapshot's merges (which take M's table over whole) against the rule written out name by
// name over the union of B's and M's names, as the merge was before, on generated (B, M, R, forced).

import PinionCore
import PinionTrust
import PinionTrustTestSupport
import Testing

/// The merge of docs/DESIGN.md §7 exactly as it was written before M's table was taken over: the
/// union of B's and M's names, one entry built per name.
private func referenceMerge(
    _ base: [String: PinnedDomain], _ manifest: [String: PinnedDomain]?, manifestCurrent: Bool,
    revoked: Set<Pin>, forced: [String]
) -> MergedPolicy {
    let manifest = manifest ?? [:]
    var entries: [PinnedDomain] = []
    var forcedSet = Set<String>()
    for name in forced { forcedSet.insert(name) }
    for name in Set(base.keys).union(manifest.keys) where !forcedSet.contains(name) {
        let fromBase = base[name]
        let fromManifest = manifest[name]
        let pins: [Pin]
        switch (fromBase, fromManifest) {
        case (_, .some(let entry)) where manifestCurrent:
            pins = entry.pins
        case (.some(let baseEntry), .some(let manifestEntry)):
            let granted = Set(manifestEntry.pins)
            pins = baseEntry.pins.filter { granted.contains($0) }
        case (.some(let baseEntry), .none):
            pins = baseEntry.pins
        case (.none, _):
            pins = []
        }
        entries.append(
            PinnedDomain(
                name: name,
                includeSubdomains: (fromBase?.includeSubdomains ?? false) || (fromManifest?.includeSubdomains ?? false),
                enforce: (fromBase?.enforce ?? false) || (fromManifest?.enforce ?? false),
                pins: pins.filter { !revoked.contains($0) }))
    }
    for name in forcedSet {
        entries.append(PinnedDomain(name: name, includeSubdomains: true, enforce: true, pins: []))
    }
    return MergedPolicy(entries)
}

@Suite struct MergeReferenceTests {
    /// A pool of 12 pins and 10 names, so that B, M, R and the forced names overlap often.
    static func pin(_ byte: Int) throws -> Pin { try Pin(digest: [UInt8](repeating: UInt8(byte), count: 32)) }
    static let names = (0..<10).map { "d\($0).example" }

    fileprivate static func domains(_ random: inout SplitMix, count: Int) throws -> [PinnedDomain] {
        var chosen = Set<String>()
        var domains: [PinnedDomain] = []
        for _ in 0..<count {
            let name = names[random.below(names.count)]
            guard chosen.insert(name).inserted else { continue }
            var pins: [Pin] = []
            for _ in 0..<random.below(4) {
                let next = try pin(random.below(12))
                if !pins.contains(next) { pins.append(next) }
            }
            domains.append(
                PinnedDomain(name: name, includeSubdomains: random.flag(), enforce: random.flag(), pins: pins))
        }
        return domains
    }

    @Test func bothMergesAgreeWithTheRuleNameByName() throws {
        var random = SplitMix(state: 11)
        let issued = Timestamp(secondsSince1970: 1_800_000_000)
        var compared = 0
        for _ in 0..<3_000 {
            let baseDomains = try MergeReferenceTests.domains(&random, count: random.below(6))
            let baseline = try Baseline(domains: baseDomains.filter { !$0.pins.isEmpty })
            let manifestDomains = try MergeReferenceTests.domains(&random, count: random.below(8))
                .filter { !$0.pins.isEmpty }
                .map {
                    ManifestPayload.Domain(
                        name: $0.name, includeSubdomains: $0.includeSubdomains, enforce: $0.enforce, pins: $0.pins)
                }
            let manifest: ManifestPayload? =
                random.below(5) == 0
                ? nil
                : ManifestPayload(
                    scope: "com.example.app", rootVersion: 1, version: 2, issuedAt: issued,
                    expiresAt: issued.adding(seconds: 3_600), domains: manifestDomains)
            var revoked = Set<Pin>()
            for _ in 0..<random.below(4) { revoked.insert(try MergeReferenceTests.pin(random.below(12))) }
            let forced = (0..<random.below(3)).map { _ in MergeReferenceTests.names[random.below(10)] }
            let valid = random.flag()
            let snapshot = PolicySnapshot(
                baseline: baseline, manifest: manifest, manifestValid: valid, revoked: revoked, staleGrace: 0,
                forcedDomains: forced)
            let base = Dictionary(uniqueKeysWithValues: baseline.domains.map { ($0.name, $0) })
            let manifestEntries = manifest.map { payload in
                Dictionary(uniqueKeysWithValues: payload.domains.map { ($0.name, PinnedDomain($0)) })
            }
            let expired = referenceMerge(
                base, manifestEntries, manifestCurrent: false, revoked: revoked, forced: forced)
            #expect(snapshot.expired == expired)
            if manifest != nil, valid {
                let current = referenceMerge(
                    base, manifestEntries, manifestCurrent: true, revoked: revoked, forced: forced)
                #expect(snapshot.current == current)
                compared += 1
            } else {
                #expect(snapshot.current == expired)
            }
        }
        #expect(compared > 1_000)
    }

    /// A payload built in code may name a domain twice; the two entries are combined
    /// fail-closed (flags ORed, only pins in both), in either merge.
    @Test func aDomainNamedTwiceInCodeIsCombinedFailClosed() throws {
        let issued = Timestamp(secondsSince1970: 1_800_000_000)
        let first = ManifestPayload.Domain(
            name: "a.example", includeSubdomains: true, enforce: false,
            pins: [try MergeReferenceTests.pin(1), try MergeReferenceTests.pin(2)])
        let second = ManifestPayload.Domain(
            name: "a.example", includeSubdomains: false, enforce: true,
            pins: [try MergeReferenceTests.pin(2), try MergeReferenceTests.pin(3)])
        let manifest = ManifestPayload(
            scope: "com.example.app", rootVersion: 1, version: 2, issuedAt: issued,
            expiresAt: issued.adding(seconds: 3_600), domains: [first, second])
        let snapshot = PolicySnapshot(
            baseline: try Baseline(domains: []), manifest: manifest, manifestValid: true, revoked: [], staleGrace: 0)
        let entry = snapshot.current.entry(named: "a.example")
        #expect(
            entry
                == PinnedDomain(
                    name: "a.example", includeSubdomains: true, enforce: true,
                    pins: [try MergeReferenceTests.pin(2)]))
        #expect(snapshot.expired.entry(named: "a.example")?.pins == [])
        #expect(snapshot.expired.entry(named: "a.example")?.enforce == true)
    }
}
