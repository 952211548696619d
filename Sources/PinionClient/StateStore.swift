// Persisting the client state crash-safely (DESIGN.md §6 step 6) and the start-up rule for a
// corrupt or foreign store: dropped and reported, its domain names kept enforced.

import Foundation
import PinionCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed storage operation, with the POSIX error number so callers and tests can match
/// `ENOSPC`, `EROFS`, `ENOTDIR`, `ELOOP` and the like.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The operation that failed.
    public enum Operation: String, Sendable, Equatable {
        /// Opening or inspecting the state directory or a file.
        case open
        /// Creating the state directory.
        case createDirectory = "create directory"
        /// Reading a file.
        case read
        /// Creating or writing a temporary file.
        case write
        /// fsync of a file.
        case sync
        /// Renaming a temporary file over its target.
        case rename
        /// Removing a file.
        case remove
    }

    /// The operation that failed.
    public var operation: Operation
    /// The file name inside the storage, or the directory path for directory operations.
    public var name: String
    /// The POSIX error number (`errno`), e.g. `ENOSPC`.
    public var code: Int32
    /// A more precise reason than `strerror(code)`, when there is one ("is a symbolic link").
    public var detail: String?

    /// - Parameters:
    ///   - operation: the operation that failed.
    ///   - name: the file name, or the directory path.
    ///   - code: the POSIX error number.
    ///   - detail: a more precise reason, if any.
    public init(_ operation: Operation, _ name: String, code: Int32, detail: String? = nil) {
        self.operation = operation
        self.name = name
        self.code = code
        self.detail = detail
    }

    /// `name: operation failed: reason`, safe to print on a terminal.
    public var description: String {
        let reason = detail ?? String(cString: strerror(code))
        return TerminalText.escape("\(name): \(operation.rawValue) failed: \(reason)")
    }
}

/// The file operations the state store needs, as a protocol so tests can inject failures
/// (disk full, read-only, a crash between two steps) without root-only tricks.
///
/// Names are single file names (no `/`, not starting with `.`: those are reserved for an
/// implementation's temporary files).
public protocol StateStorage: Sendable {
    /// Reads a whole file.
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - maxBytes: the caller refuses anything longer; an implementation stops reading after
    ///     `maxBytes + 1` bytes, so an oversize file is seen as such without being read whole.
    /// - Returns: the content (at most `maxBytes + 1` bytes), or nil when the file is absent.
    /// - Throws: `StorageError` when the file exists but cannot be read.
    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]?

    /// Replaces a file atomically and durably: a crash at any instant leaves the old file or
    /// the new one, never a mix, and when this returns the new file is on disk. On Linux:
    /// temporary file, write, fsync, rename, fsync of the directory.
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - bytes: the new content.
    /// - Throws: `StorageError`; the old file is then unchanged.
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError)

    /// Removes a file; removing an absent file succeeds.
    ///
    /// - Parameter name: the file name.
    /// - Throws: `StorageError` when the file exists and cannot be removed.
    func remove(_ name: String) throws(StorageError)

    /// Takes an exclusive lock shared by every process using this storage, held until the
    /// returned lock is released, so that two processes sharing a state directory never
    /// interleave a load-refresh-save (which could lower the floor or lose revocations).
    ///
    /// - Throws: `StorageError` when the lock cannot be taken.
    func lockExclusively() throws(StorageError) -> StorageLock
}

extension StateStorage {
    /// Storage private to one process (tests, memory) needs no cross-process lock.
    public func lockExclusively() throws(StorageError) -> StorageLock { StorageLock(descriptor: -1) }
}

/// An exclusive `flock(2)` lock, released (and its descriptor closed) when this is released.
public final class StorageLock: Sendable {
    private let descriptor: Int32

    /// - Parameter descriptor: a locked descriptor this object owns, or -1 for no lock.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 {
            _ = flock(descriptor, LOCK_UN)
            _ = close(descriptor)
        }
    }
}

