// swift-tools-version: 6.0
// Pinion: signed, versioned, expiring TLS pin manifests (design of record: docs/DESIGN.md).

import PackageDescription

/// The libsodium, OpenSSL, SQLite and PKCS#11 targets, and everything built on them, exist on Linux
/// only: an Apple app adding the package gets PinionCore, PinionLog, PinionTrust and PinionApple without any
/// system library (docs/APPLE.md).
func linuxOnly(_ name: String) -> Target.Dependency {
    .target(name: name, condition: .when(platforms: [.linux]))
}

let package = Package(
    name: "Pinion",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "PinionCore", targets: ["PinionCore"]),
        .library(name: "PinionCrypto", targets: ["PinionCrypto"]),
        .library(name: "PinionLog", targets: ["PinionLog"]),
        .library(name: "PinionLogWriter", targets: ["PinionLogWriter"]),
        .library(name: "PinionTrust", targets: ["PinionTrust"]),
        .library(name: "PinionLinux", targets: ["PinionLinux"]),
        .library(name: "PinionApple", targets: ["PinionApple"]),
        // The publisher and witness servers as a library, for bench/ (witness cosign throughput).
        .library(name: "PinionPublisher", targets: ["PinionPublisher"]),
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
        // PKCS#11 (the standard pkcs11.h of libp11-kit-dev, pkg-config p11-kit-1): modules are
        // dlopen'ed at run time. Header only, deliberately without pkgConfig: its link flag
        // would put libp11-kit's own C_GetFunctionList into the global symbol scope, where it
        // interposes on modules that look up their own entry points.
        .systemLibrary(
            name: "CPKCS11",
            providers: [.apt(["libp11-kit-dev"])]
        ),
        // C wrappers (prefixed pinion_) for OpenSSL macros that Swift cannot import.
        .target(
            name: "CPinionShims",
            dependencies: [linuxOnly("COpenSSL")],
            linkerSettings: [
                .linkedLibrary("ssl", .when(platforms: [.linux])), .linkedLibrary("crypto", .when(platforms: [.linux])),
            ]
        ),
        // SQLite 3: the pin-failure report store of `pinion serve --reports` (docs/DESIGN.md §14).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // zlib: the gzip content coding of log tiles and entry bundles (`pinion serve`, the auditor).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Pure-Swift core: formats, strict parser, trust rules. Foundation only.
        .target(name: "PinionCore"),
        // libsodium and OpenSSL behind the core's protocols; all unsafe pointer work lives here.
        .target(
            name: "PinionCrypto",
            dependencies: [
                "PinionCore", linuxOnly("CSodium"), linuxOnly("COpenSSL"), linuxOnly("CPinionShims"),
                linuxOnly("CPKCS11"),
            ]
        ),
        // The transparency log code that clients, the auditor, the publisher and the witness share
        // (docs/DESIGN.md section 12), in pure Swift: Merkle hashing and proofs, tiles, signed
        // notes, checkpoints, head records, tlog-proof and its verification.
        .target(name: "PinionLog", dependencies: ["PinionCore"]),
        // The log's tile writer (`TileLogAppender`), in pure Swift: what the publisher runs and
        // test fixtures use to build a log, kept out of what apps link.
        .target(name: "PinionLogWriter", dependencies: ["PinionCore", "PinionLog"]),
        // Every trust decision a client on any platform makes, in pure Swift (no C module):
        // refresh state machine and its log step, merge, evaluation, state store, schedule,
        // reports, transport and storage protocols (docs/DESIGN.md sections 4-8).
        .target(name: "PinionTrust", dependencies: ["PinionCore", "PinionLog"]),
        // Everything that reaches the operating system through C other than crypto: OpenSSL
        // TLS connections, sockets, POSIX file access, the Linux state storage, the SQLite
        // report store. All its unsafe pointer work lives here.
        .target(
            name: "PinionSystem",
            dependencies: [
                "PinionCore", "PinionTrust", linuxOnly("PinionCrypto"), linuxOnly("COpenSSL"),
                linuxOnly("CPinionShims"), linuxOnly("CSQLite"), linuxOnly("CZlib"),
            ]),
        // The client SDK on Linux: `PinningClient` over the OpenSSL transport, libsodium and
        // file storage (docs/DESIGN.md sections 6-8). Imports no C module itself.
        .target(
            name: "PinionLinux",
            dependencies: ["PinionCore", "PinionTrust", linuxOnly("PinionCrypto"), linuxOnly("PinionSystem")]),
        // The publisher's HTTPS server (`pinion serve`, docs/DESIGN.md section 9), the witness server and its
        // decision, and the transparency log's publishing steps (section 12).
        .target(
            name: "PinionPublisher",
            dependencies: [
                "PinionCore", "PinionLog", "PinionLogWriter", "PinionTrust", linuxOnly("PinionCrypto"),
                linuxOnly("PinionSystem"),
            ]),
        // The auditor: a whole published tree checked from public files (docs/DESIGN.md section 10).
        .target(
            name: "PinionAudit",
            dependencies: [
                "PinionCore", "PinionLog", "PinionTrust", linuxOnly("PinionCrypto"), linuxOnly("PinionSystem"),
            ]),
        // Pins in other platforms' formats (Android NSC, Apple plists, OkHttp, baseline) and lint rules.
        .target(name: "PinionInterop", dependencies: ["PinionCore", "PinionTrust"]),
        // Apple-only glue (CryptoKit provider, SecTrust pin check, URLSession delegate and transport,
        // Application Support storage, the `PinningClient.apple` factory): empty unless Security and
        // CryptoKit exist; type-checked on Linux against Tests/AppleStubs by scripts/typecheck-apple.
        .target(name: "PinionApple", dependencies: ["PinionCore", "PinionTrust"]),
        // The `pinion` commands as a library, so tests can run them in-process.
        .target(
            name: "PinionCLI",
            dependencies: [
                "PinionCore", "PinionLog", "PinionTrust", linuxOnly("PinionCrypto"), linuxOnly("PinionSystem"),
                linuxOnly("PinionLinux"), linuxOnly("PinionPublisher"), linuxOnly("PinionAudit"), "PinionInterop",
            ]),
        .executableTarget(name: "pinion", dependencies: ["PinionCLI"]),
        // Scripted update-channel answers for refresh tests; PinionCore and PinionTrust only, so
        // the portable tests build from the seams alone.
        .target(
            name: "PinionTrustTestSupport", dependencies: ["PinionCore", "PinionTrust"],
            path: "Tests/PinionTrustTestSupport"),
        // Helpers shared by the test targets: fixtures (keys, signed roots and manifests), the
        // in-process `pinion` runner and workspace, child processes (`pinion serve` and `pinion
        // witness` children, nginx, headless Chromium), raw TLS and TCP clients, the fake and real
        // witnesses of log publishing, report and Prometheus helpers.
        .target(
            name: "PinionTestSupport",
            dependencies: [
                "PinionCore", "PinionCrypto", "PinionTrust", "PinionSystem", "PinionPublisher", "PinionCLI",
                "PinionTrustTestSupport", linuxOnly("COpenSSL"), linuxOnly("CPinionShims"),
            ],
            path: "Tests/PinionTestSupport"),
        .testTarget(name: "PinionCoreTests", dependencies: ["PinionCore", "PinionCrypto", "PinionTestSupport"]),
        // The transparency log: Merkle proofs, tiles, notes, checkpoints, proofs, heads, client
        // decisions (PinionLog), publishing and witness decisions (PinionPublisher); PinionCrypto
        // and CSodium serve as oracles and signers; the Go cross-check reads Interop/.
        .testTarget(
            name: "PinionLogTests",
            dependencies: [
                "PinionLog", "PinionLogWriter", "PinionPublisher", "PinionTrust", "PinionCore", "PinionCrypto",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "PinionCryptoTests", dependencies: ["PinionCore", "PinionCrypto", "PinionSystem", "COpenSSL"],
            exclude: ["Fixtures"]),
        // PinionCore's pure-Swift Ed25519 point validation, strict verifier wrapper and DER SPKI walk,
        // checked against libsodium and OpenSSL called directly as oracles.
        .testTarget(
            name: "PinionPortableCryptoTests",
            dependencies: ["PinionCore", "PinionCrypto", "PinionTrustTestSupport", "CSodium", "COpenSSL"],
            exclude: ["Fixtures"]),
        // PinionTrust's tests (merge, evaluation, refresh, schedule, verdicts), with the client
        // built only from its seams, as an Apple app builds it: libsodium called directly as the
        // CryptoProvider (the verifier wrapped in StrictEd25519Verifier), a fake HTTPSTransport and
        // in-memory StateStorage. No OpenSSL, no CLI; must compile unchanged on macOS.
        .testTarget(
            name: "PinionTrustTests",
            dependencies: [
                "PinionCore", "PinionLog", "PinionLogWriter", "PinionTrust", "PinionTrustTestSupport", "CSodium",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "PinionClientTests",
            dependencies: [
                "PinionLinux", "PinionLog", "PinionTrust", "PinionSystem", "PinionCore", "PinionCrypto",
                "PinionTestSupport", "PinionTrustTestSupport", "PinionCLI",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "PinionCLITests",
            dependencies: [
                "PinionCLI", "PinionAudit", "PinionCore", "PinionCrypto", "PinionSystem", "PinionTestSupport",
            ],
            exclude: ["testdata"]),
        // The slow CLI suites, apart so `swift test --filter PinionCLITests` stays quick: the main
        // job (scripts/demo with the built `pinion`, its servers on 127.0.0.1) and every shell
        // block of README.md and docs/*.md run as written.
        .testTarget(
            name: "PinionIntegrationTests",
            dependencies: ["PinionTestSupport", "PinionLinux", "PinionCore", "PinionTrust"], exclude: ["testdata"]),
        .testTarget(
            name: "PinionPublisherTests",
            dependencies: [
                "PinionPublisher", "PinionCLI", "PinionLinux", "PinionLog", "PinionTrust", "PinionSystem",
                "PinionCore", "PinionCrypto", "PinionTestSupport", "COpenSSL", "CPinionShims",
            ]),
        // The auditor and every `pinion status` suite (the library, the command, hostile servers,
        // `pinion serve` and nginx serving the tree).
        .testTarget(
            name: "PinionAuditTests",
            dependencies: [
                "PinionAudit", "PinionCLI", "PinionCore", "PinionLog", "PinionLogWriter", "PinionTrust",
                "PinionSystem", "PinionCrypto", "PinionTestSupport",
            ]),
        // The compromise drills of docs/THREAT_MODEL.md: the real CLI, SDK and publisher end to end.
        .testTarget(
            name: "PinionDrillTests",
            dependencies: [
                "PinionCLI", "PinionLinux", "PinionCore", "PinionPublisher", "PinionSystem", "PinionTestSupport",
            ]),
        // PKCS#11 signing against SoftHSM2 and a fault-injecting test module (C, compiled by
        // the tests with cc), run through the built `pinion` and PinionMemoryProbe.
        .testTarget(
            name: "PinionHardwareTests", dependencies: ["PinionCore", "PinionTestSupport"],
            exclude: ["Fixtures"]),
        // Test-only: signs in-process, then scans its own memory for the PIN and passphrase.
        .executableTarget(
            name: "PinionMemoryProbe", dependencies: ["PinionCLI", "PinionCore"], path: "Tests/PinionMemoryProbe"),
        // The shared conformance suite of conformance/ (cases, parser corpus, fixture regeneration),
        // driving PinionTrust with bytes, in memory and over HTTPS through the Linux SDK's update
        // channel against publishers that close or drop connections.
        .testTarget(
            name: "PinionConformanceTests",
            dependencies: [
                "PinionLog", "PinionTrust", "PinionCore", "PinionCrypto", "PinionTrustTestSupport",
                "PinionLinux", "PinionTestSupport",
            ]),
        .testTarget(
            name: "PinionInteropTests",
            dependencies: [
                "PinionInterop", "PinionCLI", "PinionLinux", "PinionCore", "PinionCrypto", "PinionTestSupport",
            ],
            exclude: ["Fixtures"]),
        // The crash-consistency suites: `pinion publish`, `pinion client refresh`, `pinion witness`
        // and `pinion serve --reports` children killed with SIGKILL at seeded moments
        // (PINION_CRASH_SEED replays). Apart so that `scripts/test --fast` skips them by target.
        .testTarget(
            name: "PinionCrashTests",
            dependencies: [
                "PinionPublisher", "PinionCLI", "PinionLinux", "PinionTrust", "PinionSystem", "PinionCore",
                "PinionCrypto", "PinionTestSupport",
            ]),
        // The other slow suites, skipped by `scripts/test --fast`: `pinion serve` under load and
        // faults, the shipped nginx configuration run by nginx, and Go's sumdb/tlog verifying a
        // published log.
        .testTarget(
            name: "PinionSlowTests",
            dependencies: [
                "PinionPublisher", "PinionCLI", "PinionLinux", "PinionTrust", "PinionSystem", "PinionCore",
                "PinionCrypto", "PinionTestSupport", "COpenSSL",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
