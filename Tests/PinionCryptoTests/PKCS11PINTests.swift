// Where a token's PIN comes from (pin-source file, PINION_PKCS11_PIN, terminal), what each
// source refuses, and the token-independent decoding of CKA_EC_POINT.

import Foundation
import PinionCore
import Testing

@testable import PinionCrypto

#if canImport(Glibc)
    import Glibc
#endif

private let token = PKCS11TokenInfo(
    slot: 7, label: "pinion", manufacturer: "SoftHSM project", model: "SoftHSM v2", serial: "00ab", flags: 0)

/// A private environment table (tests never setenv the shared process environment).
private final class Environment: @unchecked Sendable {
    private var storage: [String: UnsafeMutablePointer<CChar>] = [:]
    init(_ values: [String: String]) { for (name, value) in values { storage[name] = strdup(value) } }
    deinit { for pointer in storage.values { free(pointer) } }
    func lookup(_ name: String) -> UnsafeMutablePointer<CChar>? { storage[name] }
}

private func text(_ secret: SecureBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

@Suite struct PKCS11PINTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pin-\(UUID().uuidString)").path

    init() throws { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }

    func write(_ name: String, _ contents: String) throws -> String {
        let path = directory + "/" + name
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func pinSourceFileWinsOverTheEnvironmentAndLosesOneNewline() throws {
        let file = try write("pin", "123456\n")
        let uri = try PKCS11URI(parsing: "pkcs11:token=pinion;object=k?pin-source=file:\(file)")
        let environment = Environment(["PINION_PKCS11_PIN": "from environment"])
        let pin = try PKCS11PIN.obtain(
            uri: uri, token: token, terminalPath: directory + "/no-tty", environment: environment.lookup)
        #expect(text(pin) == "123456")
    }

    @Test func environmentIsUsedWithoutPinSource() throws {
        let environment = Environment(["PINION_PKCS11_PIN": "654321"])
        let pin = try PKCS11PIN.obtain(
            uri: try PKCS11URI(parsing: "pkcs11:token=pinion;object=k"), token: token,
            terminalPath: directory + "/no-tty", environment: environment.lookup)
        #expect(text(pin) == "654321")
    }

    @Test func unusablePINsAreRefusedNamingTheTokenAndTheSource() throws {
        let empty = try write("empty", "\n")
        let long = try write("long", String(repeating: "9", count: 1025))
        let missing = directory + "/missing"
        let cases: [(String, Environment, String)] = [
            ("pkcs11:token=pinion;object=k?pin-source=file:\(empty)", Environment([:]), "is empty"),
            ("pkcs11:token=pinion;object=k?pin-source=file:\(long)", Environment([:]), "longer than 1024 bytes"),
            ("pkcs11:token=pinion;object=k?pin-source=file:\(missing)", Environment([:]), "cannot open \(missing)"),
            (
                "pkcs11:token=pinion;object=k", Environment(["PINION_PKCS11_PIN": ""]),
                "environment variable PINION_PKCS11_PIN is empty"
            ),
            (
                "pkcs11:token=pinion;object=k", Environment([:]),
                "use pin-source=file:/PATH in the URI, PINION_PKCS11_PIN or run on a terminal"
            ),
        ]
        for (uriText, environment, message) in cases {
            let uri = try PKCS11URI(parsing: uriText)
            let error = #expect(throws: PKCS11Error.self, "\(uriText)") {
                try PKCS11PIN.obtain(
                    uri: uri, token: token, terminalPath: directory + "/no-tty", environment: environment.lookup)
            }
            #expect(error?.description.hasPrefix("no PIN for token \"pinion\" (serial 00ab): ") == true)
            #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
            #expect(error?.isUsageError == true)
        }
    }

    @Test func ecPointIsADEROctetStringOrTheRawPoint() throws {
        let uri = try PKCS11URI(parsing: "pkcs11:object=k")
        let point = [UInt8](repeating: 0x11, count: 32)
        #expect(try PKCS11Keys.decodeECPoint([0x04, 0x20] + point, uri: uri) == point)
        #expect(try PKCS11Keys.decodeECPoint(point, uri: uri) == point)
        for bad in [
            [], [0x04, 0x20], [0x04, 0x21] + point, [0x03, 0x20] + point, [0x04, 0x20] + point + [0],
            Array(point.prefix(31)),
        ] {
            #expect(throws: PKCS11Error.self) { try PKCS11Keys.decodeECPoint(bad, uri: uri) }
        }
    }

    @Test func pinStateNamesEachFlag() {
        #expect(PKCS11PINState(countLow: false, finalTry: false, locked: false).description == "")
        #expect(
            PKCS11PINState(countLow: true, finalTry: false, locked: false).description.contains(
                "CKF_USER_PIN_COUNT_LOW"))
        #expect(
            PKCS11PINState(countLow: true, finalTry: true, locked: false).description.contains("CKF_USER_PIN_FINAL_TRY")
        )
        #expect(
            PKCS11PINState(countLow: true, finalTry: true, locked: true).description.contains("CKF_USER_PIN_LOCKED"))
        let value = PKCS11ReturnValue(0xA0)
        #expect(value.description == "CKR_PIN_INCORRECT (0xA0)")
        #expect(PKCS11ReturnValue(0x8000_0001).description == "CK_RV 0x80000001")
        #expect(PKCS11ReturnValue(0x32).isDeviceGone)
    }
}
