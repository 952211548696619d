// Shared helpers for the transparency-log tests: libsodium as the SHA-256 and Ed25519 oracle, an in-memory tile store.

import PinionCore
import PinionCrypto
import PinionLog
import PinionLogWriter
import PinionTrust

let crypto = CryptoProvider.sodium
let merkle = MerkleHasher(SodiumSHA256())

/// Tiles kept in memory, keyed by path, as a directory or CDN would hold them.
final class MemoryTileStore: TileReader {
    var files: [String: [UInt8]] = [:]

    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = files[tile.path] else { throw TileError.missingTile(tile.path) }
        return bytes
    }

    func store(_ writes: [TileWrite]) {
        for write in writes { files[write.tile.path] = write.bytes }
    }
}

func hex(_ text: String) -> [UInt8] { Hex.decodeLowercase(text) ?? [] }

/// Deterministic entries: entry i is "entry <i>" repeated to a length that varies with i.
func sampleEntry(_ index: Int) -> [UInt8] {
    Array(String(repeating: "entry \(index);", count: 1 + index % 5).utf8)
}

/// PinionCrypto's Ed25519 key as the pure code's note signer (the adapter the publisher uses).
typealias SodiumNoteSigner = Ed25519NoteSigner

/// A signer from a fixed 32-byte seed, so signatures are reproducible (Ed25519 is deterministic).
func seededSigner(_ seedByte: UInt8) throws -> SodiumNoteSigner {
    try seededSigner(seed: [UInt8](repeating: seedByte, count: 32))
}

func seededSigner(seed: [UInt8]) throws -> SodiumNoteSigner {
    let buffer = try SecureBytes(capacity: seed.count)
    buffer.withUnsafeMutableBytes { $0.copyBytes(from: seed) }
    return SodiumNoteSigner(key: try Ed25519SecretKey(seed: buffer))
}

func vkey(_ name: String, _ type: NoteKeyType, _ signer: SodiumNoteSigner) throws -> NoteVerifierKey {
    try NoteVerifierKey(name: name, type: type, publicKey: signer.publicKey, hasher: crypto.hasher)
}
