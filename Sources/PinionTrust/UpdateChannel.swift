// The update-channel seam (docs/ARCHITECTURE.md, "The update-channel seam"): what the refresh
// asks a platform's fetcher for (a tree file), what the fetcher answers (the raw HTTP answer or
// a transport failure), and the one pure mapping of an answer to what the refresh acts on.

import PinionCore

/// One GET of the update channel: a file of the scope's published tree.
public struct UpdateRequest: Sendable, Equatable {
    /// The file wanted: `.root(n)`, `.manifest` or `.manifestProof` (relative to `v1/{scope}/`).
    public var file: TreeFile
    /// For `.manifest`: the ETag to send as `If-None-Match` (RFC 9110 §13.1.2), or nil to
    /// send none. Always nil for other files.
    public var ifNoneMatch: String?
    /// The largest body accepted, in bytes (the fetcher stops reading past it and answers
    /// `UpdateFetchError.tooLarge`), or nil for the transport's own limit.
    public var maxBytes: Int?
    /// For `.manifest`: what the client holds, sent as the request's query. Nil for other files.
    public var pollToken: PollToken?

    /// - Parameters:
    ///   - file: the tree file wanted.
    ///   - ifNoneMatch: the validator to send (manifest only).
    ///   - maxBytes: the body limit in bytes, or nil.
    ///   - pollToken: the poll token (manifest only).
    public init(file: TreeFile, ifNoneMatch: String? = nil, maxBytes: Int? = nil, pollToken: PollToken? = nil) {
        self.file = file
        self.ifNoneMatch = ifNoneMatch
        self.maxBytes = maxBytes
        self.pollToken = pollToken
    }

    /// The path and query below `v1/{scope}/`: the file's path, and for a manifest request
    /// with a poll token `?have=V&base=B`.
    public var pathAndQuery: String {
        pollToken.map { file.path + "?" + $0.query } ?? file.path
    }
}

/// The poll token of the manifest request, `manifest.json?have=V&base=B` (docs/DESIGN.md §6,
/// docs/ARCHITECTURE.md "The update-channel seam"; the JVM SDK renders the same bytes). It
/// tells the publisher's access logs which manifest version and which baseline a client
/// holds, so that `pinion serve`'s counters and log readers can measure adoption. It is
/// never read for trust, and publishers ignore it when serving.
public struct PollToken: Sendable, Equatable, CustomStringConvertible {
    /// `base` of a client without a baseline document: 16 zeros.
    public static let noBaseline = "0000000000000000"

    /// The held manifest version, 0 when the client holds none.
    public let have: UInt64
    /// The first 16 lowercase hex digits of the SHA-256 of the app's baseline document bytes,
    /// or `noBaseline`.
    public let base: String

    /// - Parameters:
    ///   - have: the held manifest version, 0 for none.
    ///   - baselineDocument: the baseline document's bytes exactly as shipped, or nil when
    ///     the app has none (a baseline built in code has no document and counts as none).
    ///   - hasher: SHA-256.
    public init(have: UInt64, baselineDocument: [UInt8]?, hasher: some SHA256Hasher) {
        self.have = have
        guard let baselineDocument else {
            base = Self.noBaseline
            return
        }
        base = String(Hex.encode(hasher.sha256(baselineDocument)).prefix(16))
    }

    /// `have=V&base=B`, exactly that order and nothing else.
    public var query: String { "have=\(have)&base=\(base)" }

    /// Reads a query that is exactly `have=V&base=B`: V a decimal without leading zeros that
    /// fits in 63 bits, B 16 lowercase hex digits. For publishers and log readers; clients
    /// only write tokens.
    ///
    /// - Parameter query: the request target's query, after `?`.
    /// - Returns: nil for anything else (another order, more parameters, percent-encoding,
    ///   uppercase hex).
    public init?(query: Substring) {
        // One pass over the UTF-8 bytes, without copying them: publishers read every poll on
        // their request path (`pinion serve`'s poll counter).
        guard let have = Self.parse(query.utf8) else { return nil }
        self.have = have
        base = String(decoding: query.utf8.suffix(16), as: UTF8.self)
    }

    /// The held version of a query that is exactly `have=V&base=B`, read as `init?(query:)`
    /// reads it but without making the `base` string: for counters on a publisher's request
    /// path.
    ///
    /// - Parameter query: the request target's query, after `?`.
    /// - Returns: V, or nil for anything `init?(query:)` refuses.
    package static func heldVersion(query: Substring) -> UInt64? { parse(query.utf8) }

    private enum ParsePhase { case haveKey, version, baseKey, base }

    private static let haveKey = Array("have=".utf8)
    private static let baseKey = Array("&base=".utf8)

    /// The held version of an exact `have=V&base=B` query, or nil for any other bytes.
    private static func parse(_ bytes: Substring.UTF8View) -> UInt64? {
        var phase = ParsePhase.haveKey
        var matched = 0
        var digits = 0
        var have: Int64 = 0
        var hexDigits = 0
        for byte in bytes {
            switch phase {
            case .haveKey:
                guard byte == haveKey[matched] else { return nil }
                matched += 1
                if matched == haveKey.count { phase = .version }
            case .version:
                if let digit = decimalDigit(byte) {
                    // A leading zero is only "0" itself; past Int64.max is refused.
                    if digits > 0, have == 0 { return nil }
                    let (times10, overflowA) = have.multipliedReportingOverflow(by: 10)
                    let (sum, overflowB) = times10.addingReportingOverflow(Int64(digit))
                    guard !overflowA, !overflowB else { return nil }
                    have = sum
                    digits += 1
                } else {
                    guard digits > 0, byte == baseKey[0] else { return nil }
                    matched = 1
                    phase = .baseKey
                }
            case .baseKey:
                guard byte == baseKey[matched] else { return nil }
                matched += 1
                if matched == baseKey.count { phase = .base }
            case .base:
                guard hexDigits < 16, decimalDigit(byte) != nil || (0x61...0x66).contains(byte) else { return nil }
                hexDigits += 1
            }
        }
        return phase == .base && hexDigits == 16 ? UInt64(have) : nil
    }

