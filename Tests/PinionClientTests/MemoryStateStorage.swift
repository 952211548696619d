// An in-memory `StateStorage` for the state tests: fails or "crashes" at a chosen step, or fails
// every read of one file (EACCES, EIO: root ignores file modes, so permissions cannot be used).

import Foundation
import PinionLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An in-memory `StateStorage` that can fail or "crash" at a chosen step.
///
/// Steps: each `read` is one; `writeAtomically` is two (write the temporary file, then
/// rename it over the target); `remove` is one. `.fail(errno)` makes that step throw and the
/// storage goes on working (a failed rename removes its temporary file, as DirectoryStorage
/// does). `.crash` makes that step and every later one throw without touching the files, as
/// when the process dies at that instant; a crash at the rename leaves the temporary file.
final class MemoryStateStorage: StateStorage {
    enum Fault: Sendable {
        case fail(Int32)
        case crash
    }

    private struct Inner: Sendable {
        var files: [String: [UInt8]] = [:]
        var steps = 0
        var faultAt: Int?
        var fault = Fault.crash
        var dead = false
        /// Files whose every read fails with the errno, as an unreadable file would.
        var unreadable: [String: Int32] = [:]
        var writes = 0
    }

    private let inner: Mutex<Inner>

    init(files: [String: [UInt8]] = [:]) {
        inner = Mutex(Inner(files: files))
    }

    var files: [String: [UInt8]] { inner.withLock { $0.files } }
    var steps: Int { inner.withLock { $0.steps } }
    /// Atomic writes and removals that completed.
    var writes: Int { inner.withLock { $0.writes } }

    /// Makes every read of `name` fail with `code` (EACCES: a permission; EIO: a bad sector;
    /// nil heals). Writes and removals still work, so a test can tell whether any was tried.
    func failReads(of name: String, with code: Int32?) { inner.withLock { $0.unreadable[name] = code } }

    func arm(at step: Int, _ fault: Fault) {
        inner.withLock {
            $0.faultAt = step
            $0.fault = fault
        }
    }

    /// The process starts again: no fault, the files as the crash left them.
    func restart() {
        inner.withLock {
            $0.faultAt = nil
            $0.dead = false
        }
    }

    func set(_ name: String, _ bytes: [UInt8]?) { inner.withLock { $0.files[name] = bytes } }
    func get(_ name: String) -> [UInt8]? { inner.withLock { $0.files[name] } }

    /// Counts a step; returns the errno to fail it with, marks death on a crash.
    private func step(_ inner: inout Inner, _ operation: StorageError.Operation, _ name: String) throws(StorageError) {
        if inner.dead { throw StorageError(operation, name, code: EIO, detail: "process is dead") }
        defer { inner.steps += 1 }
        guard inner.steps == inner.faultAt else { return }
        switch inner.fault {
        case .fail(let code): throw StorageError.posix(operation, name, code: code)
        case .crash:
            inner.dead = true
            throw StorageError(operation, name, code: EIO, detail: "crash")
        }
    }

    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        try inner.withLock { (inner: inout Inner) throws(StorageError) -> [UInt8]? in
            try step(&inner, .read, name)
            if let code = inner.unreadable[name], inner.files[name] != nil {
                throw StorageError.posix(.read, name, code: code)
            }
            return inner.files[name].map { Array($0.prefix(maxBytes + 1)) }
        }
    }

    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        try inner.withLock { (inner: inout Inner) throws(StorageError) in
            let temporary = ".\(name).tmp"
            try step(&inner, .write, name)
            inner.files[temporary] = bytes
            do throws(StorageError) {
                try step(&inner, .rename, name)
            } catch {
                if !inner.dead { inner.files[temporary] = nil }
                throw error
            }
            inner.files[name] = bytes
            inner.files[temporary] = nil
            inner.writes += 1
        }
    }

    func remove(_ name: String) throws(StorageError) {
        try inner.withLock { (inner: inout Inner) throws(StorageError) in
            try step(&inner, .remove, name)
            if inner.files.removeValue(forKey: name) != nil { inner.writes += 1 }
        }
    }
}
