// The one-pass canonical base64 decoder and the pin fast path against the Foundation-based rule
// they replace (decode, re-encode, compare), on generated, mutated and hostile input.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

/// The rule before the one-pass decoder: Foundation decodes and the re-encoding must be the input.
private func foundationCanonical(_ text: String) -> [UInt8]? {
    guard let data = Data(base64Encoded: text) else { return nil }
    guard data.base64EncodedString() == text else { return nil }
    return [UInt8](data)
}

/// `Pin.init(_:)` before its byte fast path: the same checks, in the same order, with the old decoder.
private func referencePin(_ text: String) -> Result<[UInt8], FormatRule> {
    guard text.hasPrefix("sha256/") else { return .failure(.invalidPin("must start with sha256/")) }
    guard let bytes = foundationCanonical(String(text.dropFirst("sha256/".count))) else {
        return .failure(.invalidPin("not canonical padded base64"))
    }
    guard bytes.count == 32 else {
        return .failure(.invalidPin("not 32 bytes after base64 decoding (got \(bytes.count))"))
    }
    return .success(bytes)
}

private func pinResult(_ text: String) -> Result<[UInt8], FormatRule> {
    do { return .success(try Pin(text).digest) } catch { return .failure(error) }
}

/// Characters a mutation puts in: the alphabet's edges, padding, the URL alphabet, whitespace,
/// a NUL, non-ASCII (a combining accent, a fullwidth A, a lone continuation byte's scalar).
private let hostileCharacters: [String] = [
    "A", "Z", "a", "z", "0", "9", "+", "/", "=", "-", "_", " ", "\n", "\r", "\t", "\u{0}", "\u{301}", "Ａ", "é",
    "\u{80}", ".", "%", "\\",
]

/// One random edit of `text`: replace, insert or delete a character, or truncate.
private func mutate(_ text: String, _ random: inout SplitMix) -> String {
    var characters = Array(text.unicodeScalars).map { String($0) }
    let position = characters.isEmpty ? 0 : random.below(characters.count)
    switch random.below(4) {
    case 0 where !characters.isEmpty:
        characters[position] = hostileCharacters[random.below(hostileCharacters.count)]
    case 1:
        characters.insert(hostileCharacters[random.below(hostileCharacters.count)], at: position)
    case 2 where !characters.isEmpty:
        characters.remove(at: position)
    default:
        characters = Array(characters.prefix(position))
    }
    return characters.joined()
}

@Suite struct CanonicalBase64Tests {
    @Test func decodesEveryEncodingOfRandomBytes() {
        var random = SplitMix(state: 1)
        for length in 0..<200 {
            for _ in 0..<20 {
                let bytes = random.bytes(length)
                let text = Base64.encode(bytes)
                #expect(Base64.decodeCanonical(text) == bytes, "length \(length): \(text)")
                #expect(Base64.decodeCanonical(utf8: Array(text.utf8)) == bytes)
            }
        }
    }

    @Test func agreesWithTheReencodingRuleOnMutatedInput() {
        var random = SplitMix(state: 2)
        var refused = 0
        for round in 0..<40_000 {
            var text = Base64.encode(random.bytes(random.below(40)))
            for _ in 0...random.below(3) { text = mutate(text, &random) }
            let expected = foundationCanonical(text)
            #expect(Base64.decodeCanonical(text) == expected, "round \(round): \(text.debugDescription)")
            if expected == nil { refused += 1 }
        }
        // The mutations must exercise refusals, not only re-spell valid input.
        #expect(refused > 20_000)
    }

    @Test func agreesWithTheReencodingRuleOnEveryShortStringOfEdgeCharacters() {
        // Every string of up to 4 characters over the characters where the rules differ.
        let characters = ["A", "B", "Q", "g", "w", "/", "+", "=", "-", " "]
        var texts = [""]
        var all = [""]
        for _ in 0..<4 {
            texts = texts.flatMap { prefix in characters.map { prefix + $0 } }
            all += texts
        }
        for text in all {
            #expect(Base64.decodeCanonical(text) == foundationCanonical(text), "\(text.debugDescription)")
        }
    }

    @Test func refusesEachNonCanonicalSpelling() {
        let refused = [
            "QQ",  // padding missing
            "QQ=",  // padding short
            "QR==",  // non-zero bits under the padding (one byte)
            "QUJ=",  // non-zero bits under the padding (two bytes)
            "Q===",  // three padding characters
            "====",  // padding only
            "QQ==QQ==",  // padding inside
            "=QQ=",  // padding first
            "QUJD\n",  // whitespace
            " QUJD",
            "QU JD",
            "-_-_",  // the URL alphabet (RFC 4648 §5)
            "QUJ\u{301}",  // non-ASCII
            "ＱＵＪＤ",  // fullwidth letters
            "QUJD\u{0}",  // a NUL
        ]
        for text in refused {
            #expect(Base64.decodeCanonical(text) == nil, "\(text.debugDescription)")
            #expect(foundationCanonical(text) == nil, "the reference also refuses \(text.debugDescription)")
        }
        #expect(Base64.decodeCanonical("") == [])
        #expect(Base64.decodeCanonical("QQ==") == [0x41])
        #expect(Base64.decodeCanonical("QUI=") == [0x41, 0x42])
        #expect(Base64.decodeCanonical("QUJD") == [0x41, 0x42, 0x43])
    }

    @Test func pinFastPathAgreesWithTheCheckedPathOnMutatedPins() {
        var random = SplitMix(state: 3)
        var accepted = 0
        for round in 0..<30_000 {
            var text = "sha256/" + Base64.encode(random.bytes(32))
            let edits = random.below(4)
            for _ in 0..<edits { text = mutate(text, &random) }
            if random.below(10) == 0 { text = "sha256/" + Base64.encode(random.bytes(random.below(40))) }
            let expected = referencePin(text)
            #expect(pinResult(text) == expected, "round \(round): \(text.debugDescription)")
            if case .success = expected { accepted += 1 }
        }
        #expect(accepted > 5_000)
        #expect(accepted < 25_000)
    }

    @Test func pinRefusalsKeepTheirReasons() {
        let digest = [UInt8](repeating: 7, count: 32)
        let good = "sha256/" + Base64.encode(digest)
        #expect(pinResult(good) == .success(digest))
        let cases: [(String, FormatRule)] = [
            ("sha1/" + Base64.encode(digest), .invalidPin("must start with sha256/")),
            ("SHA256/" + Base64.encode(digest), .invalidPin("must start with sha256/")),
            (String(good.dropLast()), .invalidPin("not canonical padded base64")),
            (good + "=", .invalidPin("not canonical padded base64")),
            (
                "sha256/" + Base64.encode([UInt8](repeating: 7, count: 31)),
                .invalidPin("not 32 bytes after base64 decoding (got 31)")
            ),
            (
                "sha256/" + Base64.encode([UInt8](repeating: 7, count: 33)),
                .invalidPin("not 32 bytes after base64 decoding (got 33)")
            ),
            ("sha256/", .invalidPin("not 32 bytes after base64 decoding (got 0)")),
            // 51 bytes, right prefix, but a combining accent inside: refused by the checked path.
            (
                "sha256/" + String(Base64.encode(digest).dropLast(2)) + "\u{301}",
                .invalidPin("not canonical padded base64")
            ),
        ]
        for (text, rule) in cases {
            #expect(pinResult(text) == .failure(rule), "\(text.debugDescription)")
            #expect(referencePin(text) == .failure(rule))
        }
    }
}
