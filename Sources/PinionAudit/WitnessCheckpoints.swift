// Fetching a witness's latest cosigned checkpoint for the auditor (C2SP tlog-witness `GET {url}/{origin hash}/checkpoint`).

import Foundation
import PinionCore
import PinionLog
import PinionTrust

#if canImport(PinionSystem)
    import PinionSystem
#endif

/// Why a witness's latest checkpoint could not be fetched. Each is an audit warning
/// (`log-witness-unavailable`), never a violation: a witness being down says nothing about
/// the publisher.
public enum WitnessFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection, TLS handshake or transfer failed or timed out; carries the reason.
    case unreachable(String)
    /// The witness answered 404: it does not witness this origin or cosigned nothing yet.
    case notFound
    /// Another HTTP status than 200 or 404.
    case status(Int)
    /// The body is larger than the limit, in bytes.
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .unreachable(let reason): return "unreachable: \(reason)"
        case .notFound: return "HTTP 404: the witness has no checkpoint of this origin"
        case .status(let status): return "HTTP status \(status)"
        case .tooLarge(let limit): return "answer larger than \(limit) bytes"
        }
    }
}

/// Where the auditor gets each witness's latest checkpoint: HTTPS in `pinion audit`
/// (`HTTPSWitnessCheckpoints`), a fake in tests.
public protocol WitnessCheckpointSource: Sendable {
    /// The latest checkpoint note the witness cosigned for `origin` (the checkpoint text, a
    /// blank line, the log's signature lines and the witness's cosignature), unverified.
    ///
    /// - Parameters:
    ///   - witness: the witness, as the root's `log` member lists it.
    ///   - origin: the log's origin.
    ///   - limit: the largest answer accepted, in bytes.
    /// - Throws: `WitnessFetchError`.
    func latestCheckpoint(of witness: LogPolicy.Witness, origin: String, limit: Int) throws(WitnessFetchError)
        -> [UInt8]
}

#if canImport(PinionSystem)
    /// Witness checkpoints over HTTPS with X.509 validation against the system store or a
    /// CA bundle (`--witness-ca`), no redirects, bounded timeouts and size.
    public struct HTTPSWitnessCheckpoints: WitnessCheckpointSource {
        /// Trust store and timeouts; `maxResponseBytes` is set per call from the limit.
        public let configuration: PinnedHTTPSClient.Configuration
        /// SHA-256, for the origin hash of the path.
        public let hasher: any SHA256Hasher

        /// - Parameter caFile: PEM trust anchors for the witnesses' TLS certificates; nil
        ///   for the system store. The cosignatures, not TLS, authenticate a witness.
        /// - Parameter hasher: SHA-256, for the origin hash of the path.
        /// - Parameter timeout: seconds for connecting, for each I/O wait and for the whole
        ///   call (default 10).
        public init(caFile: String?, hasher: any SHA256Hasher, timeout: Double = 10) {
            self.hasher = hasher
            configuration = PinnedHTTPSClient.Configuration(
                caFile: caFile, connectTimeout: timeout, ioTimeout: timeout, totalDeadline: timeout * 2,
                maxRedirects: 0)
        }

        public func latestCheckpoint(of witness: LogPolicy.Witness, origin: String, limit: Int)
            throws(WitnessFetchError) -> [UInt8]
        {
            let text = WitnessCheckpointPath.url(base: witness.url, origin: origin, hasher: hasher)
            guard let url = URL(string: text) else { throw .unreachable("invalid URL \(text)") }
            var configuration = configuration
            configuration.maxResponseBytes = limit
            let response: HTTPSResponse
            do {
                response = try PinnedHTTPSClient(configuration: configuration).get(
                    url, headers: [ResponseBody.acceptGzip]
                ) { _ in .proceed }
            } catch {
                if case .responseTooLarge = error.code { throw .tooLarge(limit: limit) }
                throw .unreachable(error.description)
            }
            switch response.status {
            case 200:
                do {
                    return try ResponseBody.decode(response, gzipAccepted: true, maxBytes: limit)
                } catch .gzip(.tooLarge) {
                    throw .tooLarge(limit: limit)
                } catch {
                    throw .unreachable("\(text): \(error)")
                }
            case 404: throw .notFound
            default: throw .status(response.status)
            }
        }
    }
#endif
