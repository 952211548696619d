// Persisting the client state crash-safely (docs/DESIGN.md §6 step 6) and the start-up rule for a
// corrupt or foreign store: dropped and reported, its domain names kept enforced.

import PinionCore

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
    /// The reason in words: the platform's text for `code` (`strerror`), or a more precise
    /// one ("is a symbolic link"). Storage implementations fill it in; nil prints the number.
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
        let reason = detail ?? "error \(code)"
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
    public func lockExclusively() throws(StorageError) -> StorageLock { StorageLock(release: nil) }
}

/// A held cross-process lock (on Linux an exclusive `flock(2)`), released when this object
/// is released.
public final class StorageLock: Sendable {
    private let release: (@Sendable () -> Void)?

    /// - Parameter release: called once when the lock is released; nil for no lock (storage
    ///   private to one process).
    public init(release: (@Sendable () -> Void)?) {
        self.release = release
    }

    deinit {
        release?()
    }
}

/// What `StateStore.load()` found.
public enum StateLoad: Sendable, Equatable {
    /// No state has been committed yet (first start, or a crash during the very first save).
    case empty
    /// A well-formed state of the store's scope. Its envelopes are still unverified bytes: the
    /// trust core re-verifies signatures, scope and root before using them (docs/DESIGN.md §6).
    case loaded(ClientState)
    /// The store was refused and must be treated as lost (docs/DESIGN.md §6: "a corrupt or foreign
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
    /// Limits for envelopes and domain counts (docs/DESIGN.md §5).
    public let limits: Limits
    /// SHA-256 for the checksum that ends each stored file.
    public let hasher: any SHA256Hasher

    /// - Parameters:
    ///   - storage: the file operations, usually a `DirectoryStorage`.
    ///   - scope: the app's scope (docs/DESIGN.md §5).
    ///   - limits: bounds for envelope sizes and domain counts.
    ///   - hasher: SHA-256 (FIPS 180-4) for the files' checksums, usually the platform's
    ///     `CryptoProvider.hasher`.
    public init(storage: any StateStorage, scope: String, limits: Limits = .standard, hasher: any SHA256Hasher) {
        self.storage = storage
        self.scope = scope
        self.limits = limits
        self.hasher = hasher
    }

    /// Reads the stored state, applying the start-up rules of docs/DESIGN.md §6.
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
            state = try StateCodec.decode(bytes, limits: limits, hasher: hasher)
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
        let stateBytes = StateCodec.encode(state, hasher: hasher)
        do {
            _ = try StateCodec.decode(stateBytes, limits: limits, hasher: hasher)
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
        let domainsBytes = StateCodec.encodeEnforcedDomains(domains, hasher: hasher)
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
            try? storage.writeAtomically(
                Self.enforcedDomainsFileName, StateCodec.encodeEnforcedDomains(domains, hasher: hasher))
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
                return .success(try StateCodec.decodeEnforcedDomains(bytes, limits: limits, hasher: hasher))
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
