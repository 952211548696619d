// swift-tools-version: 6.0
// Pinion: signed, versioned, expiring TLS pin manifests (see docs/ and ../shared/DESIGN.md).

import PackageDescription

let package = Package(
    name: "Pinion",
    products: [
        .library(name: "PinionCore", targets: ["PinionCore"]),
        .library(name: "PinionCrypto", targets: ["PinionCrypto"]),
        .library(name: "PinionClient", targets: ["PinionClient"]),
        .library(name: "PinionApple", targets: ["PinionApple"]),
        .executable(name: "pinion", targets: ["pinion"]),
    ],
    targets: [
        // libsodium: Ed25519 (strict verification), SHA-256, guarded secret buffers.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // OpenSSL 3: X.509, PKCS#8, PEM, TLS.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // C wrappers (prefixed pinion_) for OpenSSL macros that Swift cannot import.
        .target(
            name: "CPinionShims",
            dependencies: ["COpenSSL"],
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // Pure-Swift core: formats, strict parser, trust rules. Foundation only.
        .target(name: "PinionCore"),
        // libsodium and OpenSSL behind the core's protocols; all unsafe pointer work lives here.
        .target(
            name: "PinionCrypto",
            dependencies: ["PinionCore", "CSodium", "COpenSSL", "CPinionShims"]
        ),
        // The client SDK: trust state, fail-closed merge, pin evaluation, persistence,
        // pinned HTTPS on OpenSSL (DESIGN.md sections 6-8).
        .target(name: "PinionClient", dependencies: ["PinionCore", "PinionCrypto", "COpenSSL", "CPinionShims"]),
        // The publisher's HTTPS server (`pinion serve`, DESIGN.md section 9).
        .target(name: "PinionPublisher", dependencies: ["PinionCore", "PinionCrypto", "COpenSSL", "CPinionShims"]),
        // The auditor: a whole published tree checked from public files (DESIGN.md section 10).
        .target(name: "PinionAudit", dependencies: ["PinionCore", "PinionCrypto", "PinionClient"]),
        // Pins in other platforms' formats (Android NSC, Apple plists, OkHttp, baseline) and lint rules.
        .target(name: "PinionInterop", dependencies: ["PinionCore", "PinionClient"]),
        // Apple-only glue (CryptoKit provider, SecCertificate pins): empty unless Security and CryptoKit
        // exist; type-checked on Linux against Tests/AppleStubs by scripts/typecheck-apple.
        .target(name: "PinionApple", dependencies: ["PinionCore"]),
        // The `pinion` commands as a library, so tests can run them in-process.
        .target(
            name: "PinionCLI",
            dependencies: [
                "PinionCore", "PinionCrypto", "PinionClient", "PinionPublisher", "PinionAudit", "PinionInterop",
            ]),
        .executableTarget(name: "pinion", dependencies: ["PinionCLI"]),
        // Helpers shared by the test targets: fixtures (keys, signed roots and manifests), the
        // in-process `pinion` runner and workspace, child processes.
        .target(
            name: "PinionTestSupport", dependencies: ["PinionCore", "PinionCrypto", "PinionCLI"],
            path: "Tests/PinionTestSupport"),
        .testTarget(name: "PinionCoreTests", dependencies: ["PinionCore", "PinionCrypto", "PinionTestSupport"]),
        .testTarget(name: "PinionCryptoTests", dependencies: ["PinionCore", "PinionCrypto"], exclude: ["Fixtures"]),
        // PinionCore's pure-Swift Ed25519 point validation, strict verifier wrapper and DER SPKI walk,
        // checked against libsodium and OpenSSL called directly as oracles.
        .testTarget(
            name: "PinionPortableCryptoTests", dependencies: ["PinionCore", "PinionCrypto", "CSodium", "COpenSSL"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "PinionClientTests",
            dependencies: ["PinionClient", "PinionCore", "PinionCrypto", "PinionTestSupport", "PinionCLI"]),
        .testTarget(
            name: "PinionCLITests", dependencies: ["PinionCLI", "PinionCore", "PinionCrypto", "PinionTestSupport"]),
        .testTarget(
            name: "PinionPublisherTests",
            dependencies: [
                "PinionPublisher", "PinionCLI", "PinionClient", "PinionCore", "PinionCrypto", "PinionTestSupport",
                "COpenSSL", "CPinionShims",
            ]),
        .testTarget(
            name: "PinionAuditTests",
            dependencies: ["PinionAudit", "PinionCLI", "PinionCore", "PinionCrypto", "PinionTestSupport"]),
        // The compromise drills of docs/THREAT_MODEL.md: the real CLI, SDK and publisher end to end.
        .testTarget(
            name: "PinionDrillTests",
            dependencies: ["PinionCLI", "PinionClient", "PinionCore", "PinionPublisher", "PinionTestSupport"]),
        .testTarget(
            name: "PinionInteropTests",
            dependencies: [
                "PinionInterop", "PinionCLI", "PinionClient", "PinionCore", "PinionCrypto", "PinionTestSupport",
            ],
            exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
