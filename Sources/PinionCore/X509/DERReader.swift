// A small strict DER reader (ITU-T X.690 §8.1 and §10.1): definite, minimal lengths, low tag numbers,
// bounds-checked; written here because Foundation has no ASN.1 reader and the pin must not depend on
// a platform's certificate library (one implementation for Linux, Apple and the JVM ports' oracle).

/// Why bytes are not the strict DER this reader accepts. Offsets are 0-based byte indices
/// into the input given to the reader.
public enum DERError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends inside an element header or its content.
    case truncated(offset: Int)
    /// A length octet of 0x80 (BER's indefinite length; X.690 §10.1 forbids it in DER).
    case indefiniteLength(offset: Int)
    /// A length written in more octets than needed (X.690 §10.1: the shortest form).
    case nonMinimalLength(offset: Int)
    /// A length written in more than 4 octets (over 4 GiB; never a certificate's).
    case lengthTooLarge(offset: Int)
    /// A tag in the high-tag-number form (low five bits 11111), which X.509 certificates do not use.
    case unsupportedTag(offset: Int)
    /// Another tag than the structure requires; tags are whole identifier octets (0x30 SEQUENCE).
    case unexpectedTag(expected: UInt8, found: UInt8, offset: Int)
    /// Bytes after the last element of a structure (or of the input).
    case trailingData(offset: Int)
    /// Constructed elements nested deeper than the reader allows.
    case nestingTooDeep(offset: Int)
    /// A universal type in the encoding DER forbids for it (X.690 §10.2 and §8.9-8.12: only
    /// SEQUENCE and SET are constructed; strings and all other types are primitive).
    case wrongConstruction(offset: Int)
    /// A primitive value that is not in its DER form (X.690 §11.1 BOOLEAN 0x00 or 0xFF, §8.3.2
    /// minimal INTEGER and ENUMERATED, §8.8 empty NULL, §8.19.2 minimal OBJECT IDENTIFIER
    /// subidentifiers, §11.2 BIT STRING with at most 7 unused bits, all zero).
    case nonCanonicalValue(offset: Int)

    /// A one-line, human-readable explanation.
    public var description: String {
        switch self {
        case .truncated(let offset): return "DER truncated at byte \(offset)"
        case .indefiniteLength(let offset): return "indefinite length (BER, not DER) at byte \(offset)"
        case .nonMinimalLength(let offset): return "length not in its shortest form at byte \(offset)"
        case .lengthTooLarge(let offset): return "length too large at byte \(offset)"
        case .unsupportedTag(let offset): return "high-tag-number form at byte \(offset)"
        case .unexpectedTag(let expected, let found, let offset):
            return
                "expected tag 0x\(String(expected, radix: 16)), found 0x\(String(found, radix: 16)) at byte \(offset)"
        case .trailingData(let offset): return "unexpected bytes after the last element, at byte \(offset)"
        case .nestingTooDeep(let offset): return "elements nested too deeply at byte \(offset)"
        case .wrongConstruction(let offset): return "constructed or primitive where DER forbids it, at byte \(offset)"
        case .nonCanonicalValue(let offset): return "a value not in its DER form at byte \(offset)"
        }
    }
}

/// One TLV element: its identifier octet and the byte ranges of the whole element and its content.
struct DERElement: Sendable, Equatable {
    let tag: UInt8
    /// Index of the identifier octet.
    let start: Int
    /// Index of the first content octet.
    let contentStart: Int
    /// Index just past the last content octet.
    let end: Int

    var isConstructed: Bool { tag & 0x20 != 0 }
    var element: Range<Int> { start..<end }
    var content: Range<Int> { contentStart..<end }
}

