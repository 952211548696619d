// Every shell block of README.md and docs/*.md, run as written with the built `pinion` on
// PATH, so that a documented command that fails fails this test.
//
// Blocks are the Markdown code blocks: fenced ones (``` with no language, sh, bash, shell
// or console; other languages, such as nginx, are listings) and indented ones after a
// blank line (those starting with `{`, `[`, `<` or `-----BEGIN` are JSON, XML or PEM
// listings, not commands). A block that cannot run here (Swift or Kotlin for apps, cron
// lines, hardware tokens, network hosts, installing on a server, sample output) carries
// ONE marker on the line before it, with its reason:
//
//     <!-- not-run: REASON -->
//
// The test prints how many blocks it ran and skipped, and why. Each document's blocks run
// in order in ONE bash (`set -euo pipefail`), as a reader following along would: files
// and shell variables carry from block to block. README.md and docs/SIGNING.md start in
// an empty directory; the others continue in a copy of the directory the README's signer
// tour leaves (its keys, root, manifests and published `tree/`). Before any block, the
// directory holds what a team brings from outside Pinion, made with openssl: a CA
// (ca.pem), an intermediate (intermediate.pem), the API server's certificate and key
// (server.pem, server.key, chain.pem) for api.example.com, CSRs of offline keys
// (backup.csr, new.csr, new-backup.csr), and the app's Android and iOS files
// (network_security_config.xml, Info.plist) pinning the keys of backup.csr and
// new-backup.csr (those of the README tour's latest manifest).
// PINION_PASSPHRASE is set (the docs give it as one way to pass the passphrase), so no
// command waits for a terminal.

import Foundation
import PinionTestSupport
import Testing

/// One code block of a document.
struct DocumentBlock {
    /// The line of the block's first line (1-based).
    var line: Int
    /// The text, indentation removed.
    var text: String
    /// The reason of its `<!-- not-run: REASON -->` marker, if it has one.
    var notRun: String?
}

enum DocumentBlocks {
    static let marker = "<!-- not-run:"

    /// The shell blocks of `markdown` (listings left out).
    ///
    /// - Throws: `TestSetupError` for a marker without a reason or one not followed by a block.
    static func shellBlocks(_ markdown: String, file: String) throws -> [DocumentBlock] {
        let lines = markdown.components(separatedBy: "\n")
        var blocks: [DocumentBlock] = []
        var index = 0
        var pendingMarker: (reason: String, line: Int)?
        func isBlank(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).isEmpty }
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(marker) {
                guard trimmed.hasSuffix("-->") else {
                    throw TestSetupError(description: "\(file):\(index + 1): a not-run marker must end with -->")
                }
                let reason = trimmed.dropFirst(marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
                guard !reason.isEmpty else {
                    throw TestSetupError(description: "\(file):\(index + 1): a not-run marker needs a reason")
                }
                pendingMarker = (reason, index + 1)
                index += 1
                continue
            }
            if trimmed.hasPrefix("```") {
                let language = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
                var body: [String] = []
                index += 1
                while index < lines.count, !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                    body.append(lines[index])
                    index += 1
                }
                index += 1
                if ["", "sh", "bash", "shell", "console"].contains(language) {
                    blocks.append(
                        DocumentBlock(line: index, text: body.joined(separator: "\n"), notRun: pendingMarker?.reason))
                }
                pendingMarker = nil
                continue
            }
            if line.hasPrefix("    "), !isBlank(line),
                index == 0 || isBlank(lines[index - 1])
                    || lines[index - 1].trimmingCharacters(in: .whitespaces).hasPrefix(marker)
            {
                let start = index
                var body: [String] = []
                while index < lines.count, lines[index].hasPrefix("    ") || isBlank(lines[index]) {
                    body.append(lines[index])
                    index += 1
                }
                while let last = body.last, isBlank(last) { body.removeLast() }
                let indent = body.filter { !isBlank($0) }.map { $0.prefix { $0 == " " }.count }.min() ?? 4
                let text = body.map { isBlank($0) ? "" : String($0.dropFirst(indent)) }.joined(separator: "\n")
                let first = text.trimmingCharacters(in: .whitespacesAndNewlines)
                let listing = ["{", "[", "<", "-----BEGIN"].contains { first.hasPrefix($0) }
                if !listing {
                    blocks.append(DocumentBlock(line: start + 1, text: text, notRun: pendingMarker?.reason))
                } else if let pendingMarker {
                    throw TestSetupError(
                        description:
                            "\(file):\(pendingMarker.line): a not-run marker before a listing (never run anyway)")
                }
                pendingMarker = nil
                continue
            }
            if !isBlank(line), let pendingMarker {
                throw TestSetupError(
                    description: "\(file):\(pendingMarker.line): a not-run marker not followed by a block")
            }
            index += 1
        }
        return blocks
    }
}

