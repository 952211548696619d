// Fuzz target 6: the input of `pinion spki` (SPKIReader): PEM blocks and single DER
// objects (certificates, CSRs, public keys, plain, encrypted and traditional private
// keys), through OpenSSL.
//
// The passphrase closure answers "pinion-fuzz" for inputs of odd length and nothing for
// even lengths, so that both the encrypted-key paths and the passphrase-required refusal
// are reached while most inputs do not pay for a key derivation (which the reader caps at
// 10,000,000 PBKDF2 iterations: a few seconds, by design).
//
// Properties: each object's pin is the SHA-256 of its SPKI, and that SPKI read back as a
// DER public key gives the same SPKI (so a certificate and its key have one pin).

import PinionCrypto

private let passphrase: SecureBytes? = {
    let text = Array("pinion-fuzz".utf8)
    guard let secure = try? SecureBytes(capacity: text.count) else { return nil }
    secure.withUnsafeMutableBytes { $0.copyBytes(from: text) }
    return secure
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSPKI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let objects: [SPKIObject]
    do {
        objects = try SPKIReader.objects(in: bytes, source: "fuzz-input") {
            size % 2 == 1 ? passphrase : nil
        }
    } catch {
        _ = String(describing: error)
        return 0
    }
    expect(!objects.isEmpty, "no object and no error")
    for object in objects {
        expect(object.spkiSHA256.count == 32, "a pin of \(object.spkiSHA256.count) bytes")
        expect(OpenSSLSupport.sha256(object.spkiDER) == object.spkiSHA256, "the pin is not the SPKI's SHA-256")
        do {
            let again = try SPKIReader.objects(in: object.spkiDER, source: "spki") { nil }
            expect(
                again.count == 1 && again[0].spkiDER == object.spkiDER,
                "the SPKI of \(object.label) reads back as another SPKI")
        } catch {
            expect(false, "the SPKI of \(object.label) does not read back: \(error)")
        }
        _ = PinFormat.allCases.map { $0.render(object.spkiSHA256) }
    }
    return 0
}