/// Reads the consecutive elements of `bytes[range]`, in order.
struct DERReader {
    /// Nesting depth up to which `validate` descends into constructed elements.
    static let maximumDepth = 32

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
    }

    var isAtEnd: Bool { position >= end }

    /// The next element; throws on a malformed header or a length past this reader's end.
    mutating func next() throws -> DERElement {
        let start = position
        guard position < end else { throw DERError.truncated(offset: position) }
        let tag = bytes[position]
        guard tag & 0x1f != 0x1f else { throw DERError.unsupportedTag(offset: position) }
        position += 1
        guard position < end else { throw DERError.truncated(offset: position) }
        let first = bytes[position]
        position += 1
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7f)
            guard count != 0 else { throw DERError.indefiniteLength(offset: position - 1) }
            guard count <= 4 else { throw DERError.lengthTooLarge(offset: position - 1) }
            guard end - position >= count else { throw DERError.truncated(offset: end) }
            guard bytes[position] != 0 else { throw DERError.nonMinimalLength(offset: position - 1) }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[position])
                position += 1
            }
            guard length >= 0x80 else { throw DERError.nonMinimalLength(offset: position - count - 1) }
        }
        guard length <= end - position else {
            throw DERError.truncated(offset: end)
        }
        let element = DERElement(tag: tag, start: start, contentStart: position, end: position + length)
        position += length
        return element
    }

    /// The next element, which must have tag `tag`.
    mutating func next(tag: UInt8) throws -> DERElement {
        let element = try next()
        guard element.tag == tag else {
            throw DERError.unexpectedTag(expected: tag, found: element.tag, offset: element.start)
        }
        return element
    }

    /// The next element if it has tag `tag`; nothing is consumed otherwise.
    mutating func nextIfPresent(tag: UInt8) throws -> DERElement? {
        guard position < end, bytes[position] == tag else { return nil }
        return try next()
    }

    /// Throws unless every byte has been read.
    func expectEnd() throws {
        guard position == end else { throw DERError.trailingData(offset: position) }
    }

    /// `validate`, plus the DER value rules of `DERError.wrongConstruction` and
    /// `.nonCanonicalValue` for every universal element: where a re-encoding (OpenSSL's
    /// `i2d_X509_PUBKEY`) would normalise a BER form, the bytes are refused instead, so that one
    /// key has one pin on every platform.
    static func validateCanonical(_ bytes: [UInt8], range: Range<Int>, depth: Int = 0) throws {
        guard depth <= maximumDepth else { throw DERError.nestingTooDeep(offset: range.lowerBound) }
        var reader = DERReader(bytes, range: range)
        while !reader.isAtEnd {
            let element = try reader.next()
            try checkCanonical(bytes, element)
            if element.isConstructed { try validateCanonical(bytes, range: element.content, depth: depth + 1) }
        }
    }

    /// The DER rules for one universal element (other classes are left as they are).
    private static func checkCanonical(_ bytes: [UInt8], _ element: DERElement) throws {
        guard element.tag & 0xc0 == 0 else { return }
        let number = element.tag & 0x1f
        let content = element.content
        let bad = DERError.nonCanonicalValue(offset: element.start)
        if element.isConstructed {
            guard number == 0x10 || number == 0x11 else { throw DERError.wrongConstruction(offset: element.start) }
            return
        }
        switch number {
        case 0x10, 0x11:
            throw DERError.wrongConstruction(offset: element.start)
        case 0x01:  // BOOLEAN
            guard content.count == 1, bytes[content.lowerBound] == 0 || bytes[content.lowerBound] == 0xff else {
                throw bad
            }
        case 0x02, 0x0a:  // INTEGER, ENUMERATED
            guard let first = content.first.map({ bytes[$0] }) else { throw bad }
            if content.count > 1 {
                let second = bytes[content.lowerBound + 1]
                guard !(first == 0 && second < 0x80), !(first == 0xff && second >= 0x80) else { throw bad }
            }
        case 0x05:  // NULL
            guard content.isEmpty else { throw bad }
        case 0x06:  // OBJECT IDENTIFIER
            guard let last = content.last.map({ bytes[$0] }), last & 0x80 == 0 else { throw bad }
            var startsSubidentifier = true
            for index in content {
                if startsSubidentifier && bytes[index] == 0x80 { throw bad }
                startsSubidentifier = bytes[index] & 0x80 == 0
            }
        case 0x03:  // BIT STRING
            guard let unused = content.first.map({ bytes[$0] }), unused <= 7, content.count > 1 || unused == 0,
                bytes[content.upperBound - 1] & (UInt8(1 << unused) &- 1) == 0
            else { throw bad }
        default:
            break
        }
    }

    /// Checks that `bytes[range]` is a sequence of well-formed elements filling it exactly and that
    /// every constructed element's content is, recursively, the same: no trailing byte at any level.
    static func validate(_ bytes: [UInt8], range: Range<Int>, depth: Int = 0) throws {
        guard depth <= maximumDepth else { throw DERError.nestingTooDeep(offset: range.lowerBound) }
        var reader = DERReader(bytes, range: range)
        while !reader.isAtEnd {
            let element = try reader.next()
            if element.isConstructed { try validate(bytes, range: element.content, depth: depth + 1) }
        }
    }
}
