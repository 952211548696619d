// The certificate test oracle: OpenSSL's pin of a DER certificate (d2i_X509, X509_get_X509_PUBKEY,
// i2d_X509_PUBKEY, SHA-256), certificates made with the openssl command, and a tiny DER writer.

import COpenSSL
import Foundation

enum OpenSSLOracle {
    /// The DER SubjectPublicKeyInfo OpenSSL re-encodes from a DER certificate; nil if it refuses it.
    static func spkiDER(ofCertificate der: [UInt8]) -> [UInt8]? {
        let x509: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let x509 else {
            ERR_clear_error()
            return nil
        }
        defer { X509_free(x509) }
        guard let pubkey = X509_get_X509_PUBKEY(x509) else { return nil }
        let length = Int(i2d_X509_PUBKEY(pubkey, nil))
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509_PUBKEY(pubkey, &cursor)
        }
        return Int(written) == length ? out : nil
    }

    /// SHA-256 with OpenSSL's EVP_Digest.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil)
        return digest
    }
}

/// Runs `openssl` with arguments; returns its exit status.
@discardableResult
func runOpenSSL(_ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// The body of each `-----BEGIN CERTIFICATE-----` block of a PEM text.
func pemCertificates(_ text: String) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var body: String?
    for line in text.split(whereSeparator: \.isNewline) {
        if line.hasPrefix("-----BEGIN CERTIFICATE-----") {
            body = ""
        } else if line.hasPrefix("-----END CERTIFICATE-----") {
            if let text = body, let data = Data(base64Encoded: text) { out.append([UInt8](data)) }
            body = nil
        } else if body != nil {
            body? += line.trimmingCharacters(in: .whitespaces)
        }
    }
    return out
}

/// DER encoding for building test certificates (definite, minimal lengths).
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var value = count
        while value > 0 {
            bytes.insert(UInt8(value & 0xff), at: 0)
            value >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }
    static func sequence(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }

    /// An Ed25519 SPKI (RFC 8410) with the given 32 key bytes.
    static func ed25519SPKI(_ key: [UInt8]) -> [UInt8] {
        sequence(sequence(tlv(0x06, [0x2b, 0x65, 0x70])), tlv(0x03, [0] + key))
    }

    /// A certificate of the RFC 5280 shape around `spki` (not validly signed: the walk does not check).
    static func certificate(
        spki: [UInt8], tbsExtra: [UInt8] = [], certificateExtra: [UInt8] = [], version: Bool = true,
        extensions: Bool = true
    ) -> [UInt8] {
        let algorithm = sequence(tlv(0x06, [0x2b, 0x65, 0x70]))
        let name = sequence(tlv(0x31, sequence(tlv(0x06, [0x55, 0x04, 0x03]), tlv(0x0c, Array("pinion".utf8)))))
        let validity = sequence(
            tlv(0x17, Array("261201000000Z".utf8)), tlv(0x17, Array("271201000000Z".utf8)))
        var tbs: [UInt8] = version ? tlv(0xa0, tlv(0x02, [2])) : []
        tbs += tlv(0x02, [0x01]) + algorithm + name + validity + name + spki
        if extensions { tbs += tlv(0xa3, sequence(sequence(tlv(0x06, [0x55, 0x1d, 0x13]), tlv(0x04, [0x30, 0])))) }
        tbs += tbsExtra
        return tlv(
            0x30, tlv(0x30, tbs) + algorithm + tlv(0x03, [0] + [UInt8](repeating: 0xab, count: 64)) + certificateExtra)
    }
}
