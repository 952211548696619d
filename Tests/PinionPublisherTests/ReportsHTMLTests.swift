// `pinion reports --html`: failures by host, served key and day as one page, with every
// client-sent value escaped, stripped of control and bidi characters and capped, checked as
// text and in Debian's headless Chromium with the network off.

import Foundation
import PinionCore
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Testing

@Suite(.serialized) struct ReportsHTMLTests {
    let directory: String
    let chain: (first: String, second: String)

    init() throws {
        directory = try makeTemporaryDirectory(prefix: "pinion-reports-html")
        chain = try reportCertificates()
    }

    /// A store with two served keys on two days, then hostile values written straight into it
    /// (the database is input too): markup, a script, attribute breakers, a bidi override and
    /// isolate, ESC and NUL, and a 100 KB app version.
    func hostileStore() throws -> String {
        let path = directory + "/hostile.sqlite"
        let store = try ReportStore(path: path, create: true)
        let first = try ReceivedReport.parse(Array(reportBody(chain: [chain.first], appVersion: "2.1").utf8))
        let second = try ReceivedReport.parse(Array(reportBody(chain: [chain.second], appVersion: "2.0").utf8))
        _ = store.commit([(first, "com.example.app", "10.0.0.1")], at: t0.adding(seconds: -day))
        _ = store.commit([(first, "com.example.app", "10.0.0.1")], at: t0)
        _ = store.commit([(second, "com.example.app", "10.0.0.2")], at: t0)
        _ = try sqlite3(
            path,
            """
            UPDATE reports SET
              hostname = '<script>alert(1)</script>"><img src=x onerror=alert(2)>' || char(8238) || 'gnp.exe'
                || char(8294) || char(27) || '[31m' || char(0) || 'end',
              app_version = '</style><b id=styled>'' onmouseover=''alert(3)' || printf('%.*c', 100000, 'V') || '<script>tail</script>'
            WHERE app_version = '2.1';
            UPDATE reports SET app_version = '</title><body onload=alert(4)>' WHERE app_version = '2.0';
            UPDATE key_days SET hostname = (SELECT hostname FROM reports WHERE app_version LIKE '</style>%')
            WHERE served_pin = (SELECT served_pin FROM reports WHERE app_version LIKE '</style>%');
            UPDATE key_sources SET hostname = (SELECT hostname FROM reports WHERE app_version LIKE '</style>%')
            WHERE served_pin = (SELECT served_pin FROM reports WHERE app_version LIKE '</style>%');
            """)
        return path
    }

    func reports(_ path: String, _ extra: [String]) -> CommandResult {
        runPinion(["reports", path, "--at", t0.adding(seconds: 60).description] + extra)
    }

    @Test func hostileReportValuesAreEscapedStrippedAndCapped() throws {
        let database = try hostileStore()
        let out = directory + "/reports.html"
        let result = reports(database, ["--html", out])
        #expect(result.status == 0, "\(result.err)")
        let page = String(decoding: try CommandFiles.read(out, limit: 1 << 24), as: UTF8.self)
        for markup in ["<script", "<img", "<b id=styled", "onmouseover='", "<body onload"] {
            #expect(!page.lowercased().contains(markup), "\(markup)")
        }
        #expect(page.components(separatedBy: "</style>").count == 2)
        #expect(head(page).components(separatedBy: "</title>").count == 2, "the title ended once")
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(page.contains("&lt;/style&gt;&lt;b id=styled&gt;&#39; onmouseover=&#39;alert(3)"))
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{2066}", "\u{1B}", "\u{0}"] {
            #expect(!page.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16))")
        }
        #expect(page.contains("\\u{202E}gnp.exe\\u{2066}\\u{1B}[31m"))
        #expect(page.contains("more characters not shown"))
        #expect(!page.contains("<script>tail") && !page.contains("&lt;script&gt;tail"), "the cut-off end is not shown")
        #expect(page.utf8.count < 100_000, "\(page.utf8.count) bytes")
        #expect(page.contains("Which keys do clients see that our pins would refuse? (2)"))
        #expect(page.contains("Reports are not authenticated"))
        #expect(page.contains("content=\"default-src 'none'; style-src 'sha256-"))
    }

    @Test func theExitCodeIsUnchangedAndABadTargetIsRefused() throws {
        let database = try hostileStore()
        let plain = reports(database, [])
        let out = directory + "/again.html"
        let withPage = reports(database, ["--html", out])
        #expect(plain.status == 0 && withPage.status == 0)
        #expect(plain.out == withPage.out, "the text report is the same")
        let empty = directory + "/empty.sqlite"
        _ = try ReportStore(path: empty, create: true)
        let nothing = reports(empty, ["--html", directory + "/empty.html"])
        #expect(nothing.status == 0)
        let emptyPage = try CommandFiles.read(directory + "/empty.html", limit: 1 << 20)
        #expect(String(decoding: emptyPage, as: UTF8.self).contains("No served key was refused."))

        let target = directory + "/a-directory"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        let refused = reports(database, ["--html", target])
        #expect(refused.status == 2)
        #expect(refused.err.contains("not a regular file"))
        #expect(refused.out.isEmpty, "refused before reading the store")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
    }

    @Test(
        .enabled(
            if: HeadlessChromium.isInstalled,
            "chromium is not installed (Debian package chromium; scripts/install-deps)"))
    func theReportsPageLoadsCleanlyInChromium() throws {
        let database = try hostileStore()
        let out = directory + "/chromium.html"
        #expect(reports(database, ["--html", out]).status == 0)
        let chromium = HeadlessChromium(workDirectory: directory + "/chromium")
        let page = try chromium.load(out)
        #expect(page.consoleMessages.isEmpty, "\(page.consoleMessages)")
        let dom = page.dom.lowercased()
        for element in ["<script", "<img", "<b id=\"styled\""] {
            #expect(!dom.contains(element), "\(element) became markup")
        }
        #expect(try eventHandlerAttributes(in: page.dom).isEmpty, "an event handler became markup")
        let store = try ReportStore(path: database, create: false)
        for key in try store.refusedKeys(scope: nil, since: t0.adding(seconds: -7 * day)) {
            #expect(page.dom.contains("pin-sha256=\"\(key.servedPin)\""), "\(key.servedPin)")
        }
        #expect(page.dom.contains("Failures by host (2)"))
        #expect(page.dom.contains("Failures by day (2 day(s))"))
        let png = directory + "/reports.png"
        try chromium.screenshot(out, to: png, height: 1600)
        let bytes = try CommandFiles.read(png, limit: 1 << 26)
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        if let keep = ProcessInfo.processInfo.environment["PINION_KEEP_REPORTS_SCREENSHOT"] {
            try Data(bytes).write(to: URL(fileURLWithPath: keep))
        }
    }
}
