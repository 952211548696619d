// `pinion audit --html`: the page escapes, strips and caps every untrusted value, folds a long
// history into segments with stated caps, and is written like every other output file.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// Values an attacker controls somewhere in an audit: each one tries another way out of the
/// text it is placed in.
let hostileValues = [
    "<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>", "</style><b id=styled>",
    "' onmouseover='alert(3)", "evil\u{202E}gnp.exe", "left\u{2066}isolate", "nul\u{0}byte",
    "escape\u{1B}[31mred", "</title></head><body onload=alert(4)>", "x-member&amp;<!--",
]

/// A real audit (a rotation, a revocation, a version signed by a foreign key) with hostile
/// text in every field that reaches the page: the tree location, finding messages and files
/// (an `x-` member name), the log origin, witness names, URLs and reasons, and a domain name.
func hostileReport() throws -> AuditReport {
    let directory = try TemporaryDirectory()
    let fixture = try cleanFiftyVersions()
    try fixture.append(fixture.next(), signers: [try makeKey()])
    _ = try fixture.write(to: directory.path)
    var report = try audit(fixture, repo: directory.path)
    let long = String(repeating: "A", count: 100_000) + "<script>tail</script>"
    report.location = hostileValues.joined(separator: " ")
    for (index, value) in (hostileValues + [long]).enumerated() {
        report.warnings.append(
            AuditFinding(
                rule: .strayFile, version: Int64(index), file: "history/\(value)",
                message: "unknown member x-\(value) in the payload"))
    }
    var log = LogAuditSummary(origin: "log.example/\(hostileValues[0])\(long)")
    log.cosigners = hostileValues
    log.witnesses = hostileValues.map {
        WitnessView(name: $0, url: "https://\($0)/", state: .unavailable("answered \($0)"))
    }
    report.log = log
    report.domains.append(
        DomainTimeline(
            name: hostileValues[1],
            entries: [
                .init(version: 3, date: t0, event: .added(enforce: true, includeSubdomains: false, pins: [pin(7)]))
            ]
        ))
    return report
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite struct AuditHTMLTests {
    @Test func hostileValuesAreEscapedStrippedAndCapped() throws {
        let page = text(AuditHTML.render(try hostileReport(), hasher: sodium.hasher))
        // No value opened an element or an attribute of its own.
        for markup in ["<script", "<img", "<b id=styled", "onmouseover='", "<body onload", "<!--"] {
            #expect(!page.lowercased().contains(markup), "\(markup)")
        }
        #expect(page.components(separatedBy: "</style>").count == 2, "one style sheet, ended once")
        #expect(head(page).components(separatedBy: "</title>").count == 2, "the title ended once")
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(page.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(page.contains("&#39; onmouseover=&#39;alert(3)"))
        #expect(page.contains("x-member&amp;amp;&lt;!--"))
        // Bidi overrides and isolates, NUL and escape are shown as their code, never as themselves.
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{2066}", "\u{0}", "\u{1B}"] {
            #expect(!page.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16))")
        }
        #expect(page.contains("evil\\u{202E}gnp.exe"))
        #expect(page.contains("left\\u{2066}isolate"))
        #expect(page.contains("nul\\u{0}byte"))
        // A 100 KB value is cut and says so; the page stays small.
        #expect(page.contains("more characters not shown"))
        #expect(!page.contains("<script>tail") && !page.contains("&lt;script&gt;tail"), "the cut-off end is not shown")
        #expect(page.utf8.count < 200_000, "\(page.utf8.count) bytes")
        // Every witness and finding is there.
        #expect(page.contains("[stray-file]"))
        #expect(page.contains("Witnesses (\(hostileValues.count))"))
    }

    @Test func thePolicyForbidsEverythingButThePagesOwnStyleSheet() throws {
        let page = text(AuditHTML.render(try hostileReport(), hasher: sodium.hasher))
        let style = try #require(page.range(of: "<style>")).upperBound
        let end = try #require(page.range(of: "</style>")).lowerBound
        let hash = Base64.encode(sodium.hasher.sha256(Array(page[style..<end].utf8)))
        #expect(
            page.contains(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-\(hash)'\">"
            ))
        // The policy precedes the style sheet and every other element that could fetch.
        let policy = try #require(page.range(of: "Content-Security-Policy")).lowerBound
        #expect(policy < style)
        #expect(!page.contains(" style=\""), "no style attribute (the hash allows the sheet only)")
        #expect(
            !page.contains("http://")
                || page.components(separatedBy: "http://").count - 1 == page.components(
                    separatedBy: "xmlns=\"http://www.w3.org/2000/svg\""
                ).count - 1)
    }

    @Test func theVerdictBannerSaysPassOrFailInWords() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        _ = try fixture.write(to: directory.path)
        let passed = text(AuditHTML.render(try audit(fixture, repo: directory.path), hasher: sodium.hasher))
        #expect(
            passed.contains("class=\"verdict pass\" role=\"status\"><p class=\"verdict-word\">PASS: every rule holds"))
        let failed = text(AuditHTML.render(try hostileReport(), hasher: sodium.hasher))
        #expect(
            failed.contains("class=\"verdict fail\" role=\"status\"><p class=\"verdict-word\">FAIL: 1 violation(s)"))
    }

    @Test func findingsAreGroupedUnderTheirCauseInPlainLanguage() throws {
        let directory = try TemporaryDirectory()
        let fixture = try TamperedTreeTests().fiveVersions()
        let tree = try fixture.write(to: directory.path)
        // Version 3's payload changed after signing: a signature cause, with format findings under it.
        try tree.write(.history(3), try resealed(try tree.read(.history(3))) { $0[$0.count - 2] = UInt8(ascii: " ") })
        let report = try audit(fixture, repo: directory.path)
        let groups = AuditFinding.groups(report.violations)
        let cause = try #require(groups.first { $0.cause?.rule == .manifestSignature }?.cause)
        let page = text(AuditHTML.render(report, hasher: sodium.hasher))
        #expect(page.contains("<h3>\(HTMLWriter.escape(cause.advice))</h3>"))
        #expect(page.contains("<code>[manifest-signature]</code>"))
        #expect(page.contains("FAILING v3"), "the failing version is hatched and labelled")
        #expect(groups.flatMap { ($0.cause.map { [$0] } ?? []) + $0.followers }.count == report.violations.count)
    }

    @Test func segmentsFoldTrustedChangesAndKeepUntrustedOnesApart() {
        let timeline = DomainTimeline(
            name: "api.example.com",
            entries: [
                .init(
                    version: 1, date: t0,
                    event: .added(enforce: true, includeSubdomains: false, pins: [pin(1), pin(2)])),
                .init(version: 5, date: t0, event: .pinAdded(pin(3))),
                .init(version: 6, date: t0, event: .pinAdded(pin(9)), trusted: false),
                .init(version: 8, date: t0, event: .pinRemoved(pin(1))),
                .init(version: 9, date: t0, event: .pinRevoked(pin(2))),
            ])
        let folded = DomainPinSegments(timeline, last: 12)
        #expect(folded.segments.map { [$0.from, $0.until] } == [[1, 4], [5, 7], [8, 12]])
        #expect(folded.segments.map(\.pins) == [[pin(1), pin(2)], [pin(1), pin(2), pin(3)], [pin(2), pin(3)]])
        #expect(
            folded.bars == [
                PinBar(pin: pin(1), from: 1, until: 7), PinBar(pin: pin(2), from: 1, until: 12),
                PinBar(pin: pin(3), from: 5, until: 12),
            ])
        #expect(folded.untrusted.map(\.version) == [6], "an unverified pin is never a bar")
        #expect(folded.revocations == [RevocationEvent(version: 9, date: t0, pin: pin(2), lifted: false)])
    }

    /// 10,000 versions, the backup pin replaced every 10 and 50 failing versions: the page
    /// draws the newest pins, lists the first and last segments, and says what it left out.
    @Test func tenThousandVersionsAreSummarisedAndTheCapsAreStated() {
        var report = AuditReport(scope: "com.example.app", location: "/srv/tree", at: t0, anchorVersion: 1)
        var entries: [DomainTimeline.Entry] = [
            .init(version: 1, date: t0, event: .added(enforce: true, includeSubdomains: false, pins: [pin(1), pin(2)]))
        ]
        var backup = pin(2)
        for version in stride(from: Int64(10), through: 10_000, by: 10) {
            let next = try? Pin(digest: SHA256Digest.of(version))
            guard let next else { continue }
            entries.append(.init(version: version, date: t0.adding(seconds: version * 60), event: .pinAdded(next)))
            entries.append(.init(version: version, date: t0.adding(seconds: version * 60), event: .pinRemoved(backup)))
            backup = next
        }
        report.domains = [DomainTimeline(name: "api.example.com", entries: entries)]
        report.manifests = (1...10_000).map { version in
            ManifestSummary(
                version: Int64(version), rootVersion: 1, issuedAt: t0.adding(seconds: Int64(version) * 60),
                expiresAt: t0.adding(seconds: Int64(version) * 60 + 30 * day), payloadSHA256: nil, signers: ["k"],
                inIndex: true, failure: (5000..<5050).contains(version) ? .manifestSignature : nil)
        }
        let page = text(AuditHTML.render(report, hasher: sodium.hasher))
        let bars = page.components(separatedBy: "<g class=\"bar\">").count - 1
        #expect(bars == AuditHTML.maxLanes, "one bar per drawn pin here")
        #expect(page.contains("the \(AuditHTML.maxLanes) pins present most recently of 1002 are drawn"))
        #expect(page.contains("(1001)</caption>"), "segments counted: the first and one per replacement")
        #expect(page.contains("801 segments not shown (the first and last 100 are)"))
        #expect(page.contains("FAILING v5000–5049"), "a run of failing versions is one hatched column")
        #expect(page.components(separatedBy: "<g class=\"failing\">").count - 1 == 1)
        #expect(page.utf8.count < 1_500_000, "\(page.utf8.count) bytes")
    }
}