/// What `StateStore.load()` found.
public enum StateLoad: Sendable, Equatable {
    /// No state has been committed yet (first start, or a crash during the very first save).
    case empty
    /// A well-formed state of the store's scope. Its envelopes are still unverified bytes: the
    /// trust core re-verifies signatures, scope and root before using them (DESIGN.md §6).
    case loaded(ClientState)
    /// The store was refused and must be treated as lost (DESIGN.md §6: "a corrupt or foreign
    /// store is dropped and reported"). `keptDomainNames` are the domain names of the last
    /// manifest that could still be read from either file; the client starts from
    /// `ClientState(scope:, manifestDomainNames: keptDomainNames)` so those domains stay
    /// enforced with no pins (refused) until a fresh manifest arrives. The files are left as
    /// they are (for inspection); the next `save` replaces both.
    case dropped(reason: StateError, keptDomainNames: [String])
}

/// Loads and saves the `ClientState` of one scope through a `StateStorage`.
///
/// Two files: `state.json` (`StateCodec`) and the small `enforced-domains.json`, which holds
/// the domain names of the state again so they survive the loss or corruption of
/// `state.json`. A save writes `enforced-domains.json` first, then `state.json` (the commit
/// point), each atomically; a crash at any instant leaves the old state or the new one. On a
/// drop the names of every file that can still be read are kept (their union), including
/// those of a foreign state: enforcing too many domains until the next refresh is safer than
/// unpinning one.
///
/// One writer per storage: the client serialises its saves.
public struct StateStore: Sendable {
    /// The main state file.
    public static let stateFileName = "state.json"
    /// The second file with the domain names to keep enforced.
    public static let enforcedDomainsFileName = "enforced-domains.json"

    /// Where the files live.
    public let storage: any StateStorage
    /// The scope this store belongs to; a state of another scope is foreign.
    public let scope: String
    /// Limits for envelopes and domain counts (DESIGN.md §5).
    public let limits: Limits

    /// - Parameters:
    ///   - storage: the file operations, usually a `DirectoryStorage`.
    ///   - scope: the app's scope (DESIGN.md §5).
    ///   - limits: bounds for envelope sizes and domain counts.
    public init(storage: any StateStorage, scope: String, limits: Limits = .standard) {
        self.storage = storage
        self.scope = scope
        self.limits = limits
    }

    /// Reads the stored state, applying the start-up rules of DESIGN.md §6.
    ///
    /// - `state.json` well-formed and of this scope: `.loaded`, whatever the second file holds.
    /// - `state.json` unreadable, corrupt, of a newer format or of another scope: `.dropped`,
    ///   keeping the names of both files where readable.
    /// - `state.json` absent: `.empty`, unless `enforced-domains.json` records a committed
    ///   state (then `.dropped(.stateFileMissing)` with its names) or is itself corrupt
    ///   (`.dropped` with no names).
    ///
    /// - Returns: what was found; never throws, every problem is a `.dropped` reason.
    public func load() -> StateLoad {
        let bytes: [UInt8]?
        do {
            bytes = try storage.read(Self.stateFileName, maxBytes: StateCodec.maxStateBytes)
        } catch {
            return .dropped(reason: .storage(error), keptDomainNames: keptNames(from: nil))
        }
        guard let bytes else { return loadWithoutStateFile() }
        let state: ClientState
        do {
            state = try StateCodec.decode(bytes, limits: limits)
        } catch {
            return .dropped(reason: error, keptDomainNames: keptNames(from: nil))
        }
        guard state.scope == scope else {
            return .dropped(
                reason: .foreignScope(expected: scope, found: state.scope), keptDomainNames: keptNames(from: state))
        }
        return .loaded(state)
    }

