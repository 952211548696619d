// A value behind a lock, for the SDK's shared state. Synchronization's `Mutex` needs iOS 18
// and macOS 15; this module also runs on the older systems Package.swift declares.

import Foundation

/// A value that is read and written only while holding its lock (`NSLock`).
///
/// `@unchecked Sendable` is sound: `value` is private and touched only inside `withLock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
