// Helpers the commands share: loading documents and keys, one passphrase per command.

import Foundation
import PinionCore
import PinionCrypto

/// The crypto provider every command uses.
var crypto: CryptoProvider { CryptoProvider.sodium }

/// Largest key, certificate or payload file the CLI reads (bytes).
let maxInputBytes = Limits.standard.maxEnvelopeBytes

/// Obtains one key's passphrase once, on first need (only an encrypted key asks), from its
/// --passphrase-file, PINION_PASSPHRASE or the terminal with a prompt naming the key.
final class PassphraseOnce {
    private let file: String?
    private let confirm: Bool
    private let prompt: String
    private var cached: SecureBytes?

    init(file: String?, confirm: Bool = false, prompt: String = "Passphrase: ") {
        self.file = file
        self.confirm = confirm
        self.prompt = prompt
    }

    func get() throws -> SecureBytes {
        if let cached { return cached }
        let obtained = try Passphrase.obtain(file: file, confirm: confirm, prompt: prompt)
        cached = obtained
        return obtained
    }
}

/// A parsed document file: envelope or bare payload, root or pins.
enum Document {
    case envelope(Envelope, path: String)
    case rootPayload(RootPayload, bytes: [UInt8])
    case manifestPayload(ManifestPayload, bytes: [UInt8])
}

enum Load {
    /// Refuses (exit 3) a `--repo` that is not an existing directory, for the commands that
    /// read a published tree without writing one.
    static func existingTree(_ repo: String) throws(CLIError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: repo, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .io("\(repo): no such directory (--repo names the tree pinion publish writes)")
        }
    }

    /// Reads an envelope file.
    static func envelope(_ path: String) throws(CLIError) -> Envelope {
        let bytes = try Files.read(path, limit: maxInputBytes)
        do { return try Envelope.parse(bytes) } catch {
            if error.rule == .missingMember("payloadType"),
                case .object(let object)? = try? StrictJSONParser.parse(bytes, limits: Limits.standard.json),
                object["type"] != nil
            {
                throw .usage("\(path): is an unsigned payload; a signed envelope is needed (pinion sign)")
            }
            throw .failure(
                FileKind.message(
                    path, expected: "a signed envelope (JSON)", looksRight: ["JSON"], bytes: bytes,
                    detail: error.description))
        }
    }

    /// Reads a root envelope that a new document will build on: strict payload, and a
    /// threshold of its own root role (as an app embedding it would require). Warns when
    /// it has expired. Its place in a chain is `pinion verify`'s job.
    static func rootEnvelope(_ path: String, context: CLIContext) throws(CLIError) -> (Envelope, RootPayload) {
        let envelope = try envelope(path)
        guard envelope.kind == .root else {
            throw .usage("\(path): holds a document of type \(envelope.kind.rawValue), a root envelope is needed")
        }
        let root: VerifiedRoot
        do {
            root = try RootChain(anchor: envelope.serialized(), crypto: crypto).newest
        } catch {
            throw .failure("\(path): not a valid signed root: \(error)")
        }
        let now = context.now()
        if root.payload.expiresAt <= now {
            context.warn("\(path): root version \(root.version) expired at \(root.payload.expiresAt)")
        }
        return (envelope, root.payload)
    }

    /// Reads a manifest envelope and parses its payload strictly (signatures not checked).
    static func manifestEnvelope(_ path: String) throws(CLIError) -> (Envelope, ManifestPayload) {
        let envelope = try envelope(path)
        guard envelope.kind == .pins else {
            throw .usage(
                "\(path): holds a document of type \(envelope.kind.rawValue), a manifest envelope is needed")
        }
        do { return (envelope, try ManifestPayload.parse(envelope.payload)) } catch {
            throw .failure(located(error, path).description)
        }
    }

    /// Reads an envelope or a bare payload, telling them apart by their members
    /// (`payloadType` for an envelope, `type` for a payload).
    static func document(_ path: String) throws(CLIError) -> Document {
        let bytes = try Files.read(path, limit: maxInputBytes)
        let value: JSONValue
        do { value = try StrictJSONParser.parse(bytes, limits: Limits.standard.json) } catch {
            throw .failure(
                FileKind.message(
                    path, expected: "a Pinion payload or envelope (JSON)", looksRight: ["JSON"], bytes: bytes,
                    detail: error.description))
        }
        guard case .object(let object) = value else {
            throw .failure("\(path): expected a JSON object (a payload or an envelope)")
        }
        if object["payloadType"] != nil {
            do { return .envelope(try Envelope.parse(bytes), path: path) } catch {
                throw .failure(error.inFile(path).description)
            }
        }
        guard case .string(let type)? = object["type"] else {
            throw .failure("\(path): neither an envelope (payloadType) nor a payload (type)")
        }
        do throws(FormatError) {
            switch type {
            case RootPayload.documentType:
                return .rootPayload(try RootPayload.parse(bytes, crypto: crypto), bytes: bytes)
            case ManifestPayload.documentType:
                return .manifestPayload(try ManifestPayload.parse(bytes), bytes: bytes)
            default:
                throw FormatError(
                    path: "type",
                    rule: .wrongDocumentType(
                        expected: "\(RootPayload.documentType) or \(ManifestPayload.documentType)", found: type)
                )
            }
        } catch {
            throw .failure(error.inFile(path).description)
        }
    }

    /// A manifest payload file to edit.
    static func manifestPayload(_ path: String) throws(CLIError) -> ManifestPayload {
        switch try document(path) {
        case .manifestPayload(let payload, _): return payload
        case .envelope:
            throw .usage(
                "\(path): is a signed envelope; edit the payload, then sign it again (signed payloads never change)"
            )
        case .rootPayload: throw .usage("\(path): is a root payload, not a manifest payload")
        }
    }

    /// A public key from a `.pub` file or a PKCS#11 URI (the token's public object).
    static func publicKey(_ path: String, module: HardwareModule) throws -> Ed25519PublicKey {
        try Hardware.publicKey(path, module: module)
    }

    static func located(_ error: FormatError, _ path: String) -> FormatError {
        var copy = error.inFile(path)
        copy.path = copy.path.isEmpty ? "payload" : "payload." + copy.path
        return copy
    }
}

extension Envelope {
    /// `sha256:<hex>` of the payload bytes.
    var payloadHashText: String { "sha256:" + Hex.encode(crypto.hasher.sha256(payload)) }
}
