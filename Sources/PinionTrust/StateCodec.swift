// The client state record (docs/DESIGN.md §6 step 6) as strict JSON ending in its SHA-256, so a torn,
// truncated or bit-flipped copy is refused as corrupt instead of being half-trusted.

import PinionCore
import PinionLog

/// Why a stored state was refused at start-up, or why a save failed.
///
/// At start-up a refused copy counts as lost and the other copy is used (docs/DESIGN.md §6); only
/// when every copy is lost is the state dropped. A save failure leaves the previous state in
/// place.
public enum StateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Reading or writing the storage failed (disk full, read-only, I/O error, symbolic link).
    case storage(StorageError)
    /// The file is not a well-formed file of its kind: over its size limit, truncated, not
    /// UTF-8 JSON, another document type, a missing or unknown member, or a value that breaks
    /// its rule. `FormatError.file` names the file and `path` the member.
    case corrupt(FormatError)
    /// The file was written by a newer format version than this build reads (an app
    /// downgrade); it counts as lost like a corrupt file.
    case unsupportedFormatVersion(file: String, found: Int64, supported: Int64)
    /// The content does not match its `contentSHA256` member, or (formatVersion 2 and later) the bytes
    /// are not exactly the canonical encoding of that content (bit rot, a torn sector, an edit).
    case checksumMismatch(file: String)
    /// The state belongs to another scope than the store's (a foreign store).
    case foreignScope(expected: String, found: String)
    /// formatVersion 1 only: `state.json` is missing although `enforced-domains.json` records
    /// that one was committed: the file was lost after a save completed.
    case stateFileMissing
    /// `save` refused the state because it breaks a rule of the state format (for example
    /// more than `StateCodec.maxAcceptedRoots` roots), so it could not be loaded back.
    /// Nothing was written.
    case invalidState(FormatError)

    /// What went wrong, naming the file and the rule.
    public var description: String {
        switch self {
        case .storage(let error): return error.description
        case .corrupt(let error): return "corrupt state: \(error.description)"
        case .unsupportedFormatVersion(let file, let found, let supported):
            return "\(file): formatVersion \(found) is not supported (this build reads \(supported))"
        case .checksumMismatch(let file): return "\(file): content does not match contentSHA256 (corrupt file)"
        case .foreignScope(let expected, let found):
            return "the stored state belongs to scope \(found), not \(expected)"
        case .stateFileMissing:
            return "\(StateStore.stateFileName) is missing although a committed state was recorded"
        case .invalidState(let error): return "the state cannot be stored: \(error.description)"
        }
    }
}

/// Encodes a `ClientState` as the bytes of one state copy (`state-a.json`, `state-b.json`) and
/// decodes them strictly; also decodes the formatVersion 1 files (`state.json`,
/// `enforced-domains.json`) so an older install migrates with its floor.
///
/// The file is JSON written by `JSONWriter` and read by `StrictJSONParser` (docs/DESIGN.md §5
/// strictness): every member is required (absent optionals are `null`), unknown members are
/// refused (including `x-` names: only this code writes the file), and envelopes are kept as
/// canonical padded base64 of their exact bytes:
///
///     {
///       "type": "pinion.client-state", "formatVersion": 3, "scope": "com.example.app",
///       "acceptedRoots": ["<base64 envelope>", ...], "manifest": "<base64 envelope>" | null,
///       "floor": {"rootVersion": 3, "version": 7, "payloadSHA256": "<hex>" | null} | null,
///       "lastKnownTime": "2026-11-30T09:00:00Z" | null,
///       "revokedPins": ["sha256/<base64>", ...], "revokedSetPinsRole": ["<key id>", ...],
///       "manifestDomainNames": ["api.example.com", ...], "manifestETag": "\"...\"" | null,
///       "logCheckpoint": {"note": "<base64 cosigned note>", "quorumTime": 1800000000} | null,
///       "contentSHA256": "<hex>"
///     }
///
/// `contentSHA256` is the SHA-256 (FIPS 180-4) of the document without that member as
/// `JSONWriter` writes it, and from formatVersion 2 on the bytes must be exactly
/// `JSONWriter`'s encoding of the whole document, so the checksum covers every byte of the
/// copy. It is not a security measure (anyone who can write the file can
/// recompute it, and every envelope is re-verified from its signatures at start-up); it
/// makes bit flips in the unsigned fields (floor, lastKnownTime, domain names, ETag) and in
/// base64 text detectable, which the JSON grammar alone would not.
///
/// formatVersion 1 is the same document without `payloadSHA256` in `floor` (and kept as two
/// files, not two copies), and formatVersion 2 the document without `logCheckpoint`; both are
/// read, never written. The notes are C2SP signed notes, parsed
/// strictly on reading (`TlogProofLimits.standard.note`), their checkpoints too; their
/// signatures are verified at start-up by `TrustCore.restore`, not here.
public enum StateCodec {
    /// The `type` member of a state file.
    public static let documentType = "pinion.client-state"
    /// The `formatVersion` this build writes.
    public static let formatVersion: Int64 = 3
    /// Every `formatVersion` this build reads: 1 (the single `state.json`), 2 and 3.
    public static let readableFormatVersions: ClosedRange<Int64> = 1...3
    /// Largest state file read or written, in bytes (64 MiB), checked before parsing. Real
    /// states are a few KiB to a few MiB (roots are small; one manifest is at most
    /// `Limits.maxEnvelopeBytes`); a state that would encode larger is refused by `save`.
    public static let maxStateBytes = 64 * 1024 * 1024
    /// Most accepted roots (envelopes after the embedded one) a state holds.
    /// Roots accepted since the embedded one. Far above the 256 rotations one refresh may
    /// follow (docs/DESIGN.md §4): rotations accumulate over the life of an install.
    public static let maxAcceptedRoots = 65_536
    /// Most pins in the revoked set R.
    public static let maxRevokedPins = 1 << 20
    /// Longest `manifestETag`, in UTF-8 bytes.
    public static let maxETagBytes = 4096

