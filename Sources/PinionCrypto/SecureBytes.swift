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
/// never in `String`, `Data` or `[UInt8]` (docs/DESIGN.md §2).
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

#if canImport(Glibc)
    import Glibc
#endif

/// Why a file could not be read into guarded memory; callers turn it into their own error.
public enum SecureFileReadError: Error, Equatable {
    /// open(2) failed with this errno.
    case open(errno: Int32)
    /// read(2) or fstat(2) failed with this errno.
    case read(errno: Int32)
    /// The file holds more than the limit (bytes).
    case tooLarge(limit: Int)
}

extension SecureBytes {
    /// Reads a whole file into guarded memory (a file may hold a secret key or a
    /// passphrase, so its bytes never pass through a Swift array or `Data`).
    ///
    /// Regular files get a buffer of their size plus one byte (guarded memory is locked and
    /// the lock budget is small); other files (FIFOs, devices) grow it by doubling. Reading
    /// stops one byte past `limit`, so `/dev/zero` cannot exhaust memory.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: most bytes accepted.
    /// - Returns: the bytes, `count` = file size.
    /// - Throws: `SecureFileReadError`, or `SodiumError` when guarded memory runs out.
    public static func readFile(path: String, limit: Int) throws -> SecureBytes {
        // Opened non-blocking, so a FIFO without a writer reads as empty instead of hanging
        // the command; blocking mode is restored so a pipe with a writer (`<(...)`) still works.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw SecureFileReadError.open(errno: errno) }
        defer { _ = close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SecureFileReadError.read(errno: errno) }
        var capacity = min(limit + 1, 64 * 1024)
        if info.st_mode & S_IFMT == S_IFREG {
            guard Int(info.st_size) <= limit else { throw SecureFileReadError.tooLarge(limit: limit) }
            capacity = Int(info.st_size) + 1
        }
        var buffer = try SecureBytes(capacity: capacity)
        var filled = 0
        while true {
            if filled == buffer.capacity {
                guard buffer.capacity <= limit else { throw SecureFileReadError.tooLarge(limit: limit) }
                let grown = try SecureBytes(capacity: min(buffer.capacity * 2, limit + 1))
                grown.withUnsafeMutableBytes { target in
                    buffer.withUnsafeBytes { source in
                        if let base = source.baseAddress, filled > 0 {
                            target.baseAddress?.copyMemory(from: base, byteCount: filled)
                        }
                    }
                }
                buffer = grown
            }
            let got = buffer.withUnsafeMutableBytes { target in
                read(descriptor, target.baseAddress.map { $0 + filled }, target.count - filled)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw SecureFileReadError.read(errno: errno)
            }
            if got == 0 { break }
            filled += got
        }
        guard filled <= limit else { throw SecureFileReadError.tooLarge(limit: limit) }
        buffer.truncate(to: filled)
        return buffer
    }
}