/// Deterministic distinct 32-byte digests for synthetic pins.
enum SHA256Digest {
    static func of(_ value: Int64) -> [UInt8] { sodium.hasher.sha256(Array(String(value).utf8)) }
}

@Suite struct AuditHTMLCommandTests {
    @Test func thePageIsWrittenAndTheExitCodeIsUnchanged() throws {
        let clean = try AuditWorld(try simpleHistory(3))
        let cleanPage = clean.directory.path + "/clean.html"
        let passed = clean.audit(["--html", cleanPage])
        #expect(passed.status == 0, "\(passed.err)")
        #expect(passed.out.contains("result      PASS"), "the text report is still printed")
        #expect(text(try CommandFiles.read(cleanPage, limit: 1 << 24)).contains("PASS: every rule holds"))

        let fixture = try simpleHistory(3)
        try fixture.append(fixture.next(), signers: [try makeKey()])
        let failing = try AuditWorld(fixture)
        let failingPage = failing.directory.path + "/failing.html"
        try Data("old".utf8).write(to: URL(fileURLWithPath: failingPage))
        let failed = failing.audit(["--html", failingPage])
        #expect(failed.status == 1)
        let written = text(try CommandFiles.read(failingPage, limit: 1 << 24))
        #expect(written.contains("FAIL: 1 violation(s)"), "an existing regular file is replaced")
        #expect(written.contains("[manifest-foreign-key]"))
    }

