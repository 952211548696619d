// In-memory StateStorage for the conformance runner: the stored state's files, which steps corrupt or delete.

import Foundation
import PinionTrust

/// Files by name, in memory; one runner uses one storage, from one thread.
final class MemoryStorage: StateStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var files: [String: [UInt8]] = [:]

    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        lock.withLock { files[name].map { Array($0.prefix(maxBytes + 1)) } }
    }

    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        lock.withLock { files[name] = bytes }
    }

    func remove(_ name: String) throws(StorageError) {
        _ = lock.withLock { files.removeValue(forKey: name) }
    }

    /// Flips one byte in the middle of a file, so its checksum or its parse fails.
    ///
    /// - Returns: whether the file existed.
    func corrupt(_ name: String) -> Bool {
        lock.withLock {
            guard var bytes = files[name], !bytes.isEmpty else { return false }
            bytes[bytes.count / 2] ^= 0x5A
            files[name] = bytes
            return true
        }
    }

    /// Removes every file (the step "all state is deleted").
    func removeAll() {
        lock.withLock { files.removeAll() }
    }
}
