// Compiled with Sources/PinionApple by scripts/typecheck-apple: it names each glue declaration, so the
// type-check fails if the `#if canImport(Security) && canImport(CryptoKit)` branch was skipped.

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import PinionTrust
    import Security

    func appleGlueProbe(_ certificate: SecCertificate) throws -> (CryptoProvider, CertificateSPKI) {
        let provider = CryptoKitProvider.provider
        return (provider, try CertificatePins.spki(of: certificate, hasher: provider.hasher))
    }

    func appleClientProbe(_ configuration: ClientConfiguration, _ challenge: URLAuthenticationChallenge) throws {
        let client = try PinningClient.apple(configuration: configuration)
        let sessions = PinnedURLSession(client: client)
        let _: URLSession = sessions.session
        let _: any URLSessionDelegate = PinionURLSessionDelegate(client: client)
        let _: (URLSession.AuthChallengeDisposition, URLCredential?) =
            PinionServerTrust.disposition(for: challenge, client: client)
        let _: any HTTPSTransport = URLSessionTransport(hasher: CryptoKitProvider.provider.hasher, maxResponseBytes: 1)
        let _: any StateStorage = try AppleFileStorage.applicationSupport(subdirectory: "pinion")
    }

    func appleDebugProxyProbe(
        _ client: PinningClient, _ ca: SecCertificate, _ trust: SecTrust, _ challenge: URLAuthenticationChallenge
    ) throws {
        let byCertificate = try InsecureDebugProxyOverride(proxyCA: ca, domains: .all) { _ in }
        let byPin = try InsecureDebugProxyOverride(proxyCAPins: [], domains: .only(["example.test"])) { _ in }
        let _: ServerTrustDecision = PinionServerTrust.evaluate(
            trust, host: "example.test", client: client, unsafeDebugProxyOverride: byCertificate)
        let _: (URLSession.AuthChallengeDisposition, URLCredential?) = PinionServerTrust.disposition(
            for: challenge, client: client, unsafeDebugProxyOverride: byPin)
    }
#else
    #error("the Apple glue was not type-checked: CryptoKit and Security stubs not found")
#endif
