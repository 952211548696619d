// The witness itself (C2SP tlog-witness): the latest cosigned checkpoint per origin kept crash-safely under a state directory, and add-checkpoint as decide, persist, then cosign, under one lock per origin.

import PinionCore
import PinionLog
import PinionSystem
import PinionTrust
import Synchronization

/// Why a witness cannot start.
public enum WitnessStartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The state directory cannot be created, opened or locked.
    case stateDirectory(String)
    /// Another process holds the state directory's lock (two witnesses on one state could cosign a fork).
    case stateInUse(String)
    /// A state file is unreadable, malformed, for another origin or not cosigned by this
    /// witness's key. The witness never starts over from size 0: that would let it cosign a fork.
    case corruptState(origin: String, file: String, detail: String)
    /// The witness's own key cannot make a verifier key with the configured name.
    case badKey(String)

    public var description: String {
        switch self {
        case .stateDirectory(let detail): return "--state-dir: \(detail)"
        case .stateInUse(let path):
            return "--state-dir \(path) is locked by another running witness (one process per state directory)"
        case .corruptState(let origin, let file, let detail):
            return
                "the state of origin \(origin) (\(file)) is unusable: \(detail); refusing to start rather than forget the cosigned size (restore the file from a backup; never delete it)"
        case .badKey(let detail): return "--key: \(detail)"
        }
    }
}

/// What one add-checkpoint request came to.
public enum WitnessOutcome: Sendable, Equatable {
    /// 200: the cosignature line (with its newline), after the checkpoint was persisted.
    case cosigned(line: [UInt8], checkpoint: Checkpoint)
    /// 400, 403, 404, 409 or 422 (`WitnessRefusal.httpStatus`); the state is unchanged.
    case refused(WitnessRefusal)
    /// 503: signing or persisting failed; nothing was acknowledged and the state is unchanged.
    case unavailable(String)
    /// The cosignature time is before `last`, the time of the latest cosignature for the
    /// origin: a v1 cosignature states that its tree was the latest "as of" its time (C2SP
    /// tlog-cosignature), so going back in time would contradict an earlier one. Nothing was
    /// signed and the state is unchanged.
    case timeBeforeLast(last: UInt64)
}

/// A witness over a state directory. One instance per directory (an exclusive lock is held
/// for its lifetime); requests for different origins run in parallel, those for one origin
/// one at a time.
///
/// State: one file per configured origin, `checkpoint-<SHA-256 hex of the origin>`, holding
/// the latest cosigned checkpoint note (the checkpoint text, a blank line, the log's signature
/// line as submitted and this witness's cosignature line), replaced atomically (temporary
/// file, fsync, rename, directory fsync) before any 200 is answered.
public final class Witness: Sendable {
    /// The configuration it runs with.
    public let configuration: WitnessConfiguration
    /// Its verifier key string's key (type 0x04, named `configuration.name`).
    public let verifierKey: NoteVerifierKey
    /// The request limits.
    public let limits: WitnessLimits

    private let signer: any NoteSigner & Sendable
    private let crypto: CryptoProvider
    private let storage: DirectoryStorage
    /// Held for the witness's lifetime (released when it is deallocated or the process ends).
    private let directoryLock: StorageLock
    private let logKeys: [String: [NoteVerifierKey]]
    private let slots: [String: Slot]

    private struct Record: Sendable {
        let checkpoint: Checkpoint
        let note: [UInt8]
        /// This witness's cosignature line in `note`, as it was sent (answered again to a
        /// re-cosign within `reCosignWriteInterval`).
        let cosignatureLine: [UInt8]
        /// The time of the cosignature in the state file (`note`, as written).
        let persistedTime: UInt64
        /// The latest time a cosignature was asked for: an earlier one is refused.
        let latestTime: UInt64
    }

    /// Seconds within which a re-cosign of the same tree is answered with the stored
    /// cosignature instead of a new one (nothing signed or written): anyone can replay a log's
    /// public checkpoint, so replays cost at most one state write per origin in this
    /// interval, and every cosignature given is one the state file holds.
    public static let reCosignWriteInterval: UInt64 = 60

    private final class Slot: Sendable {
        let fileName: String
        let record: Mutex<Record?>

        init(fileName: String, record: Record?) {
            self.fileName = fileName
            self.record = Mutex(record)
        }
    }

