// Benchmark 5: StrictEd25519Verifier (pure-Swift point validation; wrapper around a permissive OpenSSL
// EVP verifier) against libsodium on N fixed-seed cases each: differences counted, rates compared.
// The case kinds are those of Tests/PinionPortableCryptoTests (SignatureCases.swift), rebuilt here
// on BenchSodium, and the EVP verifier is the test oracle's (Oracles.swift) again, because the bench
// package sees only the main package's products, and a permissive verifier must not be one.

import BenchOpenSSL
import BenchSodium
import Foundation
import PinionCore
import PinionCrypto

/// SplitMix64, as in the tests: a fixed seed gives the same cases on every run.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// OpenSSL 3 EVP Ed25519 (`EVP_DigestVerify`): permissive, the verifier the wrapper is measured around.
private struct EVPVerifier: Ed25519Verifier {
    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32,
            let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32)
        else {
            ERR_clear_error()
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let status = EVP_DigestVerify(context, signature, 64, message, message.count)
        ERR_clear_error()
        return status == 1
    }
    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool { publicKey.count == 32 }
}

private func hex(_ text: String) -> [UInt8] {
    guard let bytes = Hex.decodeLowercase(text) else { fail("not lowercase hex: \(text)") }
    return bytes
}

private let order = hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
private let torsion: [[UInt8]] = {
    let a = hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
    let b = hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
    let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
    let minusOne = [UInt8(0xec)] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    let zero = [UInt8](repeating: 0, count: 32)
    return [identity, minusOne, zero, signed(zero), a, signed(a), b, signed(b)]
}()
private let blocklist: [[UInt8]] =
    ([torsion[0], torsion[2], torsion[4], torsion[6]]
    + [0xec, 0xed, 0xee].map { [$0] + [UInt8](repeating: 0xff, count: 30) + [0x7f] }).flatMap { [$0, signed($0)] }
private let nonCanonical: [[UInt8]] = (0..<19).flatMap { k -> [[UInt8]] in
    let plain = [UInt8(0xed + k)] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    return [plain, signed(plain)]
}

private func signed(_ encoding: [UInt8]) -> [UInt8] {
    var copy = encoding
    copy[31] |= 0x80
    return copy
}

private func add(_ p: [UInt8], _ q: [UInt8]) -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: 32)
    return crypto_core_ed25519_add(&out, p, q) == 0 ? out : nil
}

private func reduce(_ bytes: [UInt8]) -> [UInt8] {
    var wide = [UInt8](repeating: 0, count: 64)
    crypto_hash_sha512(&wide, bytes, UInt64(bytes.count))
    var out = [UInt8](repeating: 0, count: 32)
    crypto_core_ed25519_scalar_reduce(&out, wide)
    return out
}

private func baseMultiple(_ scalar: [UInt8]) -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: 32)
    return crypto_scalarmult_ed25519_base_noclamp(&out, scalar) == 0 ? out : nil
}

