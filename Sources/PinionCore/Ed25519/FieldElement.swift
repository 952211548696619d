// Arithmetic in GF(2^255 - 19), the field of Curve25519 and Ed25519 (RFC 7748 §4.1, RFC 8032 §5.1),
// written here because no library on every Pinion platform exposes it (CryptoKit and libsodium
// hide their field code); variable time, since it only ever handles public keys and signatures.

/// An element of GF(p), p = 2^255 - 19, in radix 2^51: `l0 + l1·2^51 + ... + l4·2^204`.
///
/// Every operation returns limbs below 2^52 (weakly reduced), which keeps every product of
/// `multiplied(by:)` inside 128 bits; only `encoded()` produces the unique value below p.
/// Variable time: for public data only (public keys, signatures), never for secrets.
struct FieldElement: Sendable {
    var l0: UInt64
    var l1: UInt64
    var l2: UInt64
    var l3: UInt64
    var l4: UInt64

    private static let mask: UInt64 = (1 << 51) - 1

    static let zero = FieldElement(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
    static let one = FieldElement(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)

    init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64) {
        self.l0 = l0
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
        self.l4 = l4
    }

    /// A small constant.
    init(_ value: UInt64) {
        self.init(l0: value & Self.mask, l1: value >> 51, l2: 0, l3: 0, l4: 0)
    }

    /// The low 255 bits of a 32-byte little-endian string (bit 255, the sign bit of a point
    /// encoding, is ignored), as `fe25519_frombytes` reads them: values in [p, 2^255) are
    /// taken as they are and reduce mod p in arithmetic.
    ///
    /// - Parameters:
    ///   - bytes: the encoding; at least `offset + 32` bytes.
    ///   - offset: index of the first byte.
    init(littleEndian bytes: [UInt8], offset: Int = 0) {
        func word(_ index: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in 0..<8 { value |= UInt64(bytes[offset + index * 8 + byte]) << (8 * byte) }
            return value
        }
        let w0 = word(0)
        let w1 = word(1)
        let w2 = word(2)
        let w3 = word(3)
        self.init(
            l0: w0 & Self.mask,
            l1: (w0 >> 51 | w1 << 13) & Self.mask,
            l2: (w1 >> 38 | w2 << 26) & Self.mask,
            l3: (w2 >> 25 | w3 << 39) & Self.mask,
            l4: (w3 >> 12) & Self.mask)
    }

    /// Propagates carries so that every limb is below 2^51 plus a small excess in `l0`.
    private static func carried(_ a: FieldElement) -> FieldElement {
        var r = a
        var c = r.l0 >> 51
        r.l0 &= mask
        r.l1 += c
        c = r.l1 >> 51
        r.l1 &= mask
        r.l2 += c
        c = r.l2 >> 51
        r.l2 &= mask
        r.l3 += c
        c = r.l3 >> 51
        r.l3 &= mask
        r.l4 += c
        c = r.l4 >> 51
        r.l4 &= mask
        r.l0 += c * 19
        return r
    }

    static func + (a: FieldElement, b: FieldElement) -> FieldElement {
        carried(FieldElement(l0: a.l0 + b.l0, l1: a.l1 + b.l1, l2: a.l2 + b.l2, l3: a.l3 + b.l3, l4: a.l4 + b.l4))
    }

    /// `a - b` as `a + 4p - b`: limbs of weakly reduced operands never underflow.
    static func - (a: FieldElement, b: FieldElement) -> FieldElement {
        let fourP0: UInt64 = 0x1F_FFFF_FFFF_FFB4  // 4 · (2^51 - 19)
        let fourP: UInt64 = 0x1F_FFFF_FFFF_FFFC  // 4 · (2^51 - 1)
        return carried(
            FieldElement(
                l0: a.l0 + fourP0 - b.l0, l1: a.l1 + fourP - b.l1, l2: a.l2 + fourP - b.l2,
                l3: a.l3 + fourP - b.l3, l4: a.l4 + fourP - b.l4))
    }

    static prefix func - (a: FieldElement) -> FieldElement { zero - a }

    /// A 128-bit accumulator of limb products.
    private struct Wide {
        var hi: UInt64 = 0
        var lo: UInt64 = 0

        mutating func add(_ a: UInt64, _ b: UInt64) {
            let product = a.multipliedFullWidth(by: b)
            let (sum, overflow) = lo.addingReportingOverflow(product.low)
            lo = sum
            hi &+= product.high &+ (overflow ? 1 : 0)
        }

        mutating func add(_ value: UInt64) {
            let (sum, overflow) = lo.addingReportingOverflow(value)
            lo = sum
            hi &+= overflow ? 1 : 0
        }

        /// The value shifted right by 51 bits; callers keep the value below 2^115.
        var carry: UInt64 { hi << 13 | lo >> 51 }
        var low51: UInt64 { lo & FieldElement.mask }
    }

