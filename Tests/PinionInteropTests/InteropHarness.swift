// Test harness of the interop tests: PinionTestSupport's workspace (`pinion` in-process,
// fixed "now") with the interop helpers, and the fixtures next to this file.

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

extension Workspace {
    /// An interop test workspace (`pinion-interop-…`, empty) whose "now" is
    /// 2026-11-30T09:00:00Z.
    static func interop() throws -> Workspace { try Workspace(prefix: "pinion-interop") }

    /// The manifest payload file `name`, parsed strictly.
    func payload(_ name: String) throws -> ManifestPayload { try ManifestPayload.parse(try readBytes(name)) }

    /// Signs payload file `payload` into envelope `name` with the pins key.
    func sign(_ payload: String, to name: String, _ extra: [String] = []) {
        ok(["sign", "--key", "@pins.key", "@" + payload, "-o", "@" + name] + extra)
    }
}

/// A fixture file next to this source file.
func fixture(_ relativePath: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .appendingPathComponent(relativePath)
    return [UInt8](try Data(contentsOf: url))
}

/// A pin of 32 equal bytes.
func testPin(_ byte: UInt8) -> String { "sha256/" + Data(repeating: byte, count: 32).base64EncodedString() }

/// The bare base64 of a `testPin`.
func testBase64(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

/// The path of a tool when it is installed (xmllint, plutil), else nil.
func installedTool(_ name: String) -> String? {
    let candidates = ["/usr/bin/\(name)", "/opt/swift/usr/bin/\(name)", "/usr/local/bin/\(name)"]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}
