// The seams an app plugs into PinningClient, faked as a platform would fill them: an HTTPS transport
// serving routes with a verified chain, in-memory state storage, a settable clock, and a recorder.

import Foundation
import PinionCore
import PinionTrust
import PinionTrustTestSupport

/// A publisher behind a fake TLS stack: each path answers with a status, headers and bytes, a
/// conditional GET whose If-None-Match equals the route's ETag gets a 304, and every connection
/// presents `verifiedChain` (the chain the platform's X.509 validation would have verified) to
/// the client's pin check before anything is answered.
final class FakeTransport: HTTPSTransport {
    /// One path's answer.
    struct Route: Sendable {
        var status: Int
        var etag: String?
        var body: [UInt8]
        var headers: [(String, String)] = []
    }

    /// One request as the transport received it.
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [(String, String)]
    }

    private let state = Guarded<(routes: [String: Route], requests: [Request], statuses: [Int])>(([:], [], []))
    private let verifiedChain: [[UInt8]]
    private let hasher: any SHA256Hasher

    /// - Parameters:
    ///   - verifiedChain: DER certificates of the publisher's verified chain, leaf first.
    ///   - hasher: SHA-256 for the pins of that chain (the platform computes them itself).
    init(verifiedChain: [[UInt8]], hasher: any SHA256Hasher) {
        self.verifiedChain = verifiedChain
        self.hasher = hasher
    }

    /// Serves `body` with status 200 (and an ETag, and more header fields) at `resource` under
    /// the scope.
    func serve(_ resource: String, _ body: [UInt8], etag: String? = nil, headers: [(String, String)] = []) {
        state.withLock {
            $0.routes["/v1/\(scope)/\(resource)"] = Route(status: 200, etag: etag, body: body, headers: headers)
        }
    }

    /// Answers `status` with an empty body at `path` under the scope.
    func answer(_ resource: String, status: Int) {
        state.withLock { $0.routes["/v1/\(scope)/\(resource)"] = Route(status: status, etag: nil, body: []) }
    }

    private let hook = Guarded<(@Sendable () -> Void)?>(nil)

    /// Runs `body` on every request, on the requesting thread, before it is answered.
    func onRequest(_ body: @escaping @Sendable () -> Void) { hook.withLock { $0 = body } }

    /// Every request so far, in order.
    var requests: [Request] { state.withLock { $0.requests } }

    /// The status of every response so far, in order.
    var statuses: [Int] { state.withLock { $0.statuses } }

    /// Forgets the requests and statuses so far.
    func clearRequests() {
        state.withLock {
            $0.requests = []
            $0.statuses = []
        }
    }

    private func answer(_ url: URL, _ status: Int, _ headers: [(String, String)], _ body: [UInt8]) -> HTTPSResponse {
        state.withLock { $0.statuses.append(status) }
        return HTTPSResponse(url: url, status: status, headers: headers, body: body)
    }

    private func connect(_ url: URL, pinCheck: @Sendable (PeerChain) -> PinDecision) throws(HTTPSError) {
        let host = url.host ?? ""
        let port = UInt16(url.port ?? 443)
        let pins = verifiedChain.compactMap { try? CertificateSPKI.fromCertificateDER($0, hasher: hasher).sha256 }
        let chain = PeerChain(
            host: host, port: port, verifiedSPKISHA256: pins, verifiedChainDER: verifiedChain,
            servedChainDER: verifiedChain)
        if case .refuse(let reason) = pinCheck(chain) {
            throw .pinningRefused(host: host, port: port, reason: reason)
        }
    }

    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        let route = state.withLock { state -> Route? in
            state.requests.append(Request(method: "GET", path: url.path, headers: headers))
            return state.routes[url.path]
        }
        hook.withLock { $0 }?()
        try connect(url, pinCheck: pinCheck)
        guard let route else { return answer(url, 404, [], []) }
        let etagHeader = route.etag.map { [("etag", $0)] } ?? []
        if let etag = route.etag,
            headers.contains(where: { $0.0.lowercased() == "if-none-match" && $0.1 == etag })
        {
            return answer(url, 304, etagHeader, [])
        }
        return answer(url, route.status, etagHeader + route.headers, route.body)
    }

    func post(_ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision)
        throws(HTTPSError) -> HTTPSResponse
    {
        state.withLock { $0.requests.append(Request(method: "POST", path: url.path, headers: [])) }
        try connect(url, pinCheck: pinCheck)
        return answer(url, 204, [], [])
    }
}

/// What the client's callbacks delivered, in order.
final class Recorder: Sendable {
    private let state = Guarded<(events: [ClientEvent], reports: [PinFailureReport])>(([], []))

    var events: [ClientEvent] { state.withLock { $0.events } }
    var reports: [PinFailureReport] { state.withLock { $0.reports } }
    func record(_ event: ClientEvent) { state.withLock { $0.events.append(event) } }
    func record(_ report: PinFailureReport) { state.withLock { $0.reports.append(report) } }
}
