// A witness's pure decisions (C2SP tlog-witness add-checkpoint): parse the request, then cosign or refuse with the spec's status.

import PinionCore
import PinionLog

/// Why a witness refuses an add-checkpoint request, with the HTTP status the spec assigns.
public enum WitnessRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// 400: a malformed body, or an old size above the checkpoint's size.
    case badRequest(String)
    /// 403: no valid signature by a trusted key for the origin, or a bad one.
    case forbidden(String)
    /// 404: an origin this witness is not configured for.
    case unknownOrigin(String)
    /// 409: the old size is not the size of the latest checkpoint cosigned; carries that size
    /// (the response body is it in decimal and a newline, `Content-Type: text/x.tlog.size`).
    case conflict(latestSize: UInt64)
    /// 422: a bad consistency proof, a proof for old size 0, another hash at the same size,
    /// or a size-0 checkpoint without the empty tree's hash.
    case unprocessable(String)

    /// The HTTP status code.
    public var httpStatus: Int {
        switch self {
        case .badRequest: return 400
        case .forbidden: return 403
        case .unknownOrigin: return 404
        case .conflict: return 409
        case .unprocessable: return 422
        }
    }

    public var description: String {
        switch self {
        case .badRequest(let reason): return "400 bad request: \(reason)"
        case .forbidden(let reason): return "403 forbidden: \(reason)"
        case .unknownOrigin(let origin): return "404 unknown origin \(origin)"
        case .conflict(let size): return "409 conflict: the latest cosigned size is \(size)"
        case .unprocessable(let reason): return "422 unprocessable: \(reason)"
        }
    }
}

/// Limits a witness applies while reading a request.
public struct WitnessLimits: Sendable, Equatable {
    /// Largest body, in bytes (default 64 KiB).
    public var maxBodyBytes: Int
    /// Most consistency proof lines (the spec's 63).
    public var maxProofLines: Int
    /// Limits for the submitted checkpoint note.
    public var note: NoteLimits

    /// - Parameters:
    ///   - maxBodyBytes: largest request body, in bytes.
    ///   - maxProofLines: most consistency proof lines.
    ///   - note: limits for the submitted note.
    public init(maxBodyBytes: Int = 64 * 1024, maxProofLines: Int = 63, note: NoteLimits = .standard) {
        self.maxBodyBytes = maxBodyBytes
        self.maxProofLines = maxProofLines
        self.note = note
    }

    /// The defaults: 64 KiB, 63 proof lines, 32 signature lines.
    public static let standard = WitnessLimits()
}

/// An add-checkpoint request body: `old <size>`, consistency proof lines, a blank line, the checkpoint note.
public struct AddCheckpointRequest: Sendable, Equatable {
    /// The size of the checkpoint the witness is expected to hold.
    public let oldSize: UInt64
    /// The consistency proof from `oldSize`, 32-byte hashes.
    public let consistencyProof: [[UInt8]]
    /// The submitted checkpoint note.
    public let note: SignedNote

    /// A request from its parts.
    public init(oldSize: UInt64, consistencyProof: [[UInt8]], note: SignedNote) {
        self.oldSize = oldSize
        self.consistencyProof = consistencyProof
        self.note = note
    }

    /// The request body bytes.
    public var bytes: [UInt8] {
        let head = "old \(oldSize)\n" + consistencyProof.map { Base64.encode($0) + "\n" }.joined() + "\n"
        return Array(head.utf8) + note.bytes
    }

    /// Parses a body strictly, with the size checked first and the proof lines counted while reading.
    ///
    /// - Throws: `WitnessRefusal.badRequest`.
    public static func parse(_ body: [UInt8], limits: WitnessLimits = .standard) throws(WitnessRefusal)
        -> AddCheckpointRequest
    {
        guard body.count <= limits.maxBodyBytes else {
            throw .badRequest("body larger than \(limits.maxBodyBytes) bytes")
        }
        var offset = 0
        func nextLine() throws(WitnessRefusal) -> String {
            guard let end = body[offset...].firstIndex(of: 0x0A),
                let line = String(validating: body[offset..<end], as: UTF8.self)
            else { throw .badRequest("truncated body") }
            offset = end + 1
            return line
        }
        let first = try nextLine()
        guard first.hasPrefix("old ") else { throw .badRequest("no old size line") }
        let digits = String(first.dropFirst(4))
        guard !digits.isEmpty, digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            digits == "0" || !digits.hasPrefix("0"), let oldSize = UInt64(digits)
        else { throw .badRequest("invalid old size") }
        var proof = [[UInt8]]()
        while true {
            let line = try nextLine()
            if line.isEmpty { break }
            guard proof.count < limits.maxProofLines else {
                throw .badRequest("more than \(limits.maxProofLines) proof lines")
            }
            guard let hash = Base64.decodeCanonical(line), hash.count == 32 else {
                throw .badRequest("proof line \(proof.count + 1) is not a base64 SHA-256 hash")
            }
            proof.append(hash)
        }
        do {
            return AddCheckpointRequest(
                oldSize: oldSize, consistencyProof: proof,
                note: try SignedNote.parse(Array(body[offset...]), limits: limits.note))
        } catch {
            throw .badRequest("checkpoint: \(error)")
        }
    }
}

