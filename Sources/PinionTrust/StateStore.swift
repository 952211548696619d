// Persisting the client state crash-safely as two full copies (docs/DESIGN.md §6 step 6) and the
// start-up rules: the valid copy with the higher floor wins, a lost copy is rewritten.

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
    /// No state has been committed yet (first start, a crash during the very first save, or
    /// every file deleted: the floor restarts from the embedded root, docs/CLIENT.md).
    case empty
    /// A well-formed state of the store's scope: the valid copy with the higher floor. Its
    /// envelopes are still unverified bytes: the trust core re-verifies signatures, scope and
    /// root before using them (docs/DESIGN.md §6).
    case loaded(ClientState)
    /// Every copy is lost (corrupt, of another scope or of a newer format; at least one is
    /// present), so the state must be treated as lost. `reason` is the first copy's.
    /// `keptDomainNames` are the domain names still readable in any copy
    /// (`StateCodec.salvageDomainNames`); the client starts from
    /// `ClientState(scope:, manifestDomainNames: keptDomainNames)` so those domains stay
    /// enforced with no pins (refused) until a fresh manifest arrives. The files are left as
    /// they are (for inspection); the next `save` replaces them.
    case dropped(reason: StateError, keptDomainNames: [String])
    /// A file exists but could not be read for another reason than absence or content
    /// (permission, I/O error, a device still locked before first unlock). Nothing may be
    /// concluded and nothing is written: the caller skips its refresh and reports it.
    case unreadable(StorageError)
}

/// One copy that `StateStore.recover()` found lost and rewrote from the surviving record.
public struct StateCopyLoss: Sendable, Equatable {
    /// The copy's file name (`state-a.json` or `state-b.json`).
    public var file: String
    /// Why it counted as lost; nil when it was missing.
    public var reason: StateError?

    /// - Parameters:
    ///   - file: the copy's file name.
    ///   - reason: why it was lost; nil for a missing copy.
    public init(file: String, reason: StateError?) {
        self.file = file
        self.reason = reason
    }
}

/// What `StateStore.recover()` found and repaired.
public struct StateRecovery: Sendable, Equatable {
    /// The state to start from.
    public var load: StateLoad
    /// Copies that were missing, refused, or valid with a lower floor, and were rewritten
    /// from the loaded state (only with `.loaded`).
    public var rewritten: [StateCopyLoss]
    /// The formatVersion of the files the state was migrated from (1: `state.json`), if any.
    public var migratedFromFormatVersion: Int64?
    /// Why a rewrite or the removal of formatVersion 1 files failed, if one did. The loaded
    /// state is still usable; the next save writes both copies again.
    public var repairFailure: StorageError?
}

/// Loads and saves the `ClientState` of one scope through a `StateStorage`.
///
/// The state record is written as two full copies, `state-a.json` then `state-b.json`, each
/// atomically (`StateStorage.writeAtomically`) and each ending in its own SHA-256
/// (`StateCodec`). A crash at any instant leaves, in each copy, the old state or the new one.
/// `load` takes the valid copy with the higher floor; only a missing copy, or one whose
/// checksum or parse fails (or of another scope, or of a newer format), counts as lost; any
/// other read error is `.unreadable` and nothing is concluded (docs/DESIGN.md §6).
///
/// Older installs: when neither copy exists, the formatVersion 1 files (`state.json` and
/// `enforced-domains.json`) are read with their own rules, and `recover` migrates them.
///
/// One writer per storage at a time: processes sharing a directory serialise their
/// load-refresh-save under `StateStorage.lockExclusively()`.
public struct StateStore: Sendable {
    /// The two copies, in the order they are written.
    public static let copyFileNames = ["state-a.json", "state-b.json"]
    /// The formatVersion 1 state file, read to migrate an older install.
    public static let stateFileName = "state.json"
    /// The formatVersion 1 file with the domain names to keep enforced.
    public static let enforcedDomainsFileName = "enforced-domains.json"

    /// Where the files live.
    public let storage: any StateStorage
    /// The scope this store belongs to; a state of another scope is foreign.
    public let scope: String
    /// Limits for envelopes and domain counts (docs/DESIGN.md §5).
    public let limits: Limits
    /// SHA-256 for the checksum that ends each stored copy.
    public let hasher: any SHA256Hasher

