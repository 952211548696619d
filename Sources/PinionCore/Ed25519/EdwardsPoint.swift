// Points of edwards25519 (RFC 8032 §5.1) in extended coordinates: decompression as libsodium 1.0.18's
// `ge25519_frombytes` does it, addition, doubling and multiplication by the group order L; pure
// Swift and variable time (public keys only), for the point validation of `StrictEd25519Verifier`.

/// A point (X : Y : Z : T) with x = X/Z, y = Y/Z, x·y = T/Z on −x² + y² = 1 + d·x²·y².
struct EdwardsPoint: Sendable {
    var x: FieldElement
    var y: FieldElement
    var z: FieldElement
    var t: FieldElement

    /// The neutral element (0, 1).
    static let identity = EdwardsPoint(x: .zero, y: .one, z: .one, t: .zero)

    /// Curve constants, computed once from their definitions (RFC 8032 §5.1).
    enum Constants {
        /// d = −121665 / 121666.
        static let d: FieldElement = -(FieldElement(121_665) * FieldElement(121_666).inverse)
        /// 2·d, for the addition formula.
        static let d2: FieldElement = d + d
        /// √−1 = 2^((p − 1) / 4).
        static let sqrtMinusOne: FieldElement = {
            // (p - 1) / 4 = 2^253 - 5: bits 252...3 set, then 011.
            var result = FieldElement.one
            let two = FieldElement(2)
            for bit in stride(from: 252, through: 0, by: -1) {
                result = result.squared
                if bit >= 3 || bit == 1 || bit == 0 { result = result * two }
            }
            return result
        }()
        /// The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian.
        static let order: [UInt8] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
        ]
    }

    /// Decompresses a 32-byte encoding the way libsodium 1.0.18's `ge25519_frombytes` does:
    /// y is the low 255 bits taken as they are (a value >= p is not refused here, callers check
    /// canonicity first), x = √((y² − 1)/(d·y² + 1)) with the sign of bit 255; an x of 0 with
    /// the sign bit set is kept as x = 0 (RFC 8032 §5.1.3 would refuse it; libsodium does not,
    /// and such points are small order, which callers refuse).
    ///
    /// - Parameter encoding: 32 bytes.
    /// - Returns: nil when (y² − 1)/(d·y² + 1) has no square root (no point has this y).
    init?(decoding encoding: [UInt8]) {
        guard encoding.count == 32 else { return nil }
        let y = FieldElement(littleEndian: encoding)
        let y2 = y.squared
        let u = y2 - .one
        let v = y2 * Constants.d + .one
        let v3 = v.squared * v
        let v7 = v3.squared * v
        var x = (u * v7).powP58 * v3 * u
        let vxx = x.squared * v
        let hasMinusRoot = (vxx - u).isZero
        let hasPlusRoot = (vxx + u).isZero
        guard hasMinusRoot || hasPlusRoot else { return nil }
        if !hasMinusRoot { x = x * Constants.sqrtMinusOne }
        let wantNegative = encoding[31] >> 7 == 1
        if x.isNegative != wantNegative { x = -x }
        self.init(x: x, y: y, z: .one, t: x * y)
    }

    init(x: FieldElement, y: FieldElement, z: FieldElement, t: FieldElement) {
        self.x = x
        self.y = y
        self.z = z
        self.t = t
    }

    /// Whether −X²Z² + Y²Z² = Z⁴ + d·X²Y² (the curve equation in projective form,
    /// libsodium's `ge25519_is_on_curve`).
    var isOnCurve: Bool {
        let x2 = x.squared
        let y2 = y.squared
        let z2 = z.squared
        let left = (y2 - x2) * z2
        let right = z2.squared + Constants.d * x2 * y2
        return left.equals(right)
    }

    /// Unified addition (Hisil, Wong, Carter, Dawson 2008, "add-2008-hwcd-3", a = −1):
    /// complete on edwards25519, so it also adds small-order points and the identity.
    static func + (p: EdwardsPoint, q: EdwardsPoint) -> EdwardsPoint {
        let a = (p.y - p.x) * (q.y - q.x)
        let b = (p.y + p.x) * (q.y + q.x)
        let c = p.t * Constants.d2 * q.t
        let zz = p.z * q.z
        let d = zz + zz
        let e = b - a
        let f = d - c
        let g = d + c
        let h = b + a
        return EdwardsPoint(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// Doubling ("dbl-2008-hwcd", a = −1).
    var doubled: EdwardsPoint {
        let a = x.squared
        let b = y.squared
        let zz = z.squared
        let c = zz + zz
        let d = -a
        let e = (x + y).squared - a - b
        let g = d + b
        let f = g - c
        let h = d - b
        return EdwardsPoint(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// `[scalar]self` for a little-endian scalar, by double-and-add from the top bit.
    func multiplied(byLittleEndian scalar: [UInt8]) -> EdwardsPoint {
        var result = EdwardsPoint.identity
        for bit in stride(from: scalar.count * 8 - 1, through: 0, by: -1) {
            result = result.doubled
            if scalar[bit / 8] >> (bit % 8) & 1 == 1 { result = result + self }
        }
        return result
    }

    /// `ge25519_is_on_main_subgroup` as Debian 12's libsodium 1.0.18 (1.0.18-1+deb12u1)
    /// computes it: [L]P is the identity, X = 0 and Y = Z.
    ///
    /// Upstream 1.0.18 tested X = 0 only, which also passes P + T with T the point of order 2
    /// ([L](P + T) = T = (0, −1)); libsodium commit f2da4cd8 ("check Y==Z in addition to
    /// X==0"), in Debian's deb12u1 update, added Y = Z. Pinion follows the library it runs on.
    var isInPrimeOrderSubgroup: Bool {
        let multiple = multiplied(byLittleEndian: Constants.order)
        return multiple.x.isZero && (multiple.y - multiple.z).isZero
    }
}