/// The witness's decision for one add-checkpoint request.
public enum WitnessDecision {
    /// Decides whether to cosign (C2SP tlog-witness "add-checkpoint", checks in the spec's order).
    ///
    /// The caller must, atomically with respect to other requests for the origin: read the
    /// latest checkpoint, call this, persist the returned checkpoint, and only then answer
    /// 200 with `WitnessDecision.cosign`'s lines.
    ///
    /// - Parameters:
    ///   - body: the request body.
    ///   - logKeys: the trusted log keys, by origin.
    ///   - latest: the latest checkpoint this witness cosigned for the origin, if any.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: the request limits.
    /// - Returns: the checkpoint to persist and cosign (the same size with the same hash re-cosigns).
    /// - Throws: `WitnessRefusal` with its status.
    public static func decide(
        body: [UInt8], logKeys: [String: [NoteVerifierKey]], latest: (String) -> Checkpoint?, crypto: CryptoProvider,
        limits: WitnessLimits = .standard
    ) throws(WitnessRefusal) -> (checkpoint: Checkpoint, note: SignedNote) {
        let hasher = MerkleHasher(crypto.hasher)
        let request = try AddCheckpointRequest.parse(body, limits: limits)
        let origin = String(request.note.text.prefix(while: { $0 != "\n" }))
        guard let keys = logKeys[origin], !keys.isEmpty else { throw .unknownOrigin(origin) }
        do {
            guard !(try request.note.verify(keys: keys, verifier: crypto.verifier)).isEmpty else {
                throw WitnessRefusal.forbidden("no signature by a trusted log key")
            }
        } catch let refusal as WitnessRefusal {
            throw refusal
        } catch {
            throw .forbidden("\(error)")
        }
        let checkpoint: Checkpoint
        do { checkpoint = try Checkpoint.parse(request.note.text, hasher: hasher) } catch CheckpointError.emptyTreeHash
        {
            throw .unprocessable("a size-0 checkpoint must carry the empty tree's hash")
        } catch {
            throw .badRequest("\(error)")
        }
        guard request.oldSize <= checkpoint.size else { throw .badRequest("old size above the checkpoint's size") }
        let known = latest(origin)
        let latestSize = known?.size ?? 0
        guard request.oldSize == latestSize else { throw .conflict(latestSize: latestSize) }
        if request.oldSize == 0 {
            guard request.consistencyProof.isEmpty else { throw .unprocessable("a proof from size 0 must be empty") }
            return (checkpoint, request.note)
        }
        guard let known else { throw .conflict(latestSize: 0) }
        if request.oldSize == checkpoint.size {
            guard known.rootHash == checkpoint.rootHash, request.consistencyProof.isEmpty else {
                throw .unprocessable("another tree of the same size")
            }
            return (checkpoint, request.note)
        }
        do {
            try MerkleProofs.verifyConsistency(
                oldSize: known.size, newSize: checkpoint.size, oldRoot: known.rootHash, newRoot: checkpoint.rootHash,
                proof: request.consistencyProof, hasher: hasher)
        } catch {
            throw .unprocessable("consistency proof: \(error)")
        }
        return (checkpoint, request.note)
    }

    /// The 200 response body: the witness's cosignature line on the checkpoint.
    ///
    /// - Parameters:
    ///   - note: the accepted checkpoint note.
    ///   - name: the witness's key name.
    ///   - timestamp: now, POSIX seconds (never zero).
    ///   - signer: the witness key.
    ///   - hasher: SHA-256, for the key ID.
    /// - Throws: `NoteError` or the signer's error.
    public static func cosign(
        _ note: SignedNote, name: String, timestamp: UInt64, signer: some NoteSigner, hasher: any SHA256Hasher
    ) throws -> [UInt8] {
        guard timestamp > 0 else { throw NoteError.malformedNote("a cosignature timestamp is never zero") }
        let signature = try Cosignature.sign(
            text: note.text, keyName: name, timestamp: timestamp, signer: signer, hasher: hasher)
        return Array(signature.line.utf8)
    }
}
