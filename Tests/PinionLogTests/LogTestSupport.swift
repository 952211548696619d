// Shared helpers for the transparency-log tests: libsodium as the SHA-256 and Ed25519 oracle, an in-memory tile store.

import PinionCore
import PinionCrypto
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