    static let checksumMember = "contentSHA256"
    static let domainsDocumentType = "pinion.enforced-domains"

    /// Encodes `state` (formatVersion 2) with its checksum. Deterministic: the same state
    /// gives the same bytes.
    ///
    /// The state is not validated here; `StateStore.save` refuses a state that `decode` would
    /// refuse.
    ///
    /// - Parameters:
    ///   - state: the state to encode.
    ///   - hasher: SHA-256 for the `contentSHA256` member.
    /// - Returns: UTF-8 JSON bytes ending with a newline.
    public static func encode(_ state: ClientState, hasher: any SHA256Hasher) -> [UInt8] {
        var content: [JSONObject.Member] = [
            .init("type", .string(documentType)),
            .init("formatVersion", .number(String(formatVersion))),
            .init("scope", .string(state.scope)),
            .init("acceptedRoots", .array(state.acceptedRoots.map { .string(Base64.encode($0)) })),
            .init("manifest", state.manifest.map { .string(Base64.encode($0)) } ?? .null),
        ]
        if let floor = state.floor {
            let order = JSONObject([
                .init("rootVersion", .number(String(floor.rootVersion))),
                .init("version", .number(String(floor.version))),
                .init("payloadSHA256", state.floorPayloadSHA256.map { .string(Hex.encode($0)) } ?? .null),
            ])
            content.append(.init("floor", .object(order)))
        } else {
            content.append(.init("floor", .null))
        }
        content += [
            .init("lastKnownTime", state.lastKnownTime.map { .string($0.description) } ?? .null),
            .init("revokedPins", .array(state.revokedPins.map { .string($0.description) })),
            .init("revokedSetPinsRole", .array(state.revokedSetPinsRole.map { .string($0) })),
            .init("manifestDomainNames", .array(state.manifestDomainNames.map { .string($0) })),
            .init("manifestETag", state.manifestETag.map { .string($0) } ?? .null),
        ]
        if let stored = state.logCheckpoint {
            content.append(
                .init(
                    "logCheckpoint",
                    .object(
                        JSONObject([
                            .init("note", .string(Base64.encode(stored.note))),
                            .init("quorumTime", .number(String(stored.quorumTime))),
                        ]))))
        } else {
            content.append(.init("logCheckpoint", .null))
        }
        return seal(JSONObject(content), hasher: hasher)
    }

