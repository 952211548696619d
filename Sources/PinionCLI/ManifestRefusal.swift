// A refused manifest's CLI error, with a pins-role threshold failure explained by
// PinionCore's ManifestDiagnosis (the file named first).

import PinionCore
import PinionCrypto

extension CLIError {
    /// `from(error, file:)`, with a pins-role threshold failure explained by
    /// `ManifestDiagnosis` (the file named first).
    static func manifest(_ error: any Error, file: String, envelopeBytes: [UInt8], chain: RootChain) -> CLIError {
        if let trust = error as? TrustError, let envelope = try? Envelope.parse(envelopeBytes),
            let message = ManifestDiagnosis.explain(trust, envelope: envelope, chain: chain, crypto: crypto)
        {
            return .failure("\(file): \(message)")
        }
        return from(error, file: file)
    }
}