    /// Opens (creating if needed, mode 0700) the state directory, locks it and loads every
    /// configured origin's state.
    ///
    /// - Parameters:
    ///   - configuration: the witnessed logs and the witness's key name.
    ///   - signer: the witness's Ed25519 key.
    ///   - stateDirectory: the state directory.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: request limits.
    /// - Throws: `WitnessStartError`.
    public init(
        configuration: WitnessConfiguration, signer: any NoteSigner & Sendable, stateDirectory: String,
        crypto: CryptoProvider, limits: WitnessLimits = .standard
    ) throws(WitnessStartError) {
        self.configuration = configuration
        self.signer = signer
        self.crypto = crypto
        self.limits = limits
        do {
            verifierKey = try NoteVerifierKey(
                name: configuration.name, type: .cosignatureV1, publicKey: signer.publicKey, hasher: crypto.hasher)
        } catch {
            throw .badKey("\(error)")
        }
        do {
            storage = try DirectoryStorage(path: stateDirectory)
            // A directory others can write lets them rename an older note over the state
            // file: the witness would then cosign a fork.
            try DirectoryStorage.refuseWritableAncestry(stateDirectory)
        } catch {
            throw .stateDirectory("\(stateDirectory): \(error)")
        }
        let lock: StorageLock?
        do { lock = try storage.tryLockExclusively() } catch { throw .stateDirectory("\(stateDirectory): \(error)") }
        guard let lock else { throw .stateInUse(stateDirectory) }
        directoryLock = lock
        logKeys = configuration.logKeys
        var slots: [String: Slot] = [:]
        for log in configuration.logs {
            let name = Self.stateFileName(origin: log.origin, hasher: crypto.hasher)
            let record = try Self.load(
                name, origin: log.origin, storage: storage, witnessKey: verifierKey, crypto: crypto)
            slots[log.origin] = Slot(fileName: name, record: record)
        }
        self.slots = slots
    }

    /// The state file name of `origin`: `checkpoint-` and the SHA-256 of its UTF-8 in lowercase hex.
    public static func stateFileName(origin: String, hasher: any SHA256Hasher) -> String {
        "checkpoint-" + Hex.encode(hasher.sha256(Array(origin.utf8)))
    }

    /// Largest state file read, in bytes.
    static let maxStateBytes = 64 * 1024

    private static func load(
        _ name: String, origin: String, storage: DirectoryStorage, witnessKey: NoteVerifierKey, crypto: CryptoProvider
    ) throws(WitnessStartError) -> Record? {
        func corrupt(_ detail: String) -> WitnessStartError {
            .corruptState(origin: origin, file: storage.path + "/" + name, detail: detail)
        }
        let bytes: [UInt8]
        do {
            // A state file others may write could be rolled back to let this witness cosign a fork.
            guard let read = try storage.read(name, maxBytes: maxStateBytes, refuseWritableByOthers: true) else {
                return nil
            }
            bytes = read
        } catch {
            throw corrupt("cannot read it: \(error)")
        }
        guard bytes.count <= maxStateBytes else { throw corrupt("larger than \(maxStateBytes) bytes") }
        let note: SignedNote
        let checkpoint: Checkpoint
        do {
            note = try SignedNote.parse(bytes, limits: NoteLimits(maxBytes: maxStateBytes, maxSignatures: 64))
            checkpoint = try Checkpoint.parse(note.text, hasher: MerkleHasher(crypto.hasher))
        } catch {
            throw corrupt("not a checkpoint note: \(error)")
        }
        guard checkpoint.origin == origin else { throw corrupt("it holds a checkpoint of origin \(checkpoint.origin)") }
        let verified: [VerifiedNoteSignature]
        do { verified = try note.verify(keys: [witnessKey], verifier: crypto.verifier) } catch {
            throw corrupt("its cosignature does not verify: \(error)")
        }
        guard !verified.isEmpty else {
            throw corrupt("it carries no cosignature by this witness's key (another --key or --config name?)")
        }
        let time = verified[0].timestamp ?? 0
        let line = note.signatures.last { $0.keyName == witnessKey.name && $0.keyID == witnessKey.keyID }
        return Record(
            checkpoint: checkpoint, note: bytes, cosignatureLine: line.map { Array($0.line.utf8) } ?? [],
            persistedTime: time, latestTime: time)
    }

