// Test-only stand-in for the CryptoKit declarations Sources/PinionApple uses, so `swiftc -typecheck`
// can check the glue on Linux. Source of truth: Apple's CryptoKit documentation
// (developer.apple.com/documentation/cryptokit: Curve25519.Signing.PublicKey init(rawRepresentation:),
// isValidSignature(_:for:), SHA256.hash(data:), SHA256Digest). Signatures only; nothing here runs.

import Foundation

/// Thrown by every stub initialiser: these declarations exist only to be type-checked against.
public struct CryptoKitStubError: Error {}

public enum Curve25519 {
    public enum Signing {
        public struct PublicKey {
            /// `init<D>(rawRepresentation data: D) throws where D : ContiguousBytes`
            public init<D: ContiguousBytes>(rawRepresentation data: D) throws {
                throw CryptoKitStubError()
            }

            /// `func isValidSignature<S, D>(_ signature: S, for data: D) -> Bool
            /// where S : DataProtocol, D : DataProtocol`
            public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
                false
            }

            /// `var rawRepresentation: Data { get }`
            public var rawRepresentation: Data { Data() }
        }
    }
}

/// `struct SHA256Digest`: a `Digest`, which is `Sequence` of `UInt8`, `ContiguousBytes` and `Hashable`.
public struct SHA256Digest: Sequence, Hashable {
    fileprivate let bytes: [UInt8]

    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}

/// `struct SHA256`: `static func hash<D>(data: D) -> SHA256.Digest where D : DataProtocol`.
public struct SHA256 {
    public typealias Digest = SHA256Digest

    public static func hash<D: DataProtocol>(data: D) -> SHA256Digest { SHA256Digest(bytes: []) }
}
