// One client wired from the injected seams (libsodium provider, fake transport, memory storage, test
// clock, recorder), built the way an app on any platform builds it.

import Foundation
import PinionCore
import PinionTrust
import PinionTrustTestSupport

/// A publisher, its fake TLS stack, the storage and clock of one app, and the clients built on them.
struct Harness {
    let publisher: Publisher
    let certificates: Certificates
    let transport: FakeTransport
    let storage = MemoryStorage()
    let clock = TestClock(t0)
    let recorder = Recorder()

    init() throws {
        publisher = try Publisher()
        certificates = try Certificates.load()
        // The publisher presents the leaf chain; the update channel never applies manifest pins.
        transport = FakeTransport(
            verifiedChain: certificates.chain(certificates.leaf), hasher: PortableCrypto.provider.hasher)
    }

    /// A client of the scope over the seams.
    ///
    /// - Parameters:
    ///   - baseline: the pins compiled into the app.
    ///   - publisherPins: the app's pins for the publisher host (the update channel).
    ///   - onEvent: called after the recorder saw each event.
    func client(
        baseline: Baseline = .empty, publisherPins: [Pin] = [],
        onEvent: @escaping @Sendable (ClientEvent) -> Void = { _ in }
    ) throws -> PinningClient {
        let configuration = ClientConfiguration(
            scope: scope, baseURL: URL(string: "https://publisher.example.test/"),
            embeddedRoot: try publisher.embeddedRoot(), baseline: baseline, stateDirectory: "",
            publisherPins: publisherPins, clock: clock.function)
        let recorder = self.recorder
        return try PinningClient(
            configuration: configuration, crypto: PortableCrypto.provider, transport: transport, storage: storage,
            onEvent: { event in
                recorder.record(event)
                onEvent(event)
            },
            onPinFailure: { recorder.record($0) })
    }

    /// Serves manifest `version` pinning `api.example.test` to `pins`, with its ETag.
    func publishManifest(
        version: Int64, pins: [Pin], includeSubdomains: Bool = false, enforce: Bool = true,
        lifetime: Int64 = 30 * day, revokedPins: [Pin] = []
    ) throws {
        let domain = ManifestPayload.Domain(
            name: "api.example.test", includeSubdomains: includeSubdomains, enforce: enforce, pins: pins)
        let bytes = try publisher.manifest(
            version: version, lifetime: lifetime, domains: [domain], revokedPins: revokedPins)
        transport.serve("manifest.json", bytes, etag: Harness.etag(bytes))
    }

    /// A strong ETag of a document: the first 8 bytes of its SHA-256 in hex, quoted.
    static func etag(_ bytes: [UInt8]) -> String {
        let digest = PortableCrypto.provider.hasher.sha256(bytes).prefix(8)
        return "\"" + digest.map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The pins `api.example.test` has in `client`'s effective policy now.
    func pins(_ client: PinningClient, _ name: String = "api.example.test") -> [Pin]? {
        client.policyNow().entry(named: name)?.pins
    }
}