    @Test func aTargetThatIsNotARegularFileIsRefusedBeforeTheAudit() throws {
        let world = try AuditWorld(try simpleHistory(2))
        let directory = world.directory.path + "/a-directory"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let intoDirectory = world.audit(["--html", directory])
        #expect(intoDirectory.status == 2)
        #expect(intoDirectory.err.contains("not a regular file"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(!intoDirectory.out.contains("result"), "refused before auditing")

        let target = world.directory.path + "/elsewhere.html"
        let link = world.directory.path + "/link.html"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let throughLink = world.audit(["--html", link])
        #expect(throughLink.status == 2)
        #expect(throughLink.err.contains("symbolic link"))
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    }
}

/// The checker the Chromium tests rely on finds a handler in a real element and none in
/// escaped text or in a quoted value, or their clean results prove nothing.
@Suite struct EventHandlerCheckTests {
    @Test func findsHandlersInElementsOnly() throws {
        #expect(try eventHandlerAttributes(in: #"<body onload="x()"><p>a</p></body>"#) == ["body onload"])
        #expect(try eventHandlerAttributes(in: #"<img src=x onerror=alert(2)>"#) == ["img onerror"])
        #expect(try eventHandlerAttributes(in: #"<p>&lt;img src=x onerror=alert(2)&gt; ' onmouseover='a'</p>"#).isEmpty)
        #expect(
            try eventHandlerAttributes(in: #"<svg aria-label="&quot;><img onerror=a>"><title>t</title></svg>"#).isEmpty)
    }
}
