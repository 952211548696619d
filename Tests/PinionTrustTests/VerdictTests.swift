// Connection evaluation (docs/DESIGN.md §8) through verdict(for:verifiedChainDER:), the one call a
// platform TLS stack makes: pins come from real DER certificates, checked against openssl's pins.

import Foundation
import PinionCore
import PinionTrust
import Testing

@Suite struct VerdictTests {
    let harness: Harness
    var certificates: Certificates { harness.certificates }

    init() throws { harness = try Harness() }

    /// A refreshed client whose manifest pins `api.example.test` as given.
    func client(pins: [Pin], includeSubdomains: Bool = false, enforce: Bool = true) throws -> PinningClient {
        try harness.publishManifest(version: 1, pins: pins, includeSubdomains: includeSubdomains, enforce: enforce)
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        return client
    }

    @Test func pinsComputedFromDEREqualOpenSSLs() throws {
        let hasher = PortableCrypto.provider.hasher
        for (file, der) in [
            ("root.der", certificates.root), ("intermediate.der", certificates.intermediate),
            ("leaf.der", certificates.leaf), ("second-leaf.der", certificates.secondLeaf),
        ] {
            #expect(try CertificateSPKI.fromCertificateDER(der, hasher: hasher).sha256 == certificates.pin(file).digest)
        }
        #expect(try certificates.pin("leaf.der") != certificates.pin("second-leaf.der"))
    }

    @Test func pinnedLeafIsTrusted() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try client(pins: [try junkPin(0xEE), leaf])
        let verdict = client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(certificates.leaf))
        #expect(verdict == .trusted(pin: leaf, entry: "api.example.test"))
        #expect(harness.recorder.reports.isEmpty)
    }

    @Test func pinnedIntermediateTrustsEveryLeafItIssued() throws {
        let intermediate = try certificates.pin("intermediate.der")
        let client = try client(pins: [intermediate])
        for leaf in [certificates.leaf, certificates.secondLeaf] {
            #expect(
                client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(leaf))
                    == .trusted(pin: intermediate, entry: "api.example.test"))
        }
    }

    @Test func unpinnedKeyIsRejectedAndReported() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try client(pins: [leaf, try junkPin(0xEE)])
        let verified = certificates.chain(certificates.secondLeaf)
        let verdict = client.verdict(
            for: "API.Example.Test.", port: 8443, verifiedChainDER: verified, servedChainDER: verified)
        guard case .rejected(let failure) = verdict else {
            Issue.record("expected a rejection, got \(verdict)")
            return
        }
        #expect(failure.host == "api.example.test")
        #expect(failure.reason == .noMatchingPin)
        let reports = harness.recorder.reports
        #expect(reports.count == 1)
        #expect(reports.first?.hostname == "api.example.test")
        #expect(reports.first?.port == 8443)
        #expect(Set(reports.first?.knownPins ?? []) == [leaf, try junkPin(0xEE)])
        #expect(reports.first?.validatedCertificateChain == verified.map { PinFailureReport.pem(certificateDER: $0) })
    }

    @Test func theServedChainNeverCountsForPinning() throws {
        let client = try client(pins: [try certificates.pin("leaf.der")])
        // The server appended the pinned certificate; the verified path does not contain it.
        let verdict = client.verdict(
            for: "api.example.test", verifiedChainDER: certificates.chain(certificates.secondLeaf),
            servedChainDER: [certificates.secondLeaf, certificates.leaf, certificates.intermediate])
        #expect(isRejected(verdict))
    }

    @Test func reportOnlyGoesOnAndIsReported() throws {
        let client = try client(pins: [try certificates.pin("leaf.der")], enforce: false)
        let verdict = client.verdict(
            for: "api.example.test", verifiedChainDER: certificates.chain(certificates.secondLeaf))
        guard case .reportOnly(let failure) = verdict else {
            Issue.record("expected report-only, got \(verdict)")
            return
        }
        #expect(failure.entry == "api.example.test")
        #expect(harness.recorder.reports.map(\.hostname) == ["api.example.test"])
        // A trusted chain on the same report-only entry is not reported.
        #expect(
            isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(certificates.leaf))))
        #expect(harness.recorder.reports.count == 1)
    }

    @Test func hostsNoEntryCoversAreNotPinned() throws {
        let client = try client(pins: [try certificates.pin("leaf.der")])
        for host in ["www.example.test", "example.test", "v2.api.example.test", "127.0.0.1"] {
            #expect(
                client.verdict(for: host, verifiedChainDER: certificates.chain(certificates.secondLeaf)) == .notPinned)
        }
        #expect(harness.recorder.reports.isEmpty)
    }

    @Test func includeSubdomainsCoversSubdomainsOnLabelBoundariesOnly() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try client(pins: [leaf], includeSubdomains: true)
        let good = certificates.chain(certificates.leaf)
        let other = certificates.chain(certificates.secondLeaf)
        for host in ["api.example.test", "v2.api.example.test", "a.b.api.example.test"] {
            #expect(client.verdict(for: host, verifiedChainDER: good) == .trusted(pin: leaf, entry: "api.example.test"))
            #expect(isRejected(client.verdict(for: host, verifiedChainDER: other)))
        }
        for host in ["xapi.example.test", "api.example.test.evil.test", "example.test", "pi.example.test"] {
            #expect(client.verdict(for: host, verifiedChainDER: other) == .notPinned)
        }
    }

    @Test func certificatesThatAreNotStrictDERDoNotCount() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try client(pins: [leaf])
        let truncated = Array(certificates.leaf.dropLast(1))
        let trailing = certificates.leaf + [0x00]
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        for bad in [truncated, trailing, garbage, []] {
            // The bytes still carry the pinned SPKI, but a certificate that is not strict DER
            // is skipped, so only the intermediate and root remain, and neither is pinned.
            let verdict = client.verdict(
                for: "api.example.test", verifiedChainDER: [bad, certificates.intermediate, certificates.root])
            #expect(isRejected(verdict))
        }
        // A chain with no usable certificate at all is refused like an empty verified chain.
        #expect(isRejected(client.verdict(for: "api.example.test", verifiedChainDER: [truncated, garbage])))
        #expect(isRejected(client.verdict(for: "api.example.test", verifiedChainDER: [])))
        // The reports carry only the certificates that counted.
        let last = harness.recorder.reports.last
        #expect(last?.validatedCertificateChain.isEmpty == true)
        // A bad certificate does not hide a good one after it.
        #expect(
            client.verdict(for: "api.example.test", verifiedChainDER: [garbage, certificates.leaf])
                == .trusted(pin: leaf, entry: "api.example.test"))
    }
}
