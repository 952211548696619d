// A long history: the audit's work grows linearly (each file read once, each manifest
// signature verified once), checked by counting, not by timing (a benchmark belongs in bench/).

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@Suite struct LargeHistoryTests {
    /// A history of 10,000 versions. Signing and writing the tree plus the audit take about 9 s in a
    /// debug build here; lower this if it grows past ~20 s (timings belong in bench/).
    static let versions = 10_000

    @Test func aLongHistoryIsAuditedWithLinearWork() throws {
        let directory = try TemporaryDirectory()
        let fixture = try HistoryFixture()
        for version in 1...Self.versions {
            var payload = fixture.next()
            // Every 100 versions the backup pin is replaced (one pin added, one removed).
            if version % 100 == 0 { payload.domains[0].pins[1] = pin(UInt8(version / 100 % 250 + 3)) }
            // Half an hour apart: the fixture's day spacing would outrun the root's year.
            payload.issuedAt = t0.adding(seconds: Int64(version) * 1800)
            payload.expiresAt = payload.issuedAt.adding(seconds: 30 * day)
            try fixture.append(payload)
        }
        _ = try fixture.write(to: directory.path)
        let counter = CountingVerifier()
        let crypto = CryptoProvider(verifier: counter, hasher: sodium.hasher)
        let source = InstrumentedSource(DirectoryTreeSource(repo: directory.path, scope: fixture.scope))
        let report = try audit(
            fixture, repo: directory.path, at: t0.adding(seconds: Int64(Self.versions) * 1800 + 60), crypto: crypto,
            source: source)
        let violations = report.violations.prefix(3).map(\.description)
        #expect(violations.isEmpty, "\(violations)")
        #expect(report.manifests.count == Self.versions)
        #expect(counter.pinsVerifications == Self.versions)
        // Every history file once, index.json and manifest.json twice, root/1 and the root/2 probe.
        #expect(source.totalReads == Self.versions + 4 + 2)
        #expect(report.timeline("api.example.com")?.entries.count == 1 + 2 * (Self.versions / 100))
    }
}
