// The SDK on Linux: `PinningClient` with libsodium crypto, the OpenSSL transport and the
// state in a private directory.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
@_exported import PinionTrust

extension PinningClient {
    /// Builds a client on Linux: libsodium (`CryptoProvider.sodium`), `PinnedHTTPSClient`
    /// with the configuration's CA file and timeouts (responses limited to the envelope
    /// limit), and `DirectoryStorage` in `configuration.stateDirectory` unless `storage` is
    /// given.
    ///
    /// - Parameters:
    ///   - configuration: the app's settings.
    ///   - storage: where the trusted state is kept; nil (the default) for files in
    ///     `configuration.stateDirectory`. Apps may pass their own (for example an encrypted
    ///     container); tests inject failing storage through it.
    ///   - onEvent: every refresh and start-up event.
    ///   - onPinFailure: RFC 7469 §3 reports of pin failures.
    /// - Throws: `ClientSetupError` for an invalid embedded root, an unusable state directory, or a CA
    ///   file that cannot be read or holds no certificate (`.configuration`).
    public convenience init(
        configuration: ClientConfiguration, storage: (any StateStorage)? = nil,
        onEvent: @escaping @Sendable (ClientEvent) -> Void = { _ in },
        onPinFailure: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
    ) throws(ClientSetupError) {
        // A CA file is read once here, so a bad one is a configuration error at start-up (as in the
        // JVM SDK), not a network failure at every refresh.
        if let caFile = configuration.caFile {
            do { try PinnedHTTPSClient.checkTrustAnchors(caFile: caFile) } catch {
                throw .configuration(reason: error.description)
            }
        }
        let backing: any StateStorage
        if let storage {
            backing = storage
        } else {
            do { backing = try DirectoryStorage(path: configuration.stateDirectory) } catch { throw .storage(error) }
        }
        let transport = PinnedHTTPSClient(
            configuration: .init(
                caFile: configuration.caFile, connectTimeout: configuration.connectTimeout,
                ioTimeout: configuration.ioTimeout, totalDeadline: configuration.totalDeadline,
                maxResponseBytes: configuration.limits.maxEnvelopeBytes))
        try self.init(
            configuration: configuration, crypto: .sodium, transport: transport, storage: backing, onEvent: onEvent,
            onPinFailure: onPinFailure)
    }
}
