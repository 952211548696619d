// The audit page in Debian's headless Chromium, network off: no console message (a CSP
// violation is one, shown by a control page that must produce it), every finding and domain in
// the DOM, no hostile value turned into an element, and a screenshot written.

import Foundation
import PinionAudit
import PinionCore
import PinionSystem
import PinionTestSupport
import Testing

@Suite(.serialized) struct AuditPageInChromiumTests {
    @Test(
        .enabled(
            if: HeadlessChromium.isInstalled,
            "chromium is not installed (Debian package chromium; scripts/install-deps)"))
    func theAuditPageLoadsCleanlyWithEveryFindingAndDomain() throws {
        let directory = try TemporaryDirectory()
        let chromium = HeadlessChromium(workDirectory: directory.path)
        let report = try hostileReport()
        let file = directory.path + "/audit.html"
        try Data(AuditHTML.render(report, hasher: sodium.hasher)).write(to: URL(fileURLWithPath: file))

        let page = try chromium.load(file)
        #expect(page.consoleMessages.isEmpty, "\(page.consoleMessages)")
        // Chromium's own serialisation: elements it built, text it escaped again.
        let dom = page.dom.lowercased()
        for element in ["<script", "<img", "<b id=\"styled\""] {
            #expect(!dom.contains(element), "\(element) became markup")
        }
        #expect(try eventHandlerAttributes(in: page.dom).isEmpty, "an event handler became markup")
        for finding in report.violations + report.warnings {
            #expect(page.dom.contains("[\(finding.rule.rawValue)]"))
            #expect(page.dom.contains(HTMLWriter.escape(finding.advice).replacingOccurrences(of: "&#39;", with: "'")))
        }
        for domain in report.domains {
            let heading = HTMLWriter.escape(domain.name).replacingOccurrences(of: "&quot;", with: "\"")
            #expect(page.dom.contains(heading + "</h3>"), "\(domain.name)")
        }
        #expect(page.dom.contains("<svg"), "the timeline is drawn")

        let png = directory.path + "/audit.png"
        try chromium.screenshot(file, to: png)
        let bytes = try CommandFiles.read(png, limit: 1 << 26)
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        #expect(bytes.count > 10_000)
        if let keep = ProcessInfo.processInfo.environment["PINION_KEEP_SCREENSHOT"] {
            try Data(bytes).write(to: URL(fileURLWithPath: keep))
        }
    }

    /// The control: the same policy on a page with an inline script and an unlisted style
    /// sheet must log violations, or the clean result above proves nothing.
    @Test(
        .enabled(
            if: HeadlessChromium.isInstalled,
            "chromium is not installed (Debian package chromium; scripts/install-deps)"))
    func aPolicyViolationIsSeenAsAConsoleMessage() throws {
        let directory = try TemporaryDirectory()
        let chromium = HeadlessChromium(workDirectory: directory.path)
        var body = HTMLWriter()
        body.element("p", "control")
        let clean = text(
            HTMLWriter.document(title: "control", style: "p{color:#111}", body: body, hasher: sodium.hasher))
        let hostile = clean.replacingOccurrences(
            of: "</body>", with: "<script>document.title='ran'</script><style>p{color:red}</style></body>")
        let file = directory.path + "/control.html"
        try Data(hostile.utf8).write(to: URL(fileURLWithPath: file))
        let page = try chromium.load(file)
        #expect(page.consoleMessages.contains { $0.contains("Content Security Policy") && $0.contains("script") })
        #expect(page.consoleMessages.contains { $0.contains("Content Security Policy") && $0.contains("style") })
        #expect(page.dom.contains("<title>control</title>"), "the script did not run")
    }
}
