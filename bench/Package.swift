// swift-tools-version: 6.0
// Pinion's benchmarks: a separate package that depends on the main one
// by path, so the main package's build and test suite are untouched. Run `bench/run`.

import PackageDescription

let package = Package(
    name: "PinionBench",
    dependencies: [.package(name: "Pinion", path: "..")],
    targets: [
        // The references call libsodium and OpenSSL directly, not through Pinion's wrappers.
        .systemLibrary(name: "BenchSodium", pkgConfig: "libsodium"),
        .systemLibrary(name: "BenchOpenSSL", pkgConfig: "openssl"),
        .executableTarget(
            name: "pinion-bench",
            dependencies: [
                "BenchSodium", "BenchOpenSSL",
                .product(name: "PinionCore", package: "Pinion"),
                .product(name: "PinionCrypto", package: "Pinion"),
                .product(name: "PinionLinux", package: "Pinion"),
                .product(name: "PinionLog", package: "Pinion"),
                .product(name: "PinionLogWriter", package: "Pinion"),
                .product(name: "PinionTrust", package: "Pinion"),
                .product(name: "PinionPublisher", package: "Pinion"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
