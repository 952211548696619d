// The byte-level rules libsodium 1.0.18 applies to Ed25519 encodings before any curve arithmetic:
// `ge25519_is_canonical`, `ge25519_has_small_order` (its blocklist) and `sc25519_is_canonical`.

/// libsodium 1.0.18's encoding checks (crypto_core/ed25519/ref10/ed25519_ref10.c), as rules.
enum Ed25519Encoding {
    /// `ge25519_is_canonical`: false exactly when the low 255 bits (y) are >= p = 2^255 − 19,
    /// i.e. bytes 1...30 are 0xff, byte 31 without its sign bit is 0x7f and byte 0 is >= 0xed.
    /// The sign bit is not looked at (x = 0 with the sign bit set passes this check).
    ///
    /// - Parameter encoding: 32 bytes.
    static func isCanonicalPoint(_ encoding: [UInt8]) -> Bool {
        guard encoding.count == 32 else { return false }
        guard encoding[31] & 0x7f == 0x7f, encoding[0] >= 0xed else { return true }
        for index in 1...30 where encoding[index] != 0xff { return true }
        return false
    }

    /// The encodings of libsodium's blocklist, without the sign bit: the points of order 1,
    /// 2, 4 and 8 whose y is below p (0, 1, the two order-8 y values, p − 1) and the
    /// non-canonical p and p + 1 (y = 0 and y = 1 again).
    private static let smallOrderBlocklist: [[UInt8]] = {
        let zero = [UInt8](repeating: 0, count: 32)
        var one = zero
        one[0] = 1
        let order8a: [UInt8] = [
            0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
            0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05,
        ]
        let order8b: [UInt8] = [
            0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
            0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a,
        ]
        func nearP(_ low: UInt8) -> [UInt8] {
            var bytes = [UInt8](repeating: 0xff, count: 32)
            bytes[0] = low
            bytes[31] = 0x7f
            return bytes
        }
        return [zero, one, order8a, order8b, nearP(0xec), nearP(0xed), nearP(0xee)]
    }()

    /// `ge25519_has_small_order`: whether the encoding, its sign bit ignored, is on the
    /// blocklist. A purely byte-level test, as in libsodium 1.0.18.
    ///
    /// - Parameter encoding: 32 bytes (a prefix of a longer array is read, e.g. R of R || S).
    static func hasSmallOrder(_ encoding: [UInt8]) -> Bool {
        guard encoding.count >= 32 else { return false }
        return smallOrderBlocklist.contains { entry in
            for index in 0..<31 where encoding[index] != entry[index] { return false }
            return encoding[31] & 0x7f == entry[31]
        }
    }

    /// `sc25519_is_canonical`: whether the 32-byte little-endian scalar at `offset` is < L.
    ///
    /// - Parameters:
    ///   - bytes: holds the scalar at `offset ..< offset + 32`.
    ///   - offset: index of its first byte (32 for S in R || S).
    static func isCanonicalScalar(_ bytes: [UInt8], offset: Int) -> Bool {
        guard bytes.count >= offset + 32 else { return false }
        let order = EdwardsPoint.Constants.order
        for index in stride(from: 31, through: 0, by: -1) {
            let byte = bytes[offset + index]
            if byte < order[index] { return true }
            if byte > order[index] { return false }
        }
        return false  // equal to L
    }
}
