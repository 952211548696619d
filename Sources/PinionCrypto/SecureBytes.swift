// Secret bytes (passphrases, Ed25519 seeds and secret keys) in libsodium guarded memory.

import CSodium

/// Errors from libsodium itself.
public enum SodiumError: Error, Equatable, CustomStringConvertible {
    /// `sodium_init` failed (no usable entropy source, for example).
    case initializationFailed
    /// `sodium_malloc` returned NULL for the given byte count.
    case allocationFailed(bytes: Int)

    public var description: String {
        switch self {
        case .initializationFailed: return "libsodium could not be initialised"
        case .allocationFailed(let bytes): return "libsodium could not allocate \(bytes) bytes of guarded memory"
        }
    }
}

/// Calls `sodium_init` once; safe from any thread (libsodium serialises it itself).
///
/// - Throws: `SodiumError.initializationFailed`.
public func initializeSodium() throws {
    if sodium_init() < 0 { throw SodiumError.initializationFailed }
}

/// A fixed-size buffer allocated with `sodium_malloc` (guard pages, canary) and wiped and
/// freed with `sodium_free` when released. Pinion's own copies of secrets live only here,
/// never in `String`, `Data` or `[UInt8]` (DESIGN.md §2).
///
/// Not copyable in the value sense: it is a class so that no copy of the bytes is made
/// behind the caller's back. Access is not synchronised; do not share one instance
/// between threads while mutating it.
public final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    /// Number of bytes in use (at most `capacity`).
    public private(set) var count: Int
    /// Allocated size in bytes.
    public let capacity: Int

    /// Allocates `capacity` zeroed bytes of guarded memory; `count` starts at `capacity`.
    ///
    /// - Throws: `SodiumError` when libsodium cannot be initialised or allocate.
    public init(capacity: Int) throws {
        try initializeSodium()
        let size = max(capacity, 1)
        guard let allocated = sodium_malloc(size) else { throw SodiumError.allocationFailed(bytes: size) }
        sodium_memzero(allocated, size)
        self.pointer = allocated
        self.capacity = capacity
        self.count = capacity
    }

    deinit {
        sodium_free(pointer)
    }

    /// Sets the number of bytes in use; bytes past it are wiped.
    /// - Parameter newCount: 0 ... `capacity` (clamped).
    public func truncate(to newCount: Int) {
        let clamped = min(max(newCount, 0), capacity)
        if clamped < count { sodium_memzero(pointer + clamped, count - clamped) }
        count = clamped
    }

    /// Read access to the `count` bytes in use.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Write access to all `capacity` bytes; call `truncate(to:)` afterwards to set `count`.
    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: capacity))
    }

    /// Constant-time comparison of the bytes in use (`sodium_memcmp`).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(pointer, other.pointer, count) == 0
    }
}