    /// Saves `state` so that a crash at any instant leaves the old state or the new one.
    ///
    /// Steps: refuse a state of another scope or one `load` would refuse; note whether
    /// `state.json` exists (anything unreadable there counts as existing, and is replaced);
    /// write `enforced-domains.json` (skipped when unchanged); write
    /// `state.json` (the commit point); after the very first save, record in
    /// `enforced-domains.json` that a state is committed (best effort: the save has already
    /// succeeded). If writing `state.json` fails, the previous `enforced-domains.json` is put
    /// back, so the previous files are left as they were.
    ///
    /// - Parameter state: the state to persist; its scope must be the store's.
    /// - Throws: `StateError.foreignScope` or `.invalidState` (nothing written), or
    ///   `.storage` (disk full, read-only, I/O error; the previous state is still in place and
    ///   the caller keeps its in-memory state unchanged).
    public func save(_ state: ClientState) throws(StateError) {
        guard state.scope == scope else { throw .foreignScope(expected: scope, found: state.scope) }
        let stateBytes = StateCodec.encode(state)
        do {
            _ = try StateCodec.decode(stateBytes, limits: limits)
        } catch {
            if case .corrupt(let reason) = error {
                var reason = reason
                reason.file = nil
                throw .invalidState(reason)
            }
            throw error
        }
        // Something unreadable where state.json goes (a symbolic link, a FIFO, an I/O error)
        // still counts as an existing state; the rename below replaces a link or a FIFO.
        let stateExists: Bool
        do {
            // maxBytes 0: only whether the file exists matters, not its content.
            stateExists = try storage.read(Self.stateFileName, maxBytes: 0) != nil
        } catch {
            stateExists = true
        }
        let previousDomains: PreviousFile
        do {
            let bytes = try storage.read(Self.enforcedDomainsFileName, maxBytes: StateCodec.maxDomainsFileBytes(limits))
            previousDomains = bytes.map { .content($0) } ?? .absent
        } catch {
            previousDomains = .unreadable
        }
        var domains = StateCodec.EnforcedDomains(
            scope: scope, names: state.manifestDomainNames, stateCommitted: stateExists)
        let domainsBytes = StateCodec.encodeEnforcedDomains(domains)
        let domainsChanged = previousDomains != .content(domainsBytes)
        if domainsChanged {
            do { try storage.writeAtomically(Self.enforcedDomainsFileName, domainsBytes) } catch {
                throw .storage(error)
            }
        }
        do {
            try storage.writeAtomically(Self.stateFileName, stateBytes)
        } catch {
            if domainsChanged { restoreDomainsFile(previousDomains) }
            throw .storage(error)
        }
        if !stateExists {
            domains.stateCommitted = true
            try? storage.writeAtomically(Self.enforcedDomainsFileName, StateCodec.encodeEnforcedDomains(domains))
        }
    }

    /// Removes the stored state: `enforced-domains.json` first, so a crash in between leaves
    /// the old state loadable rather than a missing one.
    ///
    /// - Throws: `StateError.storage` when a file cannot be removed.
    public func clear() throws(StateError) {
        do {
            try storage.remove(Self.enforcedDomainsFileName)
            try storage.remove(Self.stateFileName)
        } catch {
            throw .storage(error)
        }
    }

    // MARK: - Private

    /// `state.json` is absent: nothing committed yet, the crash window of the first save, or
    /// a lost file.
    private func loadWithoutStateFile() -> StateLoad {
        switch readEnforcedDomains() {
        case .success(nil): return .empty
        case .success(let domains?):
            // stateCommitted false: the first save died between its two files; nothing was
            // committed, so the old state (none) stands.
            guard domains.stateCommitted else { return .empty }
            return .dropped(reason: .stateFileMissing, keptDomainNames: domains.names)
        case .failure(let error): return .dropped(reason: error, keptDomainNames: [])
        }
    }