    static func * (a: FieldElement, b: FieldElement) -> FieldElement {
        let b1 = b.l1 * 19
        let b2 = b.l2 * 19
        let b3 = b.l3 * 19
        let b4 = b.l4 * 19
        var r0 = Wide()
        r0.add(a.l0, b.l0)
        r0.add(a.l1, b4)
        r0.add(a.l2, b3)
        r0.add(a.l3, b2)
        r0.add(a.l4, b1)
        var r1 = Wide()
        r1.add(a.l0, b.l1)
        r1.add(a.l1, b.l0)
        r1.add(a.l2, b4)
        r1.add(a.l3, b3)
        r1.add(a.l4, b2)
        var r2 = Wide()
        r2.add(a.l0, b.l2)
        r2.add(a.l1, b.l1)
        r2.add(a.l2, b.l0)
        r2.add(a.l3, b4)
        r2.add(a.l4, b3)
        var r3 = Wide()
        r3.add(a.l0, b.l3)
        r3.add(a.l1, b.l2)
        r3.add(a.l2, b.l1)
        r3.add(a.l3, b.l0)
        r3.add(a.l4, b4)
        var r4 = Wide()
        r4.add(a.l0, b.l4)
        r4.add(a.l1, b.l3)
        r4.add(a.l2, b.l2)
        r4.add(a.l3, b.l1)
        r4.add(a.l4, b.l0)
        r1.add(r0.carry)
        r2.add(r1.carry)
        r3.add(r2.carry)
        r4.add(r3.carry)
        // The top carry times 19 can pass 2^64: fold it in 128 bits.
        var folded = Wide()
        folded.add(r4.carry, 19)
        folded.add(r0.low51)
        let out0 = folded.low51
        let out1 = r1.low51 + folded.carry
        return carried(FieldElement(l0: out0, l1: out1, l2: r2.low51, l3: r3.low51, l4: r4.low51))
    }

    var squared: FieldElement { self * self }

    /// `self^(2^count)`.
    func squared(times count: Int) -> FieldElement {
        var r = self
        for _ in 0..<count { r = r * r }
        return r
    }

    /// `self^((p - 5) / 8) = self^(2^252 - 3)`, the exponent of the square root in
    /// RFC 8032 §5.1.3 step 3 (the addition chain of ref10's `fe25519_pow22523`).
    var powP58: FieldElement {
        let z2 = squared
        let z9 = self * z2.squared(times: 2)
        let z11 = z2 * z9
        let zTo2Pow5Minus1 = z9 * z11.squared  // z^(2^5 - 1)
        let zTo2Pow10Minus1 = zTo2Pow5Minus1.squared(times: 5) * zTo2Pow5Minus1
        let zTo2Pow20Minus1 = zTo2Pow10Minus1.squared(times: 10) * zTo2Pow10Minus1
        let zTo2Pow40Minus1 = zTo2Pow20Minus1.squared(times: 20) * zTo2Pow20Minus1
        let zTo2Pow50Minus1 = zTo2Pow40Minus1.squared(times: 10) * zTo2Pow10Minus1
        let zTo2Pow100Minus1 = zTo2Pow50Minus1.squared(times: 50) * zTo2Pow50Minus1
        let zTo2Pow200Minus1 = zTo2Pow100Minus1.squared(times: 100) * zTo2Pow100Minus1
        let zTo2Pow250Minus1 = zTo2Pow200Minus1.squared(times: 50) * zTo2Pow50Minus1
        return zTo2Pow250Minus1.squared(times: 2) * self
    }

    /// `self^(p - 2)`, the inverse (zero for zero), by square-and-multiply.
    var inverse: FieldElement {
        // p - 2 = 2^255 - 21: bits 254...5 set, then 01011.
        var result = FieldElement.one
        for bit in stride(from: 254, through: 0, by: -1) {
            result = result.squared
            let set = bit >= 5 || bit == 3 || bit == 1 || bit == 0
            if set { result = result * self }
        }
        return result
    }

    /// The canonical 32-byte little-endian encoding of the value in [0, p).
    func encoded() -> [UInt8] {
        var r = Self.carried(Self.carried(self))
        // r < 2^255 + small: subtract p when r + 19 reaches 2^255.
        var q = (r.l0 + 19) >> 51
        q = (r.l1 + q) >> 51
        q = (r.l2 + q) >> 51
        q = (r.l3 + q) >> 51
        q = (r.l4 + q) >> 51
        r.l0 += 19 * q
        r.l1 += r.l0 >> 51
        r.l0 &= Self.mask
        r.l2 += r.l1 >> 51
        r.l1 &= Self.mask
        r.l3 += r.l2 >> 51
        r.l2 &= Self.mask
        r.l4 += r.l3 >> 51
        r.l3 &= Self.mask
        r.l4 &= Self.mask
        let words: [UInt64] = [
            r.l0 | r.l1 << 51,
            r.l1 >> 13 | r.l2 << 38,
            r.l2 >> 26 | r.l3 << 25,
            r.l3 >> 39 | r.l4 << 12,
        ]
        var out = [UInt8](repeating: 0, count: 32)
        for (index, word) in words.enumerated() {
            for byte in 0..<8 { out[index * 8 + byte] = UInt8(truncatingIfNeeded: word >> (8 * byte)) }
        }
        return out
    }

    /// Whether the value is 0 mod p.
    var isZero: Bool { encoded().allSatisfy { $0 == 0 } }

    /// Whether the canonical value is odd (RFC 8032's "negative" x).
    var isNegative: Bool { encoded()[0] & 1 == 1 }

    /// Equality mod p.
    func equals(_ other: FieldElement) -> Bool { (self - other).isZero }
}
