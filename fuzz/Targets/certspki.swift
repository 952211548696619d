// Fuzz target 7: CertificateSPKI.fromCertificateDER, PinionCore's strict DER walk from a certificate
// to its SubjectPublicKeyInfo and pin (the one pin computation of every SDK), with OpenSSL as oracle.
//
// Properties: an accepted input yields an SPKI that is a contiguous slice of the input, is one
// well-formed DER element, hashes to the returned pin, and is refused again when any byte is cut
// off the certificate's end; when OpenSSL (d2i_X509) also parses the input, its SPKI
// (X509_get_X509_PUBKEY + i2d_X509_PUBKEY) is byte for byte the same. OpenSSL accepting BER that
// the walk refuses is allowed (strictness), the reverse is not checked (OpenSSL also checks
// contents the walk does not interpret, like times and OIDs).

import COpenSSL
import PinionCrypto

@testable import PinionCore

private func opensslSPKI(_ der: [UInt8]) -> [UInt8]? {
    let x509: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
        var cursor = buffer.baseAddress
        let parsed = d2i_X509(nil, &cursor, buffer.count)
        // Only a certificate that fills the input is comparable (the walk refuses trailing bytes).
        if let parsed, cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
            X509_free(parsed)
            return nil
        }
        return parsed
    }
    defer { ERR_clear_error() }
    guard let x509 else { return nil }
    defer { X509_free(x509) }
    guard let pubkey = X509_get_X509_PUBKEY(x509) else { return nil }
    return OpenSSLSupport.spkiDER(of: pubkey)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCertificateSPKI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let result: CertificateSPKI
    do {
        result = try CertificateSPKI.fromCertificateDER(bytes, hasher: SodiumSHA256())
    } catch {
        _ = String(describing: error)
        return 0
    }
    let spki = result.spkiDER
    expect(result.sha256.count == 32, "a pin of \(result.sha256.count) bytes")
    expect(OpenSSLSupport.sha256(spki) == result.sha256, "the pin is not the SPKI's SHA-256")
    let isSlice =
        spki.count <= bytes.count
        && (0...(bytes.count - spki.count)).contains { start in bytes[start..<(start + spki.count)].elementsEqual(spki)
        }
    expect(isSlice, "the SPKI is not a slice of the certificate")
    var reader = DERReader(spki, range: 0..<spki.count)
    let element = try? reader.next(tag: 0x30)
    expect(element != nil && reader.isAtEnd, "the SPKI is not one DER SEQUENCE")
    expect((try? DERReader.validate(spki, range: 0..<spki.count)) != nil, "the SPKI is not well-formed DER")
    expect(
        (try? CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: Array(bytes.dropLast()))) == nil,
        "a certificate cut short by one byte is accepted")
    if let oracle = opensslSPKI(bytes) {
        expect(oracle == spki, "OpenSSL's SPKI differs from the DER walk's")
    }
    return 0
}