    /// The union of the names in `state` (a readable but refused state) and in the
    /// enforced-domains file, if it can be read; the scope of either is not checked (a
    /// foreign store's names are kept too).
    private func keptNames(from state: ClientState?) -> [String] {
        var names = state?.manifestDomainNames ?? []
        if case .success(let domains?) = readEnforcedDomains() {
            var seen = Set(names)
            for name in domains.names where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    private func readEnforcedDomains() -> Result<StateCodec.EnforcedDomains?, StateError> {
        do {
            guard
                let bytes = try storage.read(
                    Self.enforcedDomainsFileName, maxBytes: StateCodec.maxDomainsFileBytes(limits))
            else { return .success(nil) }
            do {
                return .success(try StateCodec.decodeEnforcedDomains(bytes, limits: limits))
            } catch {
                return .failure(error)
            }
        } catch {
            return .failure(.storage(error))
        }
    }

    /// What `enforced-domains.json` held when a save began.
    private enum PreviousFile: Equatable {
        case absent
        case content([UInt8])
        case unreadable
    }

    /// Best effort after a failed save: put the previous enforced-domains file back, or
    /// remove the new one when there was none. An unreadable or oversize previous file (read
    /// only in part) cannot be put back; it was unusable anyway.
    private func restoreDomainsFile(_ previous: PreviousFile) {
        switch previous {
        case .absent: try? storage.remove(Self.enforcedDomainsFileName)
        case .content(let bytes) where bytes.count <= StateCodec.maxDomainsFileBytes(limits):
            try? storage.writeAtomically(Self.enforcedDomainsFileName, bytes)
        case .content, .unreadable: break
        }
    }
}

/// `StateStorage` on a directory of the local file system.
///
/// The directory is created with mode 0700 (with missing parents) when absent; a path whose
/// last component is a symbolic link, that is not a directory, or that is writable by others
/// is refused. Every operation opens the directory again without following a symbolic link
/// and works relative to it, so swapping the directory for a link later is refused too.
/// Files are created with mode 0600; a file name that is a symbolic link or not a regular
/// file is refused. Temporary files are named `.NAME.tmp-PID-RANDOM`; ones left by a process
/// that no longer runs (a crash) are removed when the storage is opened.
public struct DirectoryStorage: StateStorage {
    /// The directory path, without trailing slashes.
    public let path: String

    /// Opens (and if needed creates) the state directory.
    ///
    /// - Parameter path: the directory; its last component must not be a symbolic link.
    /// - Throws: `StorageError` with `ENOTDIR` (not a directory, or a parent is a file),
    ///   `ELOOP` (a symbolic link), `EPERM` (writable by others) or the error of `mkdir`.
    public init(path: String) throws(StorageError) {
        var trimmed = path
        // "dir/" would make open(2) follow a symbolic link despite O_NOFOLLOW.
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard !trimmed.isEmpty else { throw StorageError(.open, path, code: ENOENT, detail: "empty path") }
        self.path = trimmed
        try Self.createDirectory(trimmed)
        let directory = try openDirectory()
        close(directory)
        removeStaleTemporaryFiles()
    }

    /// Locks the state directory itself with `flock(2)` (waiting for another process's
    /// refresh to finish).
    ///
    /// - Throws: `StorageError` when the directory cannot be opened or locked.
    public func lockExclusively() throws(StorageError) -> StorageLock {
        let directory = try openDirectory()
        while flock(directory, LOCK_EX) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(directory)
            throw StorageError(.open, path, code: code, detail: "cannot lock the state directory")
        }
        return StorageLock(descriptor: directory)
    }

    /// Reads `name` (regular files only; a symbolic link is refused with `ELOOP`).
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - maxBytes: reading stops after `maxBytes + 1` bytes.
    /// - Returns: the content, or nil when the file is absent.
    /// - Throws: `StorageError`.
    public func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw StorageError(.open, name, code: code, detail: code == ELOOP ? "is a symbolic link" : nil)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StorageError(.open, name, code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StorageError(.open, name, code: EINVAL, detail: "not a regular file")
        }
        return try POSIX.readAll(descriptor, limit: maxBytes < Int.max ? maxBytes + 1 : maxBytes, name: name)
    }

