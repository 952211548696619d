// Keys named on the command line as files or PKCS#11 URIs (docs/DESIGN.md §13), the one
// module of a command, and the mapping of PKCS#11 errors to exit codes.

import Foundation
import PinionCore
import PinionCrypto

/// A key given to a command: a file path or an RFC 7512 URI.
enum KeyReference {
    case file(String)
    case pkcs11(PKCS11URI)

    /// `pkcs11:...` is a URI (parsed strictly); anything else is a file path.
    static func parse(_ text: String) throws(CLIError) -> KeyReference {
        guard PKCS11URI.isURI(text) else { return .file(text) }
        do { return .pkcs11(try PKCS11URI(parsing: text)) } catch { throw .usage(error.description) }
    }
}

/// The PKCS#11 module of one command: opened on first need (so commands with file keys
/// only never load it), once, and shared by every key of the command.
final class HardwareModule {
    private let option: String?
    private var module: PKCS11Module?

    /// The option spec every command that accepts URIs adds.
    static let option = OptionSpec.value("pkcs11-module")

    init(_ arguments: ParsedArguments) { option = arguments.value("pkcs11-module") }

    /// The module: --pkcs11-module, else PINION_PKCS11_MODULE, else the URI's
    /// `module-path=`. A URI whose module-path names another module than the one the command
    /// already uses is refused (exit 2).
    ///
    /// - Parameter uri: the key URI the module is for, or nil (`key list`).
    func get(for uri: PKCS11URI? = nil) throws -> PKCS11Module {
        let path = try Hardware.mapped {
            if let uri { return try PKCS11Module.path(option: option ?? module?.path, uri: uri) }
            return try module?.path ?? PKCS11Module.path(option: option)
        }
        if let module, module.path == path { return module }
        if let module {
            throw CLIError.usage(
                PKCS11Error.moduleMismatch(uri: uri?.description ?? "pkcs11:", named: path, used: module.path)
                    .description)
        }
        let opened = try Hardware.mapped { try PKCS11Module.open(path: path) }
        module = opened
        return opened
    }
}

enum Hardware {
    /// Runs `body`, turning PKCS#11 errors into `CLIError`s by their category
    /// (`PKCS11Error.category`: io for the module or the device, usage for what the user
    /// named wrongly, refusal for a wrong PIN, key type or signature; a URI error is usage).
    static func mapped<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as PKCS11Error {
            throw CLIError.from(error)
        } catch let error as PKCS11URIError {
            throw CLIError.from(error)
        }
    }

    /// The PIN provider for a key's URI: pin-source, PINION_PKCS11_PIN, the terminal.
    static func pin(for uri: PKCS11URI) -> PKCS11PINProvider {
        { token in
            if token.protectedAuthenticationPath, uri.pinSourceFile == nil { return nil }
            return try PKCS11PIN.obtain(uri: uri, token: token)
        }
    }

    /// The public key a reference names: a `.pub` file, or a URI's public object.
    static func publicKey(_ text: String, module: HardwareModule) throws -> Ed25519PublicKey {
        switch try KeyReference.parse(text) {
        case .file(let path): return try KeyFile.readPublicKey(path: path)
        case .pkcs11(let uri):
            return try mapped { try PKCS11Keys.publicKey(uri: uri, module: try module.get(for: uri)) }
        }
    }

    /// PEM SubjectPublicKeyInfo of an Ed25519 key (RFC 8410 §4, RFC 7468 §13), as
    /// `pinion keygen` writes PATH.pub.
    static func publicKeyPEM(_ key: Ed25519PublicKey) -> [UInt8] {
        let der: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + key.raw
        return Array(
            ("-----BEGIN PUBLIC KEY-----\n" + Data(der).base64EncodedString() + "\n-----END PUBLIC KEY-----\n").utf8)
    }
}
