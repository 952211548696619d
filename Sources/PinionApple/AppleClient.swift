// The SDK's client on Apple platforms: CryptoKit, the URLSession update channel and Application Support
// storage plugged into PinionTrust's seams. Apple-only glue, type-checked against Tests/AppleStubs only.

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionTrust

    extension PinningClient {
        /// Builds a client in an iOS or macOS app: `CryptoKitProvider.provider` (CryptoKit's Ed25519
        /// made strict, SHA-256), `URLSessionTransport` (publisher pins only; responses limited to
        /// the envelope limit) and `AppleFileStorage` in `Application Support/<stateDirectory>`.
        ///
        /// - Parameters:
        ///   - configuration: the app's settings; `stateDirectory` is relative to Application
        ///     Support; `caFile` must be nil (custom anchors are not supported on URLSession here);
        ///     `publisherConnectTo` must be nil.
        ///   - storage: other storage (for example an app group's), instead of Application Support.
        ///   - onEvent: every refresh and start-up event.
        ///   - onPinFailure: RFC 7469 §3 reports of pin failures.
        /// - Returns: the client; start `makeUpdater()` or schedule `refresh()` from BGAppRefreshTask.
        /// - Throws: `ClientSetupError` for an invalid embedded root or unusable storage.
        public static func apple(
            configuration: ClientConfiguration, storage: (any StateStorage)? = nil,
            onEvent: @escaping @Sendable (ClientEvent) -> Void = { _ in },
            onPinFailure: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
        ) throws(ClientSetupError) -> PinningClient {
            let backing: any StateStorage
            if let storage {
                backing = storage
            } else {
                do {
                    backing = try AppleFileStorage.applicationSupport(subdirectory: configuration.stateDirectory)
                } catch {
                    throw .storage(error)
                }
            }
            let provider = CryptoKitProvider.provider
            let transport = URLSessionTransport(
                hasher: provider.hasher, caFile: configuration.caFile, ioTimeout: configuration.ioTimeout,
                totalDeadline: configuration.totalDeadline, maxResponseBytes: configuration.limits.maxEnvelopeBytes)
            return try PinningClient(
                configuration: configuration, crypto: provider, transport: transport, storage: backing,
                onEvent: onEvent, onPinFailure: onPinFailure)
        }
    }
#endif