    /// - Parameters:
    ///   - storage: the file operations, usually a `DirectoryStorage`.
    ///   - scope: the app's scope (docs/DESIGN.md §5).
    ///   - limits: bounds for envelope sizes and domain counts.
    ///   - hasher: SHA-256 (FIPS 180-4) for the copies' checksums, usually the platform's
    ///     `CryptoProvider.hasher`.
    public init(storage: any StateStorage, scope: String, limits: Limits = .standard, hasher: any SHA256Hasher) {
        self.storage = storage
        self.scope = scope
        self.limits = limits
        self.hasher = hasher
    }

    /// What one copy holds.
    public enum CopyRead: Sendable, Equatable {
        /// The file is absent.
        case missing
        /// A well-formed state of the store's scope.
        case valid(ClientState)
        /// Present but refused: the reason, and the domain names it still names.
        case lost(StateError, names: [String])
        /// Present but not readable (permission, I/O error, locked device).
        case unreadable(StorageError)
    }

    /// The valid copy with the higher floor, ignoring copies that cannot be read: what the
    /// client enforces while another copy is unreadable, so that no domain a readable record
    /// pins becomes unpinned (docs/DESIGN.md §6, §7). Reads only; nothing is written.
    ///
    /// - Returns: the best readable state of this scope, or nil when no copy is valid.
    public func bestReadableCopy() -> ClientState? {
        var best: ClientState?
        for case .valid(let state) in Self.copyFileNames.map(readCopy) {
            let zero = ManifestOrder(rootVersion: 0, version: 0)
            if let current = best, (state.floor ?? zero) <= (current.floor ?? zero) { continue }
            best = state
        }
        return best
    }

    /// Reads and checks one copy; never throws.
    ///
    /// - Parameter file: one of `copyFileNames`.
    /// - Returns: what the copy holds.
    public func readCopy(_ file: String) -> CopyRead {
        let bytes: [UInt8]?
        do {
            bytes = try storage.read(file, maxBytes: StateCodec.maxStateBytes)
        } catch {
            return .unreadable(error)
        }
        guard let bytes else { return .missing }
        let state: ClientState
        do {
            state = try StateCodec.decode(bytes, limits: limits, hasher: hasher, file: file)
        } catch {
            return .lost(error, names: StateCodec.salvageDomainNames(bytes, limits: limits))
        }
        guard state.scope == scope else {
            return .lost(.foreignScope(expected: scope, found: state.scope), names: state.manifestDomainNames)
        }
        return .valid(state)
    }

    /// Reads the stored state without writing anything, applying the start-up rules of
    /// docs/DESIGN.md §6:
    ///
    /// - a copy unreadable for another reason than absence or content: `.unreadable`;
    /// - one or two valid copies: `.loaded` with the higher floor (A on a tie);
    /// - no valid copy and at least one present: `.dropped`, keeping the names of both;
    /// - neither copy present: the formatVersion 1 files decide (`.empty` when there are none).
    ///
    /// - Returns: what was found; never throws.
    public func load() -> StateLoad { loadCopies().load }

    /// `load()`, then repairs: every copy that is missing, lost or behind the loaded state is
    /// rewritten from it (A before B), and formatVersion 1 files are removed once both copies
    /// hold the migrated state. Only with `.loaded`; `.dropped` and `.unreadable` write
    /// nothing. A failed repair is reported in `repairFailure` and leaves the loaded state
    /// usable.
    ///
    /// Safe without the storage's lock: it writes only the loaded state, which has the
    /// highest floor of the copies read, so a concurrent save is never undone below its
    /// own floor in both copies. Callers that can should hold the lock.
    ///
    /// - Returns: the loaded state and what was repaired.
    public func recover() -> StateRecovery {
        let found = loadCopies()
        var recovery = StateRecovery(
            load: found.load, rewritten: [], migratedFromFormatVersion: found.migrated ? 1 : nil, repairFailure: nil)
        guard case .loaded(let state) = found.load else { return recovery }
        let bytes = StateCodec.encode(state, hasher: hasher)
        do {
            for (file, read) in zip(Self.copyFileNames, found.copies) {
                let loss: StateCopyLoss
                switch read {
                case .valid(let copy) where copy == state && !found.migrated: continue
                case .missing, .valid, .unreadable: loss = StateCopyLoss(file: file, reason: nil)
                case .lost(let reason, _): loss = StateCopyLoss(file: file, reason: reason)
                }
                try storage.writeAtomically(file, bytes)
                recovery.rewritten.append(loss)
            }
            if found.migrated {
                try storage.remove(Self.stateFileName)
                try storage.remove(Self.enforcedDomainsFileName)
            }
        } catch {
            recovery.repairFailure = error
        }
        return recovery
    }

