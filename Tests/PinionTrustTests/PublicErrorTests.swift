// The SDK's public error structs: every kind reads as its own message, and equality sees the
// payloads, so callers that compare with `==` or read `reasonCode` tell failures apart.

import PinionCore
import PinionTrust
import Testing

@Suite struct ClientErrorValueTests {
    /// One of each kind, in declaration order.
    static let samples: [ClientError] = [
        .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)),
        .rollback(offered: ManifestOrder(rootVersion: 1, version: 1), floor: ManifestOrder(rootVersion: 1, version: 2)),
        .equivocation(order: ManifestOrder(rootVersion: 1, version: 2)),
        .invalidEmbeddedRoot("scope mismatch"),
        .tooManyRotations(limit: 32),
        .fetchFailed(resource: "manifest.json", reason: "HTTP 503"),
        .fetchRefused(resource: "manifest.json", reason: "refused redirect to http"),
        .stateUnreadable(StorageError(.read, "state.json", code: 13)),
        .log(.proofMissing("HTTP 404")),
    ]

    @Test func everyKindHasItsOwnNonEmptyDescriptionAndReasonCode() {
        let descriptions = Self.samples.map(\.description)
        #expect(descriptions.allSatisfy { !$0.isEmpty })
        #expect(Set(descriptions).count == Self.samples.count, "\(descriptions)")
        let codes = Self.samples.map(\.reasonCode)
        #expect(
            codes == [
                "threshold-not-met", "rollback", "equivocation", "invalid-embedded-root", "too-many-rotations",
                "network", "fetch-refused", "storage", "log-proof-missing",
            ])
        for (index, error) in Self.samples.enumerated() {
            #expect(Self.samples.filter { $0 == error }.count == 1, "sample \(index) equals another")
        }
    }

    @Test func equalityComparesPayloads() {
        let a = ManifestOrder(rootVersion: 1, version: 1)
        #expect(
            ClientError.rollback(offered: a, floor: ManifestOrder(rootVersion: 1, version: 2))
                == .rollback(offered: a, floor: ManifestOrder(rootVersion: 1, version: 2)))
        #expect(
            ClientError.rollback(offered: a, floor: ManifestOrder(rootVersion: 1, version: 2))
                != .rollback(offered: a, floor: ManifestOrder(rootVersion: 1, version: 3)))
        #expect(ClientError.fetchFailed(resource: "a", reason: "x") != .fetchRefused(resource: "a", reason: "x"))
        #expect(ClientError.fetchFailed(resource: "a", reason: "x") != .fetchFailed(resource: "b", reason: "x"))
        #expect(ClientError.tooManyRotations(limit: 1) != .tooManyRotations(limit: 2))
    }

    @Test func accessorsReadTheirOwnKindOnly() {
        let refused = ClientError.fetchRefused(resource: "root/2.json", reason: "no publisher pin")
        #expect(refused.resource == "root/2.json")
        #expect(refused.reason == "no publisher pin")
        #expect(refused.trustError == nil && refused.logRefusal == nil && refused.storageError == nil)
        let trust = TrustError.scopeMismatch(expected: "a", found: "b")
        #expect(ClientError.trust(trust).trustError == trust)
        #expect(ClientError.trust(trust).resource == nil)
        #expect(ClientError.log(.proofTooLarge(limit: 10)).logRefusal == .proofTooLarge(limit: 10))
        let storage = StorageError(.open, "state", code: 2)
        #expect(ClientError.stateUnreadable(storage).storageError == storage)
        #expect(ClientError.invalidEmbeddedRoot("bad").reason == "bad")
    }
}

@Suite struct HTTPSErrorValueTests {
    /// One of each kind, in declaration order.
    static let samples: [HTTPSError] = [
        .invalidURL(url: "https://", reason: "no host"),
        .unsupportedScheme("http"),
        .invalidHeader(name: "Host", reason: "set by the client"),
        .invalidConfiguration(reason: "ioTimeout must be positive"),
        .caFileUnreadable(path: "/ca.pem", detail: "no certificate"),
        .tlsSetupFailed(detail: "out of memory"),
        .resolutionFailed(host: "x.test", detail: "unknown name"),
        .connectionRefused(host: "192.0.2.1", port: 443),
        .connectionFailed(host: "192.0.2.1", port: 443, errno: 101, detail: "network unreachable"),
        .timedOut(host: "x.test", port: 443, phase: .handshake),
        .handshakeFailed(host: "x.test", port: 443, detail: "no shared cipher"),
        .certificateVerificationFailed(host: "x.test", port: 443, reason: "hostname mismatch"),
        .emptyVerifiedChain(host: "x.test", port: 443),
        .pinningRefused(host: "x.test", port: 443, reason: "no pin matched"),
        .connectionLost(host: "x.test", port: 443, detail: "reset"),
        .malformedResponse(host: "x.test", port: 443, detail: "bad status line"),
        .responseTooLarge(host: "x.test", port: 443, limit: 1024),
        .tooManyRedirects(limit: 5),
        .redirectToNonHTTPS(location: "http://x.test/"),
    ]

    @Test func everyKindHasItsOwnNonEmptyDescriptionAndReasonCode() {
        let descriptions = Self.samples.map(\.description)
        #expect(descriptions.allSatisfy { !$0.isEmpty })
        #expect(Set(descriptions).count == Self.samples.count, "\(descriptions)")
        #expect(
            Self.samples.map(\.reasonCode) == [
                "invalid-url", "unsupported-scheme", "invalid-header", "invalid-configuration", "ca-file-unreadable",
                "tls-setup-failed", "resolution-failed", "connection-refused", "connection-failed", "timed-out",
                "handshake-failed", "certificate-verification-failed", "empty-verified-chain", "pinning-refused",
                "connection-lost", "malformed-response", "response-too-large", "too-many-redirects",
                "redirect-to-non-https",
            ])
        #expect(Set(Self.samples).count == Self.samples.count)
    }

    @Test func equalityComparesPayloads() {
        #expect(HTTPSError.tooManyRedirects(limit: 3) == .tooManyRedirects(limit: 3))
        #expect(HTTPSError.tooManyRedirects(limit: 3) != .tooManyRedirects(limit: 4))
        #expect(
            HTTPSError.timedOut(host: "x.test", port: 443, phase: .connect)
                != .timedOut(host: "x.test", port: 443, phase: .deadline))
        #expect(
            HTTPSError.pinningRefused(host: "x.test", port: 443, reason: "a")
                != .pinningRefused(host: "x.test", port: 8443, reason: "a"))
        #expect(
            HTTPSError.connectionLost(host: "x", port: 1, detail: "d")
                != .malformedResponse(host: "x", port: 1, detail: "d"))
    }

    @Test func accessorsReadThePayloads() {
        let refused = HTTPSError.pinningRefused(host: "x.test", port: 8443, reason: "no pin matched")
        #expect(refused.host == "x.test" && refused.port == 8443 && refused.detail == "no pin matched")
        #expect(refused.path == nil && refused.phase == nil && refused.limit == nil)
        #expect(HTTPSError.caFileUnreadable(path: "/ca.pem", detail: "empty").path == "/ca.pem")
        #expect(HTTPSError.timedOut(host: "x", port: 1, phase: .response).phase == .response)
        #expect(HTTPSError.responseTooLarge(host: "x", port: 1, limit: 9).limit == 9)
        #expect(HTTPSError.tooManyRedirects(limit: 5).limit == 5)
        #expect(HTTPSError.tooManyRedirects(limit: 5).host == nil)
        #expect(HTTPSError.redirectToNonHTTPS(location: "http://x/").detail == "http://x/")
    }
}
