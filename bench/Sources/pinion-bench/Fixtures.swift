// Signed roots, manifests and histories for the benchmarks, made with Pinion's public API and
// signed with libsodium (Ed25519SecretKey), written to a work directory.

import BenchSodium
import Foundation
import PinionCore
import PinionCrypto
import PinionTrust

let benchScope = "com.example.app"
/// The manifest entry the evaluation benchmark connects to; its pins include the SPKI
/// digests of the benchmark chain's leaf and intermediate.
let pinnedName = "api.pinion-bench.example"
/// An entry with includeSubdomains that pins only the intermediate: the evaluation
/// benchmark's second case connects to a subdomain of it.
let parentPinnedName = "cdn.pinion-bench.example"
let day: Int64 = 86_400

func randomPin() -> Pin {
    var digest = [UInt8](repeating: 0, count: 32)
    randombytes_buf(&digest, 32)
    guard let pin = try? Pin(digest: digest) else { fail("a 32-byte pin was refused") }
    return pin
}

func signEnvelope(_ kind: PayloadKind, _ payload: [UInt8], with key: Ed25519SecretKey) -> Envelope {
    var envelope = Envelope(kind: kind, payload: payload)
    guard let signature = try? key.sign(envelope.signingInput) else { fail("signing failed") }
    envelope.signatures.append(.init(keyID: key.publicKey.keyID, signature: signature))
    return envelope
}

/// Root version 1 of `benchScope`: one root key, one pins key, both thresholds 1.
func makeRoot(rootKey: Ed25519SecretKey, pinsKey: Ed25519SecretKey, issuedAt: Timestamp) -> Envelope {
    let keys = [rootKey, pinsKey].map { RootPayload.Key(keyID: $0.publicKey.keyID, publicKey: $0.publicKey.raw) }
    let payload = RootPayload(
        scope: benchScope, version: 1, issuedAt: issuedAt, expiresAt: issuedAt.adding(seconds: 365 * day),
        maxManifestLifetime: 90 * day, keys: keys,
        rootRole: .init(keyIDs: [rootKey.publicKey.keyID], threshold: 1),
        pinsRole: .init(keyIDs: [pinsKey.publicKey.keyID], threshold: 1))
    return signEnvelope(.root, payload.serialized(), with: rootKey)
}

func newKey() -> Ed25519SecretKey {
    guard let key = try? Ed25519SecretKey.generate() else { fail("key generation failed") }
    return key
}

/// `gen DIR`: root.json and manifest-{10,1000,10000}.json (3 pins per domain, every other
/// domain with includeSubdomains) signed under it. DIR/spki-{0,1,2}.der (leaf first) must
/// exist: their SHA-256 digests pin `pinnedName`.
func generateManifests(directory: String) {
    let rootKey = newKey()
    let pinsKey = newKey()
    let now = Timestamp(Date())
    writeFile(
        directory + "/root.json",
        makeRoot(rootKey: rootKey, pinsKey: pinsKey, issuedAt: now.adding(seconds: -day)).serialized())
    let hasher = SodiumSHA256()
    let chainPins = (0..<3).map { index -> Pin in
        guard let pin = try? Pin(digest: hasher.sha256(readFile(directory + "/spki-\(index).der"))) else {
            fail("bad SPKI digest")
        }
        return pin
    }
    for count in manifestSizes {
        var domains = [
            ManifestPayload.Domain(
                name: pinnedName, includeSubdomains: true, pins: [chainPins[0], randomPin(), chainPins[1]]),
            ManifestPayload.Domain(
                name: parentPinnedName, includeSubdomains: true, pins: [randomPin(), randomPin(), chainPins[1]]),
        ]
        for index in 2..<count {
            domains.append(
                ManifestPayload.Domain(
                    name: "s\(index).pinion-bench.example", includeSubdomains: index % 2 == 0,
                    pins: [randomPin(), randomPin(), randomPin()]))
        }
        let payload = ManifestPayload(
            scope: benchScope, rootVersion: 1, version: 1, issuedAt: now.adding(seconds: -3600),
            expiresAt: now.adding(seconds: 30 * day), domains: domains)
        writeFile(
            directory + "/manifest-\(count).json", signEnvelope(.pins, payload.serialized(), with: pinsKey).serialized()
        )
    }
}

let manifestSizes = [10, 1000, 10_000]

/// `history DIR VERSIONS`: DIR/history-root.json and the tree DIR/history-tree/v1/{scope}/
/// laid out as `pinion publish` writes it: `VERSIONS` manifests chained by `previous`,
/// half an hour apart, the last issued an hour ago, each valid 30 days; every 100 versions
/// the backup pin changes.
func generateHistory(directory: String, versions: Int) {
    let rootKey = newKey()
    let pinsKey = newKey()
    let now = Timestamp(Date())
    let first = now.adding(seconds: -3600 - Int64(versions) * 1800)
    let root = makeRoot(rootKey: rootKey, pinsKey: pinsKey, issuedAt: first.adding(seconds: -day))
    let tree = directory + "/history-tree/v1/" + benchScope
    for sub in ["root", "history"] {
        do {
            try FileManager.default.createDirectory(atPath: tree + "/" + sub, withIntermediateDirectories: true)
        } catch { fail("cannot create \(tree)/\(sub): \(error)") }
    }
    let rootBytes = root.serialized()
    writeFile(directory + "/history-root.json", rootBytes)
    writeFile(tree + "/root/1.json", rootBytes)
    let hasher = SodiumSHA256()
    var pins = [randomPin(), randomPin()]
    var previous: [UInt8]? = nil
    var entries: [PublishedIndex.Entry] = []
    var last: [UInt8] = []
    for version in 1...versions {
        if version % 100 == 0 { pins[1] = randomPin() }
        let issuedAt = first.adding(seconds: Int64(version) * 1800)
        let payload = ManifestPayload(
            scope: benchScope, rootVersion: 1, version: Int64(version), issuedAt: issuedAt,
            expiresAt: issuedAt.adding(seconds: 30 * day), previous: previous,
            domains: [ManifestPayload.Domain(name: "api.example.com", pins: pins)])
        let bytes = payload.serialized()
        let digest = hasher.sha256(bytes)
        last = signEnvelope(.pins, bytes, with: pinsKey).serialized()
        writeFile(tree + "/history/\(version).json", last)
        entries.append(
            PublishedIndex.Entry(
                version: Int64(version), rootVersion: 1, payloadSHA256: digest, issuedAt: issuedAt,
                expiresAt: payload.expiresAt))
        previous = digest
    }
    writeFile(tree + "/index.json", PublishedIndex(scope: benchScope, manifests: entries).serialized())
    writeFile(tree + "/manifest.json", last)
}

/// A publisher in memory for refresh benchmarks: no roots beyond the embedded one, one
/// manifest (200 with its ETag), and a proof when given.
struct MemoryFetcher: UpdateFetcher {
    let manifest: [UInt8]
    var etag: String? = nil
    var proof: [UInt8]? = nil

    func fetch(_ request: UpdateRequest) -> Result<UpdateAnswer, UpdateFetchError> {
        switch request.file {
        case .manifest: return .success(UpdateAnswer(status: 200, etag: etag, body: manifest))
        case .manifestProof:
            return .success(proof.map { UpdateAnswer(status: 200, body: $0) } ?? UpdateAnswer(status: 404))
        default: return .success(UpdateAnswer(status: 404))
        }
    }
}