    /// The latest checkpoint cosigned for `origin`, nil when none yet or not configured.
    public func latestCheckpoint(origin: String) -> Checkpoint? {
        slots[origin]?.record.withLock { $0?.checkpoint }
    }

    /// The latest cosigned checkpoint note for `origin` (text, blank line, the log's signature
    /// line, this witness's cosignature line); nil when none yet or not configured.
    public func latestNote(origin: String) -> [UInt8]? {
        slots[origin]?.record.withLock { $0?.note }
    }

    /// The latest cosigned checkpoint note of the configured origin whose SHA-256 is
    /// `originHash` (lowercase hex; C2SP tlog-witness monitoring path); nil when none.
    public func latestNote(originHash: String) -> [UInt8]? {
        for origin in slots.keys where WitnessCheckpointPath.originHash(origin, hasher: crypto.hasher) == originHash {
            return latestNote(origin: origin)
        }
        return nil
    }

    /// Handles one add-checkpoint body (C2SP tlog-witness): decides, persists the new latest
    /// checkpoint, then returns the cosignature, all under the origin's lock. A re-cosign of
    /// the tree already on disk within `reCosignWriteInterval` of the cosignature there is
    /// answered with that stored cosignature (nothing signed or written).
    ///
    /// - Parameters:
    ///   - body: the request body.
    ///   - timestamp: the cosignature time, POSIX seconds (more than 0).
    /// - Returns: the outcome; only `.cosigned` changed the state. A `timestamp` before the
    ///   latest cosignature's for the origin is `.timeBeforeLast` (checked first).
    public func addCheckpoint(_ body: [UInt8], timestamp: UInt64) -> WitnessOutcome {
        let request: AddCheckpointRequest
        do { request = try AddCheckpointRequest.parse(body, limits: limits) } catch { return .refused(error) }
        let origin = String(request.note.text.prefix(while: { $0 != "\n" }))
        guard let slot = slots[origin], let keys = logKeys[origin] else { return .refused(.unknownOrigin(origin)) }
        return slot.record.withLock { record -> WitnessOutcome in
            if let record, timestamp < record.latestTime { return .timeBeforeLast(last: record.latestTime) }
            let decided: (checkpoint: Checkpoint, note: SignedNote)
            let known = record?.checkpoint
            do throws(WitnessRefusal) {
                decided = try WitnessDecision.decide(
                    body: body, logKeys: logKeys, latest: { $0 == origin ? known : nil }, crypto: crypto,
                    limits: limits)
            } catch {
                return .refused(error)
            }
            // The same tree again within the interval: the stored cosignature is given again
            // (its time up to reCosignWriteInterval old) instead of a new one, so no
            // cosignature exists that the state file does not hold, and a new process on the
            // state never dates a larger tree before one it gave.
            if let current = record, current.checkpoint == decided.checkpoint, timestamp >= current.persistedTime,
                timestamp - current.persistedTime < Self.reCosignWriteInterval, !current.cosignatureLine.isEmpty
            {
                record = Record(
                    checkpoint: current.checkpoint, note: current.note, cosignatureLine: current.cosignatureLine,
                    persistedTime: current.persistedTime, latestTime: max(current.latestTime, timestamp))
                return .cosigned(line: current.cosignatureLine, checkpoint: decided.checkpoint)
            }
            let line: [UInt8]
            let cosignature: [NoteSignature]
            do {
                line = try WitnessDecision.cosign(
                    decided.note, name: configuration.name, timestamp: timestamp, signer: signer,
                    hasher: crypto.hasher)
                cosignature = try SignedNote.parseSignatureLines(line)
            } catch {
                return .unavailable("cannot cosign: \(error)")
            }
            // The log's own line, once, as submitted; other witnesses' cosignatures are not kept.
            let logLine = decided.note.signatures.first { signature in
                keys.contains { $0.name == signature.keyName && $0.keyID == signature.keyID }
            }
            let stored = SignedNote(text: decided.note.text, signatures: (logLine.map { [$0] } ?? []) + cosignature)
            do { try storage.writeAtomically(slot.fileName, stored.bytes) } catch {
                return .unavailable("cannot persist the checkpoint: \(error)")
            }
            record = Record(
                checkpoint: decided.checkpoint, note: stored.bytes, cosignatureLine: line, persistedTime: timestamp,
                latestTime: timestamp)
            return .cosigned(line: line, checkpoint: decided.checkpoint)
        }
    }
}