/// One case: a valid signature, then one of the tests' 14 mutation kinds.
private func mutation(_ g: inout SplitMix) -> (message: [UInt8], publicKey: [UInt8], signature: [UInt8]) {
    var m = g.bytes(Int.random(in: 0...48, using: &g))
    var a = [UInt8](repeating: 0, count: 32)
    var secret = [UInt8](repeating: 0, count: 64)
    var sig = [UInt8](repeating: 0, count: 64)
    crypto_sign_seed_keypair(&a, &secret, g.bytes(32))
    crypto_sign_detached(&sig, nil, m, UInt64(m.count), secret)
    switch Int.random(in: 0...13, using: &g) {
    case 0: break
    case 1: sig[Int.random(in: 0..<64, using: &g)] ^= 1 << UInt8.random(in: 0...7, using: &g)
    case 2: a[Int.random(in: 0..<32, using: &g)] ^= 1 << UInt8.random(in: 0...7, using: &g)
    case 3: if m.isEmpty { m = [0] } else { m[Int.random(in: 0..<m.count, using: &g)] ^= 1 }
    case 4:
        var carry = 0
        for index in 0..<32 {
            let sum = Int(sig[32 + index]) + Int(order[index]) + carry
            sig[32 + index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
    case 5: sig.replaceSubrange(0..<32, with: blocklist[Int.random(in: 0..<blocklist.count, using: &g)])
    case 6: a = blocklist[Int.random(in: 0..<blocklist.count, using: &g)]
    case 7:
        a = blocklist[Int.random(in: 0..<blocklist.count, using: &g)]
        sig = torsion[Int.random(in: 0..<8, using: &g)] + [UInt8](repeating: 0, count: 32)
    case 8: sig.replaceSubrange(0..<32, with: nonCanonical[Int.random(in: 0..<nonCanonical.count, using: &g)])
    case 9: a = nonCanonical[Int.random(in: 0..<nonCanonical.count, using: &g)]
    case 10:
        if let mixed = add(Array(sig[0..<32]), torsion[Int.random(in: 0..<8, using: &g)]) {
            sig.replaceSubrange(0..<32, with: mixed)
        }
    case 11: if let mixed = add(a, torsion[Int.random(in: 0..<8, using: &g)]) { a = mixed }
    case 12:
        let t = torsion[Int.random(in: 0..<8, using: &g)]
        let scalar = reduce(g.bytes(32))
        let nonce = reduce(g.bytes(32))
        if let prime = baseMultiple(scalar), let mixed = add(prime, t), let r = baseMultiple(nonce) {
            let h = reduce(r + mixed + m)  // SHA-512 then mod L, as RFC 8032 §5.1.6 step 5
            var ha = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_mul(&ha, h, scalar)
            var s = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_add(&s, nonce, ha)
            a = mixed
            sig = r + s
        }
    default: a = g.bytes(32)
    }
    return (m, a, sig)
}

/// `ed25519 CASES`: two result lines, point validation and signature verdicts.
func benchStrictEd25519(cases: Int) {
    guard sodium_init() >= 0 else { fail("sodium_init failed") }
    let strict = StrictEd25519Verifier(wrapping: EVPVerifier())
    let permissive = EVPVerifier()

    // Point validation: random 32-byte encodings.
    var g = SplitMix(state: 0x5049_4e49_4f4e_1001)
    var encodings: [[UInt8]] = []
    encodings.reserveCapacity(cases)
    for _ in 0..<cases { encodings.append(g.bytes(32)) }
    var sodiumVerdicts = [Bool](repeating: false, count: cases)
    var strictVerdicts = [Bool](repeating: false, count: cases)
    var start = threadCPUNanoseconds()
    for index in 0..<cases { sodiumVerdicts[index] = crypto_core_ed25519_is_valid_point(encodings[index]) == 1 }
    let sodiumPointNs = threadCPUNanoseconds() - start
    start = threadCPUNanoseconds()
    for index in 0..<cases { strictVerdicts[index] = strict.isUsablePublicKey(encodings[index]) }
    let strictPointNs = threadCPUNanoseconds() - start
    var line = ResultLine()
    line["benchmark"] = "ed25519-points"
    line["cases"] = cases
    line["valid"] = sodiumVerdicts.filter { $0 }.count
    line["differences"] = zip(sodiumVerdicts, strictVerdicts).filter { $0 != $1 }.count
    line["sodiumNs"] = Double(sodiumPointNs) / Double(cases)
    line["pinionNs"] = Double(strictPointNs) / Double(cases)
    line["rateRatio"] = Double(sodiumPointNs) / Double(strictPointNs)
    line.print()
    encodings = []

    // Signature verdicts: mutations, generated in batches so memory stays flat.
    g = SplitMix(state: 0x5049_4e49_4f4e_1010)
    var differences = 0
    var permissiveDifferences = 0
    var accepted = 0
    var sodiumNs: UInt64 = 0
    var strictNs: UInt64 = 0
    var permissiveNs: UInt64 = 0
    var done = 0
    while done < cases {
        let batch = (0..<min(10_000, cases - done)).map { _ in mutation(&g) }
        var expected = [Bool](repeating: false, count: batch.count)
        start = threadCPUNanoseconds()
        for (index, item) in batch.enumerated() {
            expected[index] =
                crypto_sign_verify_detached(item.signature, item.message, UInt64(item.message.count), item.publicKey)
                == 0
        }
        sodiumNs += threadCPUNanoseconds() - start
        start = threadCPUNanoseconds()
        var verdicts = [Bool](repeating: false, count: batch.count)
        for (index, item) in batch.enumerated() {
            verdicts[index] = strict.isValidSignature(item.signature, of: item.message, publicKey: item.publicKey)
        }
        strictNs += threadCPUNanoseconds() - start
        start = threadCPUNanoseconds()
        var permissiveVerdicts = [Bool](repeating: false, count: batch.count)
        for (index, item) in batch.enumerated() {
            permissiveVerdicts[index] = permissive.isValidSignature(
                item.signature, of: item.message, publicKey: item.publicKey)
        }
        permissiveNs += threadCPUNanoseconds() - start
        for index in batch.indices {
            if expected[index] { accepted += 1 }
            if verdicts[index] != expected[index] { differences += 1 }
            if permissiveVerdicts[index] != expected[index] { permissiveDifferences += 1 }
        }
        done += batch.count
    }
    line = ResultLine()
    line["benchmark"] = "ed25519-signatures"
    line["cases"] = cases
    line["accepted"] = accepted
    line["differences"] = differences
    line["permissiveDifferences"] = permissiveDifferences
    line["sodiumNs"] = Double(sodiumNs) / Double(cases)
    line["pinionNs"] = Double(strictNs) / Double(cases)
    line["opensslNs"] = Double(permissiveNs) / Double(cases)
    line["rateRatio"] = Double(sodiumNs) / Double(strictNs)
    line.print()
}