    /// Decodes a state file strictly.
    ///
    /// Checks, in order: size (before parsing), JSON strictness and limits, `type`,
    /// `formatVersion` (1 or 2), `contentSHA256` (and for 2 the canonical bytes), then every
    /// member: the floor's payload hash (formatVersion 2: a required member, 32 bytes as
    /// lowercase hex or null when not recorded; formatVersion 1: absent), scope (docs/DESIGN.md §5), at most
    /// `maxAcceptedRoots` roots, envelopes as canonical base64 of 1 ... `maxEnvelopeBytes`
    /// bytes, floor integers 1 ... 2^53-1, an RFC 3339 time, unique canonical pins, unique key
    /// ids, unique host names (`HostName.validate`, at most `maxDomains`), an ETag without
    /// control characters. The scope is not compared with anything here (`StateStore` does).
    ///
    /// - Parameters:
    ///   - bytes: the content of one copy (or of a formatVersion 1 `state.json`).
    ///   - limits: `maxEnvelopeBytes` bounds each envelope and `maxDomains` the domain names.
    ///   - hasher: SHA-256 to check the `contentSHA256` member.
    ///   - file: the file name given in errors.
    /// - Returns: the state.
    /// - Throws: `StateError.corrupt` (with the file, member path and rule),
    ///   `.unsupportedFormatVersion` or `.checksumMismatch`.
    public static func decode(
        _ bytes: [UInt8], limits: Limits = .standard, hasher: any SHA256Hasher,
        file: String = StateStore.copyFileNames[0]
    ) throws(StateError) -> ClientState {
        let json = JSONLimits(
            maxBytes: maxStateBytes, maxDepth: 4, maxElements: max(maxRevokedPins, limits.maxDomains),
            maxElementsByMember: [
                "acceptedRoots": maxAcceptedRoots, "revokedPins": maxRevokedPins,
                "revokedSetPinsRole": limits.json.maxElements, "manifestDomainNames": limits.maxDomains,
            ])
        var reader = try open(
            bytes, type: documentType, maxBytes: maxStateBytes, json: json, file: file, hasher: hasher,
            versions: readableFormatVersions)

        let scope = try reader.scope("scope")
        var acceptedRoots: [[UInt8]] = []
        for (index, text) in try reader.strings("acceptedRoots", max: maxAcceptedRoots).enumerated() {
            acceptedRoots.append(try reader.envelope(text, path: "acceptedRoots[\(index)]", limits: limits))
        }
        var manifest: [UInt8]?
        if let text = try reader.optionalString("manifest") {
            manifest = try reader.envelope(text, path: "manifest", limits: limits)
        }
        let (floor, floorHash) = try reader.floor("floor", withHash: reader.version >= 2)
        var lastKnownTime: Timestamp?
        if let text = try reader.optionalString("lastKnownTime") {
            do { lastKnownTime = try Timestamp(rfc3339: text) } catch { throw reader.fail("lastKnownTime", error) }
        }
        var revokedPins: [Pin] = []
        var seenPins = Set<Pin>()
        for (index, text) in try reader.strings("revokedPins", max: maxRevokedPins).enumerated() {
            let path = "revokedPins[\(index)]"
            let pin: Pin
            do { pin = try Pin(text) } catch { throw reader.fail(path, error) }
            guard seenPins.insert(pin).inserted else { throw reader.fail(path, .duplicatePin(text)) }
            revokedPins.append(pin)
        }
        var role: [String] = []
        for (index, keyID) in try reader.strings("revokedSetPinsRole", max: limits.json.maxElements).enumerated() {
            let path = "revokedSetPinsRole[\(index)]"
            do { try KeyID.validate(keyID) } catch { throw reader.fail(path, error) }
            guard !role.contains(keyID) else {
                throw reader.fail(path, .invalidRoleKey("key id \(keyID) listed twice"))
            }
            role.append(keyID)
        }
        let names = try reader.hostNames("manifestDomainNames", max: limits.maxDomains)
        let etag = try reader.optionalString("manifestETag")
        if let etag {
            guard etag.utf8.count <= maxETagBytes else {
                throw reader.fail("manifestETag", .tooLarge(bytes: etag.utf8.count, limit: maxETagBytes))
            }
            // The ETag goes back out in an If-None-Match header: no CR, LF or other controls.
            guard !etag.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw reader.fail("manifestETag", .wrongType(expected: "an entity tag without control characters"))
            }
        }
        var logCheckpoint: StoredCheckpoint?
        if reader.version >= 3 { logCheckpoint = try reader.logCheckpoint("logCheckpoint", hasher: hasher) }
        try reader.finish()
        return ClientState(
            scope: scope, acceptedRoots: acceptedRoots, manifest: manifest, floor: floor,
            lastKnownTime: lastKnownTime, revokedPins: revokedPins, revokedSetPinsRole: role,
            manifestDomainNames: names, manifestETag: etag, floorPayloadSHA256: floorHash,
            logCheckpoint: logCheckpoint)
    }

    /// The domain names a refused copy still names, best effort, for the domains to keep
    /// enforced when every copy is lost (docs/DESIGN.md §6): a strictly parsed JSON object of
    /// either state type (the checksum is not required: enforcing a name too many refuses
    /// connections, it never unpins one), its `manifestDomainNames` (or `names`) members that
    /// are valid host names, without duplicates, at most `limits.maxDomains`.
    ///
    /// - Parameters:
    ///   - bytes: the refused copy.
    ///   - limits: `maxDomains` and the JSON limits.
    /// - Returns: the names found; empty when nothing can be parsed.
    public static func salvageDomainNames(_ bytes: [UInt8], limits: Limits = .standard) -> [String] {
        guard bytes.count <= maxStateBytes else { return [] }
        let json = JSONLimits(
            maxBytes: maxStateBytes, maxDepth: 4, maxElements: max(maxRevokedPins, limits.maxDomains),
            maxElementsByMember: ["acceptedRoots": maxAcceptedRoots, "revokedPins": maxRevokedPins])
        guard case .object(let object)? = try? StrictJSONParser.parse(bytes, limits: json) else { return [] }
        let member: String
        switch object["type"] {
        case .string(documentType)?: member = "manifestDomainNames"
        case .string(domainsDocumentType)?: member = "names"
        default: return []
        }
        guard case .array(let elements)? = object[member] else { return [] }
        var names: [String] = []
        var seen = Set<String>()
        for case .string(let name) in elements where names.count < limits.maxDomains {
            guard (try? HostName.validate(name)) != nil, seen.insert(name).inserted else { continue }
            names.append(name)
        }
        return names
    }

    // MARK: - The formatVersion 1 enforced-domains file

    /// The small second file of formatVersion 1 that kept the domain names enforced when
    /// `state.json` was lost or refused. Read only, to migrate an older install.
    struct EnforcedDomains: Sendable, Equatable {
        /// The scope of the store that wrote it.
        var scope: String
        /// Domain names of the manifest of the state being (or last) saved.
        var names: [String]
        /// A state file was known to exist when this was written; a missing state file is
        /// then a loss, not the crash window of the very first save.
        var stateCommitted: Bool
    }

    /// Largest enforced-domains file: every name at its longest plus JSON framing.
    static func maxDomainsFileBytes(_ limits: Limits) -> Int {
        limits.maxDomains * (HostName.maxLength + 16) + 4096
    }

    static func decodeEnforcedDomains(_ bytes: [UInt8], limits: Limits, hasher: any SHA256Hasher) throws(StateError)
        -> EnforcedDomains
    {
        let maxBytes = maxDomainsFileBytes(limits)
        let json = JSONLimits(
            maxBytes: maxBytes, maxDepth: 3, maxElements: limits.maxDomains,
            maxElementsByMember: ["names": limits.maxDomains])
        var reader = try open(
            bytes, type: domainsDocumentType, maxBytes: maxBytes, json: json, file: StateStore.enforcedDomainsFileName,
            hasher: hasher, versions: 1...1)
        let scope = try reader.scope("scope")
        let committed = try reader.bool("stateCommitted")
        let names = try reader.hostNames("names", max: limits.maxDomains)
        try reader.finish()
        return EnforcedDomains(scope: scope, names: names, stateCommitted: committed)
    }

    // MARK: - Sealing and opening

    private static func checksum(of content: JSONObject, hasher: any SHA256Hasher) -> String {
        Hex.encode(hasher.sha256(JSONWriter.write(.object(content))))
    }

    /// `content` plus its `contentSHA256` as the last member.
    private static func seal(_ content: JSONObject, hasher: any SHA256Hasher) -> [UInt8] {
        var sealed = content
        sealed.set(checksumMember, .string(checksum(of: content, hasher: hasher)))
        return JSONWriter.write(.object(sealed))
    }

    /// Size, strict parse, `type`, `formatVersion` and checksum (from formatVersion 2 also the
    /// exact canonical bytes); returns a reader for the rest.
    private static func open(
        _ bytes: [UInt8], type expected: String, maxBytes: Int, json: JSONLimits, file: String,
        hasher: any SHA256Hasher, versions: ClosedRange<Int64>
    ) throws(StateError) -> Reader {
        guard bytes.count <= maxBytes else {
            throw .corrupt(FormatError(file: file, path: "", rule: .tooLarge(bytes: bytes.count, limit: maxBytes)))
        }
        let value: JSONValue
        do { value = try StrictJSONParser.parse(bytes, limits: json) } catch { throw .corrupt(error.inFile(file)) }
        guard case .object(let object) = value else {
            throw .corrupt(FormatError(file: file, path: "", rule: .wrongType(expected: "an object")))
        }
        var reader = Reader(object: object, file: file)
        let type = try reader.string("type")
        guard type == expected else { throw reader.fail("type", .wrongDocumentType(expected: expected, found: type)) }
        let version = try reader.integer("formatVersion")
        guard versions.contains(version) else {
            throw .unsupportedFormatVersion(file: file, found: version, supported: versions.upperBound)
        }
        reader.version = version
        let recorded = try reader.string(checksumMember)
        let content = JSONObject(object.members.filter { $0.name != checksumMember })
        guard recorded == checksum(of: content, hasher: hasher) else { throw .checksumMismatch(file: file) }
        // From formatVersion 2 every byte counts: white space or escapes changed outside the
        // members' values would otherwise pass the checksum.
        if version >= 2, JSONWriter.write(.object(object)) != bytes { throw .checksumMismatch(file: file) }
        return reader
    }

    /// Typed reads of one object's members; `finish()` refuses any member not read.
    private struct Reader {
        let object: JSONObject
        let file: String
        /// The document's `formatVersion`, once read.
        var version: Int64 = 0
        private var read = Set<String>()

        init(object: JSONObject, file: String) {
            self.object = object
            self.file = file
        }

        func fail(_ path: String, _ rule: FormatRule) -> StateError {
            .corrupt(FormatError(file: file, path: path, rule: rule))
        }

        /// A required member; `null` is a value here (absent optionals are written as null).
        mutating func value(_ name: String) throws(StateError) -> JSONValue {
            read.insert(name)
            guard let value = object[name] else { throw fail("", .missingMember(name)) }
            return value
        }

        mutating func string(_ name: String) throws(StateError) -> String {
            guard case .string(let text) = try value(name) else { throw fail(name, .wrongType(expected: "a string")) }
            return text
        }

        mutating func optionalString(_ name: String) throws(StateError) -> String? {
            switch try value(name) {
            case .null: return nil
            case .string(let text): return text
            default: throw fail(name, .wrongType(expected: "a string or null"))
            }
        }

        mutating func bool(_ name: String) throws(StateError) -> Bool {
            guard case .bool(let flag) = try value(name) else {
                throw fail(name, .wrongType(expected: "true or false"))
            }
            return flag
        }

        mutating func integer(_ name: String) throws(StateError) -> Int64 {
            try Reader.integer(try value(name), path: name, file: file)
        }

        static func integer(_ value: JSONValue, path: String, file: String) throws(StateError) -> Int64 {
            func fail(_ rule: FormatRule) -> StateError { .corrupt(FormatError(file: file, path: path, rule: rule)) }
            guard case .number(let text) = value else { throw fail(.wrongType(expected: "an integer")) }
            if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { throw fail(.notAnInteger) }
            guard let number = Int64(text), (1...Limits.maxInteger).contains(number) else {
                throw fail(.integerOutOfRange(min: 1, max: Limits.maxInteger))
            }
            return number
        }

        mutating func strings(_ name: String, max: Int) throws(StateError) -> [String] {
            guard case .array(let elements) = try value(name) else {
                throw fail(name, .wrongType(expected: "an array"))
            }
            guard elements.count <= max else { throw fail(name, .tooManyElements(limit: max)) }
            var texts: [String] = []
            texts.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                guard case .string(let text) = element else {
                    throw fail("\(name)[\(index)]", .wrongType(expected: "a string"))
                }
                texts.append(text)
            }
            return texts
        }

        mutating func scope(_ name: String) throws(StateError) -> String {
            let scope = try string(name)
            do { try Scope.validate(scope) } catch { throw fail(name, error) }
            return scope
        }

        mutating func hostNames(_ name: String, max: Int) throws(StateError) -> [String] {
            var names: [String] = []
            var seen = Set<String>()
            for (index, host) in try strings(name, max: max).enumerated() {
                let path = "\(name)[\(index)]"
                do { try HostName.validate(host) } catch { throw fail(path, error) }
                guard seen.insert(host).inserted else { throw fail(path, .duplicateDomain(host)) }
                names.append(host)
            }
            return names
        }

        /// The floor and, when `withHash`, its `payloadSHA256` (64 lowercase hex or null).
        mutating func floor(_ name: String, withHash: Bool) throws(StateError) -> (ManifestOrder?, [UInt8]?) {
            switch try value(name) {
            case .null: return (nil, nil)
            case .object(let order):
                var inner = Reader(object: order, file: file)
                let rootVersion = try Reader.integer(
                    try inner.value("rootVersion"), path: "\(name).rootVersion", file: file)
                let version = try Reader.integer(try inner.value("version"), path: "\(name).version", file: file)
                var hash: [UInt8]?
                if withHash, let text = try inner.optionalString("payloadSHA256") {
                    let path = "\(name).payloadSHA256"
                    guard text.utf8.count == 64, let bytes = Hex.decodeLowercase(text) else {
                        throw fail(path, .wrongType(expected: "64 lowercase hex characters"))
                    }
                    hash = bytes
                }
                try inner.finish(path: name)
                return (ManifestOrder(rootVersion: rootVersion, version: version), hash)
            default: throw fail(name, .wrongType(expected: "an object or null"))
            }
        }

        /// Exact envelope bytes from canonical base64, 1 ... `maxEnvelopeBytes` bytes; the
        /// length is checked on the text before decoding.
        func envelope(_ text: String, path: String, limits: Limits) throws(StateError) -> [UInt8] {
            let maxText = (limits.maxEnvelopeBytes / 3 + 1) * 4
            guard text.utf8.count <= maxText else {
                throw fail(path, .tooLarge(bytes: text.utf8.count / 4 * 3, limit: limits.maxEnvelopeBytes))
            }
            guard let bytes = Base64.decodeCanonical(text) else { throw fail(path, .invalidBase64) }
            guard !bytes.isEmpty else { throw fail(path, .empty) }
            guard bytes.count <= limits.maxEnvelopeBytes else {
                throw fail(path, .tooLarge(bytes: bytes.count, limit: limits.maxEnvelopeBytes))
            }
            return bytes
        }

        /// A cosigned checkpoint note from canonical base64: a strict C2SP signed note of at
        /// most `TlogProofLimits.standard.note` whose text is a checkpoint.
        func note(_ text: String, path: String, hasher: any SHA256Hasher) throws(StateError) -> (
            [UInt8], Checkpoint
        ) {
            let limits = TlogProofLimits.standard.note
            guard text.utf8.count <= (limits.maxBytes / 3 + 1) * 4 else {
                throw fail(path, .tooLarge(bytes: text.utf8.count / 4 * 3, limit: limits.maxBytes))
            }
            guard let bytes = Base64.decodeCanonical(text) else { throw fail(path, .invalidBase64) }
            guard let note = try? SignedNote.parse(bytes, limits: limits),
                let checkpoint = try? Checkpoint.parse(note.text, hasher: MerkleHasher(hasher))
            else { throw fail(path, .wrongType(expected: "a C2SP signed checkpoint note")) }
            return (bytes, checkpoint)
        }

        /// `{"note": "<base64>", "quorumTime": <0 ... 2^53-1>}` or null.
        mutating func logCheckpoint(_ name: String, hasher: any SHA256Hasher) throws(StateError)
            -> StoredCheckpoint?
        {
            switch try value(name) {
            case .null: return nil
            case .object(let members):
                var inner = Reader(object: members, file: file)
                let (bytes, checkpoint) = try note(try inner.string("note"), path: "\(name).note", hasher: hasher)
                let path = "\(name).quorumTime"
                guard case .number(let digits) = try inner.value("quorumTime") else {
                    throw fail(path, .wrongType(expected: "an integer"))
                }
                guard digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let time = Int64(digits),
                    time <= Limits.maxInteger
                else { throw fail(path, .integerOutOfRange(min: 0, max: Limits.maxInteger)) }
                try inner.finish(path: name)
                return StoredCheckpoint(checkpoint: checkpoint, note: bytes, quorumTime: time)
            default: throw fail(name, .wrongType(expected: "an object or null"))
            }
        }

        /// Refuses the first member that was not read (no `x-` exception: only Pinion writes it).
        func finish(path: String = "") throws(StateError) {
            for member in object.members where !read.contains(member.name) {
                throw fail(path, .unknownMember(member.name))
            }
        }
    }
}
