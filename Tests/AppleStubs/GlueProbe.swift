// Compiled with Sources/PinionApple by scripts/typecheck-apple: it names each glue declaration, so the
// type-check fails if the `#if canImport(Security) && canImport(CryptoKit)` branch was skipped.

#if canImport(Security) && canImport(CryptoKit)
    import PinionCore
    import Security

    func appleGlueProbe(_ certificate: SecCertificate) throws -> (CryptoProvider, CertificateSPKI) {
        let provider = CryptoKitProvider.provider
        return (provider, try CertificatePins.spki(of: certificate, hasher: provider.hasher))
    }
#else
    #error("the Apple glue was not type-checked: CryptoKit and Security stubs not found")
#endif
