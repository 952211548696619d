// Test-only stand-in for the Security declarations Sources/PinionApple uses, for `swiftc -typecheck` on
// Linux. Source of truth: Apple's Security documentation (developer.apple.com/documentation/security:
// SecCertificate, SecCertificateCopyData(_:), SecTrust, SecTrustEvaluateWithError(_:_:),
// SecTrustCopyCertificateChain(_:)). CFData is toll-free bridged to Data on Apple platforms (`as Data`);
// here it is an alias of Data, which accepts the same `as Data` coercion; CFArray likewise stands as
// NSArray, which `as? [SecCertificate]` bridges. Signatures only; nothing here runs.

import Foundation

/// `class SecCertificate`: an opaque Core Foundation type.
public final class SecCertificate {}

/// `class SecTrust`: an opaque Core Foundation type holding a trust evaluation.
public final class SecTrust {}

/// `class CFError`: an opaque Core Foundation type (bridged to `Error` on Apple platforms).
public final class CFError {}

/// Stand-in for `CFData` (bridged to `Data` on Apple platforms).
public typealias CFData = Data

/// Stand-in for `CFArray` (bridged to `NSArray` on Apple platforms).
public typealias CFArray = NSArray

/// `func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData`: the certificate's DER.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { Data() }

/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`
/// (iOS 12, macOS 10.14): evaluates the trust against its policies (X.509 path and host name).
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { false }

/// `func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray?` (iOS 15, macOS 12): the evaluated
/// chain, leaf first, as `SecCertificate` values.
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { nil }

/// `class CFAllocator`: an opaque Core Foundation type (nil selects the default allocator).
public final class CFAllocator {}

/// `func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate?`:
/// a certificate from its DER, nil when the bytes are not one.
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? { nil }
