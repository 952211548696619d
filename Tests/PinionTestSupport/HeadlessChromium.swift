// Debian's Chromium, headless and with the network off, as the oracle for the HTML pages:
// the DOM it builds, the console messages it logs (a Content-Security-Policy violation is
// one) and a screenshot.

import Foundation

/// What Chromium made of one page.
public struct ChromiumPage: Sendable {
    /// The serialised DOM after loading (`--dump-dom`).
    public var dom: String
    /// Every console message Chromium logged for the page (`INFO:CONSOLE` lines of its
    /// stderr log: console calls, CSP violations, script errors).
    public var consoleMessages: [String]
}

/// Runs `/usr/bin/chromium --headless` on local files, each run bounded by `timeoutSeconds`.
public struct HeadlessChromium: Sendable {
    /// Debian's package `chromium` installs it here (scripts/install-deps).
    public static let path = "/usr/bin/chromium"
    /// Whether the browser is installed.
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// A budget per run, in seconds (coreutils `timeout`, then SIGKILL 5 s later).
    public var timeoutSeconds = 90
    /// The profile and crash directories live here.
    public let workDirectory: String

    /// - Parameter workDirectory: an empty directory for the profile.
    public init(workDirectory: String) { self.workDirectory = workDirectory }

    /// The flags of every run: headless, no GPU, every host unresolvable and every proxy a
    /// closed port, so nothing leaves the machine, and console messages logged to stderr.
    private var flags: [String] {
        [
            "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
            "--user-data-dir=\(workDirectory)/profile", "--crash-dumps-dir=\(workDirectory)/crashes",
            "--enable-logging=stderr", "--v=0",
        ]
    }

    private func run(_ extra: [String], file: String) throws -> CommandResult {
        let result = try runProgram(
            "/usr/bin/timeout",
            ["--kill-after=5", String(timeoutSeconds), Self.path] + flags + extra + ["file://" + file],
            environment: ["HOME": workDirectory, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        guard result.status == 0 else {
            throw TestSetupError(
                description:
                    "chromium on \(file) exited \(result.status) (124: over \(timeoutSeconds) s): \(result.err.suffix(2000))"
            )
        }
        return result
    }

    /// Loads `file` and returns its DOM and console messages.
    ///
    /// - Throws: `TestSetupError` when Chromium fails or runs out of time.
    public func load(_ file: String) throws -> ChromiumPage {
        let result = try run(["--dump-dom"], file: file)
        let console = result.err.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return ChromiumPage(dom: result.out, consoleMessages: console)
    }

    /// Writes a PNG screenshot of `file` to `png`, `width` by `height` CSS pixels.
    ///
    /// - Throws: `TestSetupError` when Chromium fails or runs out of time.
    public func screenshot(_ file: String, to png: String, width: Int = 1280, height: Int = 2400) throws {
        _ = try run(["--screenshot=\(png)", "--window-size=\(width),\(height)", "--hide-scrollbars"], file: file)
    }
}

/// The document's head: everything before the first `</head>` (the whole text when there is
/// none), where an attacker's `</title>` would end the title early.
///
/// - Parameter page: an HTML document.
/// - Returns: its head's markup.
public func head(_ page: String) -> String {
    guard let end = page.range(of: "</head>") else { return page }
    return String(page[..<end.lowerBound])
}

/// The event handler attributes (`onload`, `onerror`, ...) of every element in `markup`, as
/// `tag attribute` strings. Built for serialised DOMs and for our own pages, where every `<`
/// in text and every `"` in an attribute value is a character reference: a `<` starts an
/// element, and a quoted value ends at the next `"`.
///
/// - Parameter markup: serialised HTML.
/// - Returns: one entry per handler attribute found, empty when there is none.
/// - Throws: what `NSRegularExpression` throws for a pattern it cannot compile.
public func eventHandlerAttributes(in markup: String) throws -> [String] {
    let tag = try NSRegularExpression(
        pattern: #"<([A-Za-z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*/?>"#)
    let attribute = try NSRegularExpression(pattern: #"\s([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?"#)
    let text = markup as NSString
    var found: [String] = []
    for element in tag.matches(in: markup, range: NSRange(location: 0, length: text.length)) {
        let name = text.substring(with: element.range(at: 1))
        let attributes = text.substring(with: element.range(at: 2))
        let list = attributes as NSString
        for match in attribute.matches(in: attributes, range: NSRange(location: 0, length: list.length)) {
            let attributeName = list.substring(with: match.range(at: 1)).lowercased()
            if attributeName.hasPrefix("on") { found.append("\(name) \(attributeName)") }
        }
    }
    return found
}
