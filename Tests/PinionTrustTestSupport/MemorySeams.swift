// The client seams kept in memory for tests: state storage without a directory, and a clock
// that moves only when a test sets it. In the light helper module (PinionCore and PinionTrust
// only), so the portable tests, the conformance runner, the Linux SDK's tests and the fleet
// test share one of each.

import Foundation
import PinionCore
import PinionTrust

/// A value read and written only under its lock (Synchronization's `Mutex` needs macOS 15).
///
/// `@unchecked Sendable` is sound: `value` is private and touched only inside `withLock`.
public final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// - Parameter value: the starting value.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` on the value under the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// The clock handed to `ClientConfiguration.clock`: it moves only when a test sets it.
public final class TestClock: Sendable {
    private let now: Guarded<Timestamp>

    /// - Parameter start: the time the clock shows until it is set.
    public init(_ start: Timestamp) { now = Guarded(start) }

    /// The time it shows.
    public var time: Timestamp { now.withLock { $0 } }
    /// Moves the clock to `time` (forwards or back).
    public func set(_ time: Timestamp) { now.withLock { $0 = time } }
    /// The clock as `ClientConfiguration.clock` takes it.
    public var function: @Sendable () -> Timestamp { { self.time } }
}

/// State storage in memory, as an app might keep it in its own container; each write replaces a
/// whole file at once. Files are keyed by name; nothing reaches the disk.
public final class MemoryStorage: StateStorage {
    private let files = Guarded<[String: [UInt8]]>([:])
    private let full = Guarded(false)

    public init() {}

    /// While set, every write fails as a full disk would (`ENOSPC`), leaving the files as they were.
    public func setFull(_ value: Bool) { full.withLock { $0 = value } }

    /// Replaces a file's bytes directly, as damage outside the client would.
    public func overwrite(_ name: String, _ bytes: [UInt8]) { files.withLock { $0[name] = bytes } }

    /// Flips one byte in the middle of a file, so its checksum or its parse fails.
    ///
    /// - Returns: whether the file existed (and was not empty).
    public func corrupt(_ name: String) -> Bool {
        files.withLock {
            guard var bytes = $0[name], !bytes.isEmpty else { return false }
            bytes[bytes.count / 2] ^= 0x5A
            $0[name] = bytes
            return true
        }
    }

    /// Removes every file (all state deleted).
    public func removeAll() { files.withLock { $0.removeAll() } }

    /// A copy of every file, to compare before and after.
    public var snapshot: [String: [UInt8]] { files.withLock { $0 } }

    public func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        files.withLock { $0[name].map { Array($0.prefix(maxBytes + 1)) } }
    }

    public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        if full.withLock({ $0 }) { throw StorageError(.write, name, code: 28, detail: "No space left on device") }
        files.withLock { $0[name] = bytes }
    }

    public func remove(_ name: String) throws(StorageError) {
        _ = files.withLock { $0.removeValue(forKey: name) }
    }
}
