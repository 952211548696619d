// Test-only stand-in for the Security declarations Sources/PinionApple uses, for `swiftc -typecheck` on
// Linux. Source of truth: Apple's Security documentation (developer.apple.com/documentation/security:
// SecCertificate, SecCertificateCopyData(_:)). CFData is toll-free bridged to Data on Apple platforms
// (`as Data`); here it is an alias of Data, which accepts the same `as Data` coercion.

import Foundation

/// `class SecCertificate`: an opaque Core Foundation type.
public final class SecCertificate {}

/// Stand-in for `CFData` (bridged to `Data` on Apple platforms).
public typealias CFData = Data

/// `func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData`: the certificate's DER.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { Data() }