    /// Saves `state` as copy A, then copy B, each atomically: a crash at any instant leaves
    /// each copy old or new, so `load` finds the old state or the new one.
    ///
    /// Steps: refuse a state of another scope or one `load` would refuse (nothing written);
    /// read copy A as it is; write A; write B. If writing B fails, A is put back as it was
    /// (or removed if it was absent), so a failed save leaves the previous files; if putting
    /// it back fails too, A keeps the new state, which `load` then prefers (its floor is not
    /// lower).
    ///
    /// - Parameter state: the state to persist; its scope must be the store's.
    /// - Throws: `StateError.foreignScope` or `.invalidState` (nothing written), or
    ///   `.storage` (disk full, read-only, I/O error; the caller keeps its in-memory state).
    public func save(_ state: ClientState) throws(StateError) {
        guard state.scope == scope else { throw .foreignScope(expected: scope, found: state.scope) }
        let bytes = StateCodec.encode(state, hasher: hasher)
        do {
            _ = try StateCodec.decode(bytes, limits: limits, hasher: hasher)
        } catch {
            if case .corrupt(let reason) = error {
                var reason = reason
                reason.file = nil
                throw .invalidState(reason)
            }
            throw error
        }
        let previousA: [UInt8]??
        do {
            previousA = .some(try storage.read(Self.copyFileNames[0], maxBytes: StateCodec.maxStateBytes))
        } catch {
            previousA = .none
        }
        do { try storage.writeAtomically(Self.copyFileNames[0], bytes) } catch { throw .storage(error) }
        do {
            try storage.writeAtomically(Self.copyFileNames[1], bytes)
        } catch {
            switch previousA {
            case .some(.some(let old)) where old.count <= StateCodec.maxStateBytes:
                try? storage.writeAtomically(Self.copyFileNames[0], old)
            case .some(.none): try? storage.remove(Self.copyFileNames[0])
            default: break  // unreadable or oversize before: it was unusable anyway
            }
            throw .storage(error)
        }
    }

    /// Removes the stored state: copy B, copy A, then any formatVersion 1 files.
    ///
    /// - Throws: `StateError.storage` when a file cannot be removed.
    public func clear() throws(StateError) {
        do {
            for file in Self.copyFileNames.reversed() { try storage.remove(file) }
            try storage.remove(Self.enforcedDomainsFileName)
            try storage.remove(Self.stateFileName)
        } catch {
            throw .storage(error)
        }
    }

    // MARK: - Private

    private struct Found {
        var load: StateLoad
        var copies: [CopyRead]
        var migrated: Bool
    }

    private func loadCopies() -> Found {
        let copies = Self.copyFileNames.map(readCopy)
        for case .unreadable(let error) in copies {
            return Found(load: .unreadable(error), copies: copies, migrated: false)
        }
        var best: ClientState?
        for case .valid(let state) in copies {
            let order = state.floor ?? ManifestOrder(rootVersion: 0, version: 0)
            if let current = best, order <= current.floor ?? ManifestOrder(rootVersion: 0, version: 0) { continue }
            best = state
        }
        if let best { return Found(load: .loaded(best), copies: copies, migrated: false) }
        var reason: StateError?
        var names: [String] = []
        var seen = Set<String>()
        for case .lost(let error, let copyNames) in copies {
            if reason == nil { reason = error }
            for name in copyNames where seen.insert(name).inserted { names.append(name) }
        }
        if let reason {
            return Found(load: .dropped(reason: reason, keptDomainNames: names), copies: copies, migrated: false)
        }
        // Neither copy exists: an install from before the two copies, or none at all.
        let legacy = loadFormatVersion1()
        if case .loaded = legacy { return Found(load: legacy, copies: copies, migrated: true) }
        return Found(load: legacy, copies: copies, migrated: false)
    }
}