    /// Writes a temporary file (mode 0600), fsyncs it, renames it over `name` and fsyncs the
    /// directory. The temporary file is removed on any failure.
    ///
    /// A failing directory fsync is not reported: the rename is then done but may not survive
    /// a power loss, which leaves the old file, still never a mix.
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - bytes: the new content.
    /// - Throws: `StorageError` (e.g. `ENOSPC`, `EROFS`, `EISDIR`); the old file is unchanged.
    public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        let temporary = ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StorageError(.write, name, code: errno) }
        do throws(StorageError) {
            // The creation mode is narrowed by the umask, never widened; set it exactly.
            guard fchmod(descriptor, 0o600) == 0 else { throw StorageError(.write, name, code: errno) }
            try POSIX.writeAll(descriptor, bytes, name: name)
            guard fsync(descriptor) == 0 else { throw StorageError(.sync, name, code: errno) }
        } catch {
            close(descriptor)
            unlinkat(directory, temporary, 0)
            throw error
        }
        // close(2) can report a deferred write error (network file systems).
        guard close(descriptor) == 0 else {
            let code = errno
            unlinkat(directory, temporary, 0)
            throw StorageError(.write, name, code: code)
        }
        guard renameat(directory, temporary, directory, name) == 0 else {
            let code = errno
            unlinkat(directory, temporary, 0)
            throw StorageError(.rename, name, code: code)
        }
        _ = fsync(directory)
    }

    /// Removes `name` and fsyncs the directory; an absent file is not an error.
    ///
    /// - Parameter name: the file name.
    /// - Throws: `StorageError`.
    public func remove(_ name: String) throws(StorageError) {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        guard unlinkat(directory, name, 0) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw StorageError(.remove, name, code: code)
        }
        _ = fsync(directory)
    }

    // MARK: - Private

    /// A single file name not starting with `.` (reserved for temporary files).
    private static func check(_ name: String) throws(StorageError) {
        let valid =
            !name.isEmpty && name.utf8.count <= 200 && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
        guard valid else { throw StorageError(.open, name, code: EINVAL, detail: "not a plain file name") }
    }

    /// `mkdir -p` with mode 0700 for every directory it creates.
    private static func createDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        switch code {
        case EEXIST: return  // checked by openDirectory
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw StorageError(.createDirectory, path, code: code) }
            try createDirectory(parent)
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw StorageError(.createDirectory, path, code: errno)
            }
        default: throw StorageError(.createDirectory, path, code: code)
        }
    }

    /// Opens the directory itself (not a symbolic link to one) and checks its kind and mode.
    private func openDirectory() throws(StorageError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            var info = stat()
            let isLink = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
            throw StorageError(
                .open, path, code: isLink ? ELOOP : code, detail: isLink ? "is a symbolic link" : nil)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw StorageError(.open, path, code: code)
        }
        // Others could plant or swap files in a world-writable directory (such as /tmp).
        guard info.st_mode & 0o002 == 0 else {
            close(descriptor)
            throw StorageError(.open, path, code: EPERM, detail: "writable by others; use a private directory")
        }
        return descriptor
    }

    /// Temporary files of writes that a crash interrupted: those whose writer process
    /// (`.NAME.tmp-PID-RANDOM`) no longer exists. A live process's file is in flight.
    private func removeStaleTemporaryFiles() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        let directory: Int32
        do { directory = try openDirectory() } catch { return }
        defer { close(directory) }
        for entry in entries where entry.hasPrefix(".") {
            guard let marker = entry.range(of: ".tmp-", options: .backwards) else { continue }
            let fields = entry[marker.upperBound...].split(separator: "-")
            guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0, UInt32(fields[1]) != nil else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH { unlinkat(directory, entry, 0) }
        }
    }
}

/// read(2) and write(2) loops with errno, kept apart from `DirectoryStorage` whose methods
/// share the names.
private enum POSIX {
    static func readAll(_ descriptor: Int32, limit: Int, name: String) throws(StorageError) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1, min(limit, 1 << 16)))
        while output.count < limit {
            let count = read(descriptor, &chunk, min(chunk.count, limit - output.count))
            if count < 0 {
                if errno == EINTR { continue }
                throw StorageError(.read, name, code: errno)
            }
            if count == 0 { break }
            output.append(contentsOf: chunk[0..<count])
        }
        return output
    }

    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], name: String) throws(StorageError) {
        var remaining = bytes
        while !remaining.isEmpty {
            let count = write(descriptor, remaining, remaining.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw StorageError(.write, name, code: errno)
            }
            remaining.removeFirst(count)
        }
    }
}
