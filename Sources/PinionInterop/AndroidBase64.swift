// Pins as Android's Network Security Config reads them: android.util.Base64, which is
// lenient where Pinion's own formats are strict. Written here because the lenient rules
// are Android's, not a general base64 library's (Foundation's decoder refuses them).

import PinionCore

/// The decoding rules Android applies to a `<pin>` (docs/MIGRATING.md lists them):
/// whitespace around the text is ignored; the `=` padding may be missing; the unused low
/// bits of the last character may be non-zero (Android discards them, so `...B=` and
/// `...A=` are the same 32 bytes). Pinion stays stricter where Android's result is a
/// guess: only the standard alphabet (`A-Z a-z 0-9 + /`) is accepted, no characters
/// inside the text are skipped, and the result must be exactly 32 bytes.
enum AndroidBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// - Returns: the pin, and when the text was not canonical padded base64 the reasons
    ///   (`missing padding`, `non-zero unused bits in the last character`); nil when the
    ///   text is not 32 bytes of base64 under these rules.
    static func pin(_ text: String) -> (pin: Pin, changes: [String])? {
        let trimmed = text.trimmingASCIIWhitespace()
        var characters = Array(trimmed.utf8)
        var changes: [String] = []
        if trimmed != text { changes.append("whitespace around it") }
        let padding = characters.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        characters.removeLast(padding)
        // 32 bytes are 43 characters and one "=".
        guard characters.count == 43, padding <= 1, characters.allSatisfy({ alphabet.contains($0) }) else {
            return nil
        }
        if padding == 0 { changes.append("missing padding") }
        // 43 characters carry 258 bits: the last character's 2 low bits are unused.
        if let last = characters.last, let value = alphabet.firstIndex(of: last), value & 0b11 != 0 {
            characters[characters.count - 1] = alphabet[value & ~0b11]
            changes.append("non-zero unused bits in the last character")
        }
        let canonical = String(decoding: characters, as: UTF8.self) + "="
        guard let digest = Base64.decodeCanonical(canonical), digest.count == 32, let pin = try? Pin(digest: digest)
        else { return nil }
        return (pin, changes)
    }
}
