// Test-only probe: runs `pinion sign` in this process with a file key and a PKCS#11 key,
// then scans every writable anonymous mapping of the process (/proc/self/maps,
// /proc/self/mem) for the PIN and the passphrase. Run by PinionHardwareTests.
//
// usage: PinionMemoryProbe MASKED_PIN_HEX MASKED_PASSPHRASE_HEX MASKED_CANARY_HEX -- SIGN_ARGUMENTS...
// The secrets arrive XOR 0x5A, hex-encoded, and are compared masked byte by byte, so the
// probe itself never holds them in clear. The canary is unmasked into a live array before
// the scan: finding it shows that the scan can find what is there.

import Foundation
import PinionCLI
import PinionCore

let mask: UInt8 = 0x5A

func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
            return nil
        }
        bytes.append(byte)
    }
    return bytes
}

/// Occurrences of the masked needle in `haystack`.
func occurrences(ofMasked needle: [UInt8], in haystack: [UInt8]) -> Int {
    guard let first = needle.first, haystack.count >= needle.count else { return 0 }
    var found = 0
    for index in 0...(haystack.count - needle.count) where haystack[index] ^ mask == first {
        var match = true
        for offset in 1..<needle.count where haystack[index + offset] ^ mask != needle[offset] {
            match = false
            break
        }
        if match { found += 1 }
    }
    return found
}

/// (pin, passphrase, canary) occurrences and bytes scanned, over the writable mappings that
/// have no file behind them (unnamed, [heap], [stack]).
func scan(_ needles: [[UInt8]]) throws -> ([Int], Int, Int) {
    // Read to the end through a file handle: /proc files report size 0, and a size-based
    // read (String(contentsOfFile:)) stops after the first page of mappings.
    let mapsHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps"))
    defer { try? mapsHandle.close() }
    let maps = String(decoding: try mapsHandle.readToEnd() ?? Data(), as: UTF8.self)
    let memory = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/mem"))
    defer { try? memory.close() }
    var counts = [Int](repeating: 0, count: needles.count)
    var scanned = 0
    var mappings = 0
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 5, fields[1].hasPrefix("rw") else { continue }
        let name = fields.count >= 6 ? String(fields[5]) : ""
        guard name.isEmpty || name == "[heap]" || name.hasPrefix("[stack") else { continue }
        let range = fields[0].split(separator: "-")
        guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) else {
            continue
        }
        mappings += 1
        var offset = start
        let overlap = UInt64(64)
        while offset < end {
            let length = Int(min(end - offset, 1 << 20))
            try memory.seek(toOffset: offset)
            guard let chunk = try? memory.read(upToCount: length), !chunk.isEmpty else { break }
            let bytes = [UInt8](chunk)
            for (index, needle) in needles.enumerated() { counts[index] += occurrences(ofMasked: needle, in: bytes) }
            scanned += chunk.count
            offset += UInt64(chunk.count)
            if offset < end { offset -= min(overlap, UInt64(chunk.count)) }
        }
    }
    return (counts, scanned, mappings)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count > 4, arguments[3] == "--", let pin = hexBytes(arguments[0]),
    let passphrase = hexBytes(arguments[1]),
    let maskedCanary = hexBytes(arguments[2])
else {
    FileHandle.standardError.write(
        Data("usage: PinionMemoryProbe PIN_HEX PASSPHRASE_HEX CANARY_HEX -- SIGN_ARGS\n".utf8))
    exit(2)
}

let captured = Captured()
let status = PinionCommandLine.run(
    Array(arguments.dropFirst(4)),
    context: CLIContext(
        out: { captured.append($0) }, err: { captured.append($0) }, now: { Timestamp(secondsSince1970: 1_796_029_200) })
)

let canary = maskedCanary.map { $0 ^ mask }
let (counts, scanned, mappings) = try withExtendedLifetime(canary) { try scan([pin, passphrase, maskedCanary]) }
print("sign-status \(status)")
print("pin-found \(counts[0])")
print("passphrase-found \(counts[1])")
print("canary-found \(counts[2])")
print("scanned-bytes \(scanned) mappings \(mappings)")
FileHandle.standardError.write(Data(captured.text.utf8))

/// What the in-process command printed.
final class Captured: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    func append(_ text: String) { lock.withLock { buffer += text } }
    var text: String { lock.withLock { buffer } }
}