@Suite(.serialized) struct ExecutableDocsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// README.md and every docs/*.md, README first (the others continue from its tour).
    static var documents: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot + "/docs")) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// Documents that start in an empty directory rather than after the README's tour.
    static let freshStart: Set<String> = ["README.md", "docs/SIGNING.md"]

    /// What a team brings from outside Pinion (see the file header).
    static let inputs = #"""
        set -euo pipefail
        leaf() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
          -subj "/CN=$2" 2>/dev/null; }
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 30 \
          -subj "/CN=Example Root CA" 2>/dev/null
        leaf intermediate "Example Intermediate CA"
        printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' > ca.ext
        openssl x509 -req -in intermediate.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile ca.ext \
          -out intermediate.pem 2>/dev/null
        leaf server api.example.com
        printf 'subjectAltName=DNS:api.example.com\n' > leaf.ext
        openssl x509 -req -in server.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 30 \
          -extfile leaf.ext -out server.pem 2>/dev/null
        cat server.pem intermediate.pem > chain.pem
        cp server.key key.pem
        leaf backup api.example.com
        leaf new api.example.com
        leaf new-backup api.example.com
        rm -f ca.ext leaf.ext ./*.srl server.csr intermediate.csr
        # The apps pin the keys of the latest manifest of the README's tour: backup, new-backup.
        pin() { openssl req -in "$1" -pubkey -noout | openssl pkey -pubin -outform DER \
          | openssl dgst -sha256 -binary | base64; }
        current=$(pin backup.csr)
        backup=$(pin new-backup.csr)
        cat > network_security_config.xml <<XML
        <?xml version="1.0" encoding="utf-8"?>
        <network-security-config>
            <domain-config>
                <domain includeSubdomains="false">api.example.com</domain>
                <pin-set>
                    <pin digest="SHA-256">$current</pin>
                    <pin digest="SHA-256">$backup</pin>
                </pin-set>
            </domain-config>
        </network-security-config>
        XML
        cat > Info.plist <<PLIST
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict>
        <key>NSPinnedDomains</key><dict><key>api.example.com</key><dict>
        <key>NSPinnedLeafIdentities</key><array>
        <dict><key>SPKI-SHA256-BASE64</key><string>$current</string></dict>
        <dict><key>SPKI-SHA256-BASE64</key><string>$backup</string></dict>
        </array></dict></dict></dict></dict></plist>
        PLIST
        """#

    /// The directory the README's blocks leave, made once.
    static let tour: Result<String, any Error> = Result {
        let directory = try makeTemporaryDirectory(prefix: "pinion-docs-README")
        try run("README.md", in: directory)
        return directory
    }

    /// Seconds one document's blocks may take together.
    static let blockTimeLimit = 300

    /// Runs the inputs script (in a fresh directory) and `document`'s shell blocks in
    /// `directory`; throws with the output when a block fails.
    @discardableResult
    static func run(_ document: String, in directory: String) throws -> (ran: Int, skipped: [DocumentBlock]) {
        let markdown = try String(contentsOfFile: packageRoot + "/" + document, encoding: .utf8)
        let blocks = try DocumentBlocks.shellBlocks(markdown, file: document)
        if freshStart.contains(document) {
            let prepared = try runProgram(
                "/bin/bash", ["-c", inputs], in: directory, environment: environment(directory))
            guard prepared.status == 0 else {
                throw TestSetupError(description: "preparing the inputs failed: \(prepared.out)\(prepared.err)")
            }
        }
        var script = "set -euo pipefail\n"
        for block in blocks where block.notRun == nil {
            script += "printf '\\n### %s\\n' '\(document):\(block.line)' >&2\n" + block.text + "\n"
        }
        // Bounded: a documented command that serves or waits (a listener) must carry a
        // not-run marker, and must not hang the suite when it does not.
        let result = try runProgram(
            "/usr/bin/timeout", ["--kill-after=10", "\(blockTimeLimit)", "/bin/bash", "-c", script], in: directory,
            environment: environment(directory), mergeStandardError: true)
        guard result.status != 124 else {
            throw TestSetupError(
                description: "\(document): its shell blocks ran longer than \(blockTimeLimit) s (a server or a wait "
                    + "without a not-run marker?):\n\(result.out.suffix(2000))")
        }
        guard result.status == 0 else {
            let lastBlock = result.out.components(separatedBy: "### ").last.map { "### " + $0 } ?? result.out
            throw TestSetupError(
                description: "a documented command failed (exit \(result.status)) in the block below:\n\(lastBlock)")
        }
        let skipped = blocks.filter { $0.notRun != nil }
        return (blocks.count - skipped.count, skipped)
    }

    static func environment(_ directory: String) -> [String: String] {
        let bin = URL(fileURLWithPath: pinionExecutable).deletingLastPathComponent().path
        return [
            "PATH": bin + ":/opt/swift/usr/bin:/usr/local/bin:/usr/bin:/bin", "HOME": directory, "LC_ALL": "C.UTF-8",
            "PINION_PASSPHRASE": "documented passphrase for the docs test", "TMPDIR": directory,
        ]
    }

    @Test(arguments: documents)
    func everyShellBlockRuns(document: String) throws {
        let directory: String
        if Self.freshStart.contains(document) {
            directory = try makeTemporaryDirectory(
                prefix: "pinion-docs-" + document.replacingOccurrences(of: "/", with: "-"))
        } else {
            directory = try makeTemporaryDirectory(
                prefix: "pinion-docs-" + document.replacingOccurrences(of: "/", with: "-"))
            let tour = try Self.tour.get()
            for name in try FileManager.default.contentsOfDirectory(atPath: tour) {
                try FileManager.default.copyItem(atPath: tour + "/" + name, toPath: directory + "/" + name)
            }
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (ran, skipped) = try Self.run(document, in: directory)
        print("\(document): \(ran) shell block(s) ran, \(skipped.count) skipped (not-run)")
        for block in skipped { print("  skipped \(document):\(block.line): \(block.notRun ?? "")") }
        #expect(
            ran + skipped.count
                == (try DocumentBlocks.shellBlocks(
                    String(contentsOfFile: Self.packageRoot + "/" + document, encoding: .utf8), file: document)).count)
    }

    /// The README's block that makes the signer tour's inputs with openssl is skipped by the
    /// tour run (the test brings its own); run alone in an empty directory, it must make a
    /// certificate and two CSRs whose pins `pinion spki` reads, each key different.
    @Test func tourInputsAreMadeAsTheReadmeSays() throws {
        let markdown = try String(contentsOfFile: Self.packageRoot + "/README.md", encoding: .utf8)
        let blocks = try DocumentBlocks.shellBlocks(markdown, file: "README.md")
        let making = blocks.filter { $0.text.contains("openssl req -x509") && $0.text.contains("new-backup") }
        try #require(making.count == 1, "one README block makes server.pem and the CSRs")
        let directory = try makeTemporaryDirectory(prefix: "pinion-docs-tour-inputs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = "set -euo pipefail\n" + making[0].text + "\npinion spki server.pem backup.csr new-backup.csr\n"
        let result = try runProgram(
            "/bin/bash", ["-c", script], in: directory, environment: Self.environment(directory))
        #expect(result.status == 0, "\(result.out)\(result.err)")
        let pins = result.out.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(pins.count == 3 && Set(pins).count == 3, "three different SPKI pins: \(result.out)")
        #expect(pins.allSatisfy { $0.hasPrefix("sha256/") }, "\(result.out)")
    }

    @Test func blocksAndMarkersAreFound() throws {
        let markdown = """
            Text.

                pinion --help
                pinion --version

            <!-- not-run: needs a network host -->
                pinion spki --connect api.example.com:443

            A listing:

                {"json": "listing"}

            ```nginx
            server {}
            ```

            ```sh
            echo fenced
            ```
            """
        let blocks = try DocumentBlocks.shellBlocks(markdown, file: "t.md")
        #expect(
            blocks.map(\.text) == [
                "pinion --help\npinion --version", "pinion spki --connect api.example.com:443", "echo fenced",
            ])
        #expect(blocks.map(\.notRun) == [nil, "needs a network host", nil])
        #expect(throws: TestSetupError.self) {
            try DocumentBlocks.shellBlocks("<!-- not-run: -->\n    ls\n", file: "t.md")
        }
        #expect(throws: TestSetupError.self) {
            try DocumentBlocks.shellBlocks("<!-- not-run: x -->\ntext\n", file: "t.md")
        }
    }
}
