// What the tests publish: roots and manifests signed with libsodium at explicit times, and the DER
// certificates of Fixtures/ with the pins openssl computed for them (Fixtures/pins.txt).

import Foundation
import PinionCore

/// A fixed reference time (the tests never read the wall clock): 2026-11-30T09:00:00Z.
let t0 = Timestamp(secondsSince1970: 1_796_029_200)
/// One day, in seconds.
let day: Int64 = 86_400
/// The scope every fixture is signed for.
let scope = "com.example.app"

/// Why a fixture could not be built or read.
struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
}

/// A pin with the given repeated byte: a well-formed digest no fixture certificate has.
func junkPin(_ byte: UInt8) throws -> Pin { try Pin(digest: [UInt8](repeating: byte, count: 32)) }

/// The signing side of a publisher: root keys, pins keys, and the envelopes they sign.
struct Publisher: Sendable {
    /// Root version 1's root role key and pins role key.
    let rootKey: SodiumSigner
    let pinsKey: SodiumSigner
    /// The keys of root version 2 (the rotation).
    let nextRootKey: SodiumSigner
    let nextPinsKey: SodiumSigner

    init() throws {
        rootKey = try SodiumSigner(seed: [UInt8](repeating: 0x01, count: 32))
        pinsKey = try SodiumSigner(seed: [UInt8](repeating: 0x02, count: 32))
        nextRootKey = try SodiumSigner(seed: [UInt8](repeating: 0x03, count: 32))
        nextPinsKey = try SodiumSigner(seed: [UInt8](repeating: 0x04, count: 32))
    }

    static func keyID(_ key: SodiumSigner) -> String {
        KeyID.of(publicKey: key.publicKey, hasher: PortableCrypto.provider.hasher)
    }

    /// A root payload with one root key and one pins key, valid for a year from `t0`.
    func rootPayload(version: Int64, rootKey: SodiumSigner, pinsKey: SodiumSigner) -> RootPayload {
        RootPayload(
            scope: scope, version: version, issuedAt: t0, expiresAt: t0.adding(seconds: 365 * day),
            maxManifestLifetime: 90 * day,
            keys: [
                .init(keyID: Self.keyID(rootKey), publicKey: rootKey.publicKey),
                .init(keyID: Self.keyID(pinsKey), publicKey: pinsKey.publicKey),
            ],
            rootRole: .init(keyIDs: [Self.keyID(rootKey)], threshold: 1),
            pinsRole: .init(keyIDs: [Self.keyID(pinsKey)], threshold: 1))
    }

    /// A DSSE envelope of `payload` signed by each key (docs/DESIGN.md §3).
    func sign(_ kind: PayloadKind, _ payload: [UInt8], with keys: [SodiumSigner]) throws -> Envelope {
        var envelope = Envelope(kind: kind, payload: payload)
        for key in keys {
            envelope.signatures.append(.init(keyID: Self.keyID(key), signature: try key.sign(envelope.signingInput)))
        }
        return envelope
    }

    /// Root version 1, the app's embedded root.
    func embeddedRoot() throws -> [UInt8] {
        try sign(.root, rootPayload(version: 1, rootKey: rootKey, pinsKey: pinsKey).serialized(), with: [rootKey])
            .serialized()
    }

    /// Root version 2: new root and pins keys, signed by the old root role and the new one.
    func rotatedRoot() throws -> [UInt8] {
        try sign(
            .root, rootPayload(version: 2, rootKey: nextRootKey, pinsKey: nextPinsKey).serialized(),
            with: [rootKey, nextRootKey]
        ).serialized()
    }

    /// A manifest signed by the pins key of `rootVersion`.
    func manifest(
        version: Int64, rootVersion: Int64 = 1, issuedAt: Timestamp = t0, lifetime: Int64 = 30 * day,
        domains: [ManifestPayload.Domain], revokedPins: [Pin] = []
    ) throws -> [UInt8] {
        let payload = ManifestPayload(
            scope: scope, rootVersion: rootVersion, version: version, issuedAt: issuedAt,
            expiresAt: issuedAt.adding(seconds: lifetime), domains: domains, revokedPins: revokedPins)
        return try sign(.pins, payload.serialized(), with: [rootVersion == 1 ? pinsKey : nextPinsKey]).serialized()
    }
}

/// The DER certificates of Fixtures/ (made by Fixtures/make-certificates.sh) and their pins.
struct Certificates: Sendable {
    let root: [UInt8]
    let intermediate: [UInt8]
    let leaf: [UInt8]
    let secondLeaf: [UInt8]
    /// The RFC 7469 pins openssl computed, by file name (`leaf.der`).
    let pins: [String: Pin]

    /// The verified chain of a connection to a server presenting `leaf`: leaf, intermediate, root.
    func chain(_ leaf: [UInt8]) -> [[UInt8]] { [leaf, intermediate, root] }

    func pin(_ file: String) throws -> Pin {
        guard let pin = pins[file] else { throw FixtureFailure(description: "no pin for \(file) in pins.txt") }
        return pin
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    static func load() throws -> Certificates {
        func read(_ name: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        let text = String(decoding: try read("pins.txt"), as: UTF8.self)
        var pins: [String: Pin] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2 else { throw FixtureFailure(description: "pins.txt: bad line \(line)") }
            pins[String(fields[0])] = try Pin(String(fields[1]))
        }
        return Certificates(
            root: try read("root.der"), intermediate: try read("intermediate.der"), leaf: try read("leaf.der"),
            secondLeaf: try read("second-leaf.der"), pins: pins)
    }
}
