// The length of a passphrase in characters, counted inside its guarded buffer (no copy).

extension SecureBytes {
    /// The number of Unicode scalars in these bytes read as UTF-8: every byte that does not
    /// continue a multi-byte sequence (`10xxxxxx`) starts one, so a UTF-8 passphrase counts
    /// as the characters a person typed (bytes that are not UTF-8 count one each).
    public var unicodeScalarCount: Int {
        withUnsafeBytes { bytes in bytes.reduce(0) { count, byte in byte & 0xC0 == 0x80 ? count : count + 1 } }
    }
}
