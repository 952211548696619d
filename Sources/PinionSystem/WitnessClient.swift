// The publisher's witness client: C2SP tlog-witness `POST {url}/add-checkpoint` over PinnedHTTPSClient's TLS set-up.

import Foundation
import PinionTrust

/// A witness's answer to one add-checkpoint request.
public struct WitnessAnswer: Sendable, Equatable {
    /// The HTTP status (200 cosigned, 409 conflict with the witness's size in the body,
    /// 403/404/422/400 refusals; C2SP tlog-witness).
    public let status: Int
    /// The response body (for 200, the cosignature line(s); for 409, the witness's size
    /// as a decimal line).
    public let body: [UInt8]

    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - body: the response body bytes.
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }

    /// For a 409: the witness's tree size from the body (`<decimal>\n`), or nil when the
    /// body is not exactly that.
    public var conflictSize: UInt64? {
        guard status == 409 else { return nil }
        var text = String(decoding: body, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text == "0" || !text.hasPrefix("0")
        else { return nil }
        return UInt64(text)
    }
}

/// Sends add-checkpoint requests to witnesses. Implementations: `HTTPSWitnessClient`, and
/// in-process fakes in tests.
public protocol WitnessClient: Sendable {
    /// POSTs `body` (a tlog-witness add-checkpoint body) to `{url}/add-checkpoint`.
    ///
    /// - Parameters:
    ///   - url: the witness's submission prefix from the root's `log` member (`https://...`).
    ///   - body: the request body.
    /// - Returns: the witness's status and body, whatever the status.
    /// - Throws: when the witness cannot be reached or its answer cannot be read (it then
    ///   counts as down).
    func addCheckpoint(url: String, body: [UInt8]) throws -> WitnessAnswer

    /// GETs a witness's latest checkpoint note of one log (C2SP tlog-witness
    /// `<prefix>/<origin hash>/checkpoint`, built by `WitnessCheckpointPath.url`).
    ///
    /// - Parameter url: the full checkpoint URL (`https://...`).
    /// - Returns: the witness's status and body (for 200, the cosigned note), whatever the status.
    /// - Throws: when the witness cannot be reached or its answer cannot be read.
    func fetchCheckpoint(url: String) throws -> WitnessAnswer
}

/// Why a witness could not be asked.
public enum WitnessClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not a usable https URL.
    case badURL(String)
    /// The TLS or HTTP exchange failed; carries the reason.
    case exchange(String)

    public var description: String {
        switch self {
        case .badURL(let url): return "\(url) is not a usable witness URL"
        case .exchange(let reason): return reason
        }
    }
}

/// The witness client over HTTPS: `PinnedHTTPSClient.post` (X.509 validation against
/// `caFile` or the system's roots and a host name check; no pin check, since the
/// cosignatures themselves authenticate a witness), `Content-Type: text/plain`, no
/// redirects, with timeouts and a response size limit.
public struct HTTPSWitnessClient: WitnessClient {
    /// Largest response body read, in bytes: cosignature lines are about 100 bytes each.
    public static let maxResponseBytes = 16 * 1024

    private let client: PinnedHTTPSClient

    /// - Parameters:
    ///   - caFile: PEM bundle of the CAs that issue the witnesses' TLS certificates
    ///     (`--witness-ca`); nil for the system's roots.
    ///   - connectTimeout: seconds per TCP connect attempt.
    ///   - ioTimeout: seconds for the handshake and for each read or write wait.
    ///   - totalDeadline: seconds for the whole request.
    public init(caFile: String?, connectTimeout: Double = 10, ioTimeout: Double = 20, totalDeadline: Double = 30) {
        client = PinnedHTTPSClient(
            configuration: .init(
                caFile: caFile, connectTimeout: connectTimeout, ioTimeout: ioTimeout, totalDeadline: totalDeadline,
                maxResponseBytes: HTTPSWitnessClient.maxResponseBytes, maxRedirects: 0))
    }

    public func addCheckpoint(url: String, body: [UInt8]) throws -> WitnessAnswer {
        let prefix = url.hasSuffix("/") ? String(url.dropLast()) : url
        guard let target = URL(string: prefix + "/add-checkpoint"), target.scheme == "https" else {
            throw WitnessClientError.badURL(url)
        }
        do {
            let response = try client.post(
                target, body: body, contentType: "text/plain", headers: [ResponseBody.acceptGzip], connectTo: nil,
                pinCheck: { _ in .proceed })
            return try Self.answer(response)
        } catch {
            throw WitnessClientError.exchange("\(prefix): \(error)")
        }
    }

    public func fetchCheckpoint(url: String) throws -> WitnessAnswer {
        guard let target = URL(string: url), target.scheme == "https" else { throw WitnessClientError.badURL(url) }
        do {
            let response = try client.get(target, headers: [ResponseBody.acceptGzip]) { _ in .proceed }
            return try Self.answer(response)
        } catch {
            throw WitnessClientError.exchange("\(url): \(error)")
        }
    }

    /// The answer with its body decoded (a witness may gzip it), within the same limit as
    /// the bytes on the wire.
    private static func answer(_ response: HTTPSResponse) throws -> WitnessAnswer {
        let body = try ResponseBody.decode(response, gzipAccepted: true, maxBytes: maxResponseBytes)
        return WitnessAnswer(status: response.status, body: body)
    }
}