    private static func decimalDigit(_ byte: UInt8) -> UInt8? {
        (0x30...0x39).contains(byte) ? byte - 0x30 : nil
    }

    public var description: String { query }
}

/// The raw HTTP answer of one update-channel GET, after the transport's own checks (X.509,
/// publisher pins, redirects, content coding) passed.
public struct UpdateAnswer: Sendable, Equatable {
    /// The final status code (100-599; redirects the transport followed are not seen).
    public var status: Int
    /// The response's ETag field value, or nil.
    public var etag: String?
    /// The body (empty for 304 and most errors).
    public var body: [UInt8]

    /// - Parameters:
    ///   - status: the final status code.
    ///   - etag: the ETag value, if any.
    ///   - body: the body bytes.
    public init(status: Int, etag: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.etag = etag
        self.body = body
    }
}

/// Why an update-channel GET produced no answer.
public enum UpdateFetchError: Error, Sendable, Equatable {
    /// A network failure (resolution, connect, TLS handshake, X.509 validation, timeout,
    /// a malformed response, an unsupported content coding); the reason says which.
    case failed(String)
    /// The update channel refused what the server did: a redirect to http or off the
    /// publisher's host, publisher pins not met. A refusal, not a network failure.
    case refused(String)
    /// The body was longer than `UpdateRequest.maxBytes`, in bytes; reading stopped there.
    case tooLarge(limit: Int)
}

/// A platform's HTTPS client for the update channel (TUF's ngclient calls it a fetcher): it
/// performs the GET of one tree file under X.509 validation and the app's publisher pins only
/// (never manifest pins, docs/DESIGN.md §6), and returns what the server answered. It never
/// interprets a status: `UpdateStatus.classify` does, for every platform alike.
public protocol UpdateFetcher {
    /// GETs `request.file` of the scope's tree.
    ///
    /// - Parameter request: the file, validator and body limit.
    /// - Returns: the final answer (any status), or why there is none.
    func fetch(_ request: UpdateRequest) -> Result<UpdateAnswer, UpdateFetchError>
}

/// What the refresh acts on for one fetched tree file.
public enum UpdateFetchResult: Sendable, Equatable {
    /// 200: the document, with the ETag for a manifest.
    case document([UInt8], etag: String?)
    /// 304 to a manifest request that sent `If-None-Match`: nothing new.
    case notModified
    /// 404 or 410 on a root (the end of the root walk) or on manifest.proof (none served).
    case absent
    /// Any other status, or a network failure; the reason says which.
    case failed(String)
    /// The update channel refused what the server did.
    case refused(String)
    /// The body was longer than the limit, in bytes.
    case tooLarge(limit: Int)
}

/// The one mapping of an update-channel answer to what the refresh acts on
/// (docs/ARCHITECTURE.md, the status table): every transport's answers go through it, so no
/// platform decides by itself what a status means.
public enum UpdateStatus {
    /// Classifies the answer to `request`.
    ///
    /// | status | root/N.json | manifest.json | manifest.proof |
    /// |---|---|---|---|
    /// | 200 | document | document + ETag | document (refused past `maxBytes`) |
    /// | 304 | refused | not modified if `If-None-Match` was sent, else refused | refused |
    /// | 404, 410 | absent | failed | absent |
    /// | 3xx the transport did not follow | refused | refused | refused |
    /// | other | failed | failed | failed |
    ///
    /// - Parameters:
    ///   - request: the request that was sent.
    ///   - answer: the fetcher's answer or failure.
    /// - Returns: the result the refresh acts on.
    public static func classify(_ request: UpdateRequest, _ answer: Result<UpdateAnswer, UpdateFetchError>)
        -> UpdateFetchResult
    {
        let response: UpdateAnswer
        switch answer {
        case .failure(.failed(let reason)): return .failed(reason)
        case .failure(.refused(let reason)): return .refused(reason)
        case .failure(.tooLarge(let limit)): return .tooLarge(limit: limit)
        case .success(let answer): response = answer
        }
        switch response.status {
        case 200:
            if let limit = request.maxBytes, response.body.count > limit { return .tooLarge(limit: limit) }
            return .document(response.body, etag: request.file == .manifest ? response.etag : nil)
        case 304 where request.file == .manifest:
            // "Not modified" since what? Without a validator it could hide anything.
            guard request.ifNoneMatch != nil else {
                return .refused("refused a 304 Not Modified to a request that sent no If-None-Match")
            }
            return .notModified
        case 404 where request.file != .manifest, 410 where request.file != .manifest:
            return .absent
        case 300..<400:
            // The transport follows https redirects on the publisher's host; one it returns was
            // not followed (no Location, too many, another scheme): not a document.
            return .refused("refused HTTP \(response.status): a redirect the update channel did not follow")
        default:
            return .failed("HTTP \(response.status)")
        }
    }
}
