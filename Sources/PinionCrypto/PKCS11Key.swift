// Ed25519 keys in PKCS#11 tokens (docs/DESIGN.md §13): find by URI, read the public key,
// sign with CKM_EDDSA and verify the result, generate in the token, list.

import CPKCS11
import CSodium
import PinionCore

/// An Ed25519 public key in a token, as `pinion key list` shows it.
public struct PKCS11ListedKey: Sendable, Equatable {
    /// The URI naming the key (token attributes, `object`, `id`).
    public let uri: PKCS11URI
    /// The public key, or why it could not be read.
    public let publicKey: Result<Ed25519PublicKey, PKCS11Error>
}

/// Where the PIN of a token comes from: called with the token once a login is needed;
/// returns `nil` only for a token with a PIN pad (protected authentication path).
public typealias PKCS11PINProvider = (PKCS11TokenInfo) throws -> SecureBytes?

/// Finding, reading and using Ed25519 keys of a PKCS#11 module (PKCS#11 v3.0 §2.3.14
/// Edwards curves: CKK_EC_EDWARDS, CKM_EDDSA, CKM_EC_EDWARDS_KEY_PAIR_GEN).
public enum PKCS11Keys {
    /// DER of OID 1.3.101.112 (id-Ed25519, RFC 8410), the CKA_EC_PARAMS Pinion writes.
    static let ed25519OID: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]
    /// DER PrintableString "edwards25519", the other CKA_EC_PARAMS PKCS#11 v3.0 allows.
    static let ed25519Name: [UInt8] = [0x13, 0x0C] + Array("edwards25519".utf8)
    /// The 12-byte prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4).
    static let spkiPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// The one token the URI's token attributes match.
    ///
    /// - Throws: `PKCS11Error.noToken`, `.ambiguousToken`, or a module error.
    public static func token(matching uri: PKCS11URI, in module: PKCS11Module) throws -> PKCS11TokenInfo {
        let tokens = try module.tokens()
        let matches = tokens.filter { $0.matches(uri) }
        guard let first = matches.first else {
            throw PKCS11Error.noToken(uri: uri.description, present: tokens.map(\.displayName))
        }
        guard matches.count == 1 else {
            throw PKCS11Error.ambiguousToken(uri: uri.description, matches: matches.map(\.displayName))
        }
        return first
    }

    /// Reads the public key the URI names, without logging in (public objects).
    ///
    /// - Parameters:
    ///   - uri: names a token and a key (`object=` or `id=`).
    ///   - module: the open module.
    /// - Returns: the Ed25519 public key from CKA_EC_POINT (DER OCTET STRING or raw 32
    ///   bytes) or CKA_PUBLIC_KEY_INFO.
    /// - Throws: `PKCS11Error` (`.keyNotFound`, `.notEd25519`, `.malformedPublicKey`, ...).
    public static func publicKey(uri: PKCS11URI, module: PKCS11Module) throws -> Ed25519PublicKey {
        guard uri.object != nil || uri.id != nil else { throw PKCS11Error.noObjectInURI(uri: uri.description) }
        let token = try token(matching: uri, in: module)
        let session = try PKCS11Session(module: module, token: token, readWrite: false)
        let object = try findOne(session, uri: uri, keyClass: PKCS11Constant.classPublicKey)
        try checkEd25519(session, object, uri: uri)
        return try readPublicKey(session, object, uri: uri)
    }

    /// Signs `message` with the private key the URI names and verifies the signature with
    /// libsodium under the key's public half before returning it.
    ///
    /// - Parameters:
    ///   - message: the bytes to sign (for DSSE the PAE), at most `maximumMessage` bytes.
    ///   - uri: names a token and a key.
    ///   - module: the open module.
    ///   - maximumMessage: the largest message sent to the token (bytes; --pkcs11-max-message).
    ///   - pin: asked once the token is known, if the token needs a login.
    /// - Returns: the public key and the verified 64-byte signature.
    /// - Throws: `PKCS11Error` (`.messageTooLarge` before anything reaches the token,
    ///   `.pinIncorrect`, `.badSignature`, `.deviceRemoved`, ...), or what `pin` throws.
    public static func sign(
        _ message: [UInt8], uri: PKCS11URI, module: PKCS11Module, maximumMessage: Int, pin: PKCS11PINProvider
    ) throws -> (Ed25519PublicKey, [UInt8]) {
        guard message.count <= maximumMessage else {
            throw PKCS11Error.messageTooLarge(uri: uri.description, size: message.count, limit: maximumMessage)
        }
        guard uri.object != nil || uri.id != nil else { throw PKCS11Error.noObjectInURI(uri: uri.description) }
        let token = try token(matching: uri, in: module)
        let session = try PKCS11Session(module: module, token: token, readWrite: false)
        try login(session, token: token, pin: pin)
        // After the login, so that a public object marked CKA_PRIVATE is found too.
        let publicObject = try find(session, uri: uri, keyClass: PKCS11Constant.classPublicKey, required: false)
        let privateObject = try findOne(session, uri: uri, keyClass: PKCS11Constant.classPrivateKey)
        try checkEd25519(session, privateObject, uri: uri)
        let publicKey: Ed25519PublicKey
        if let publicObject {
            publicKey = try readPublicKey(session, publicObject, uri: uri)
        } else {
            publicKey = try readPublicKey(session, privateObject, uri: uri)
        }
        let signature: [UInt8]
        do {
            signature = try session.signEdDSA(key: privateObject, message: message)
        } catch PKCS11Error.tokenRefusedMessageSize(_, let size) {
            throw PKCS11Error.tokenRefusedMessageSize(uri: uri.description, size: size)
        }
        guard signature.count == 64 else {
            throw PKCS11Error.badSignatureLength(uri: uri.description, length: signature.count)
        }
        guard SodiumEd25519Verifier().isValidSignature(signature, of: message, publicKey: publicKey.raw) else {
            throw PKCS11Error.badSignature(uri: uri.description)
        }
        return (publicKey, signature)
    }

    /// Generates an Ed25519 key pair in the token the URI names (C_GenerateKeyPair with
    /// CKM_EC_EDWARDS_KEY_PAIR_GEN). The private key is CKA_TOKEN, CKA_PRIVATE,
    /// CKA_SENSITIVE, not CKA_EXTRACTABLE, and may only sign (CKA_SIGN; no decrypt, unwrap
    /// or derive). Both halves get the label and a random 16-byte CKA_ID.
    ///
    /// - Parameters:
    ///   - uri: names the token only (no `object=` or `id=`).
    ///   - label: CKA_LABEL of the new key, 1-32 bytes of UTF-8.
    ///   - module: the open module.
    ///   - pin: the user PIN provider.
    /// - Returns: the URI of the new key and its public key (read back and checked).
    /// - Throws: `PKCS11Error.keygenURINamesObject`, `.labelExists`, module errors.
    public static func generate(uri: PKCS11URI, label: String, module: PKCS11Module, pin: PKCS11PINProvider) throws
        -> (PKCS11URI, Ed25519PublicKey)
    {
        guard uri.object == nil, uri.id == nil else { throw PKCS11Error.keygenURINamesObject(uri: uri.description) }
        let token = try token(matching: uri, in: module)
        let session = try PKCS11Session(module: module, token: token, readWrite: true)
        try login(session, token: token, pin: pin)
        let labelBytes = Array(label.utf8)
        for keyClass in [PKCS11Constant.classPrivateKey, PKCS11Constant.classPublicKey] {
            let existing = try session.findObjects(
                [.ulong(PKCS11Constant.attributeClass, keyClass), .bytes(PKCS11Constant.attributeLabel, labelBytes)],
                limit: 1)
            guard existing.isEmpty else { throw PKCS11Error.labelExists(token: token.displayName, label: label) }
        }
        var id = [UInt8](repeating: 0, count: 16)
        randombytes_buf(&id, id.count)
        let common: [PKCS11Attribute] = [
            .bool(UInt(CKA_TOKEN), true), .bytes(PKCS11Constant.attributeLabel, labelBytes),
            .bytes(PKCS11Constant.attributeID, id),
        ]
        var publicTemplate = common
        publicTemplate.append(.ulong(PKCS11Constant.attributeClass, PKCS11Constant.classPublicKey))
        publicTemplate.append(.ulong(PKCS11Constant.attributeKeyType, PKCS11Constant.keyTypeEdwards))
        publicTemplate.append(.bytes(PKCS11Constant.attributeECParams, ed25519OID))
        publicTemplate.append(.bool(UInt(CKA_VERIFY), true))
        var privateTemplate = common
        privateTemplate.append(.ulong(PKCS11Constant.attributeClass, PKCS11Constant.classPrivateKey))
        privateTemplate.append(.ulong(PKCS11Constant.attributeKeyType, PKCS11Constant.keyTypeEdwards))
        // Only signing: never readable in clear, never exported, no other use.
        let privateFlags: [(UInt, Bool)] = [
            (UInt(CKA_PRIVATE), true), (UInt(CKA_SENSITIVE), true), (UInt(CKA_EXTRACTABLE), false),
            (UInt(CKA_SIGN), true), (UInt(CKA_DECRYPT), false), (UInt(CKA_UNWRAP), false), (UInt(CKA_DERIVE), false),
        ]
        for (type, value) in privateFlags { privateTemplate.append(.bool(type, value)) }
        let (publicObject, _) = try session.generateKeyPair(public: publicTemplate, private: privateTemplate)
        var keyURI = token.uri
        keyURI.object = label
        keyURI.id = id
        let publicKey = try readPublicKey(session, publicObject, uri: keyURI)
        return (keyURI, publicKey)
    }

    /// Every token present and the Ed25519 public keys on it (public objects, no login).
    ///
    /// - Throws: module errors (a key that cannot be read is listed with its error).
    public static func list(module: PKCS11Module) throws -> [(token: PKCS11TokenInfo, keys: [PKCS11ListedKey])] {
        try module.tokens().map { token in
            let session = try PKCS11Session(module: module, token: token, readWrite: false)
            let objects = try session.findObjects(
                [
                    .ulong(PKCS11Constant.attributeClass, PKCS11Constant.classPublicKey),
                    .ulong(PKCS11Constant.attributeKeyType, PKCS11Constant.keyTypeEdwards),
                ], limit: 256)
            let keys = try objects.map { object -> PKCS11ListedKey in
                var uri = token.uri
                if let label = try session.attribute(object, PKCS11Constant.attributeLabel), !label.isEmpty {
                    uri.object = String(decoding: label, as: UTF8.self)
                }
                if let id = try session.attribute(object, PKCS11Constant.attributeID), !id.isEmpty { uri.id = id }
                let result: Result<Ed25519PublicKey, PKCS11Error>
                do {
                    try checkEd25519(session, object, uri: uri)
                    result = .success(try readPublicKey(session, object, uri: uri))
                } catch let error as PKCS11Error {
                    result = .failure(error)
                }
                return PKCS11ListedKey(uri: uri, publicKey: result)
            }
            return (token, keys)
        }
    }

    // MARK: - Helpers

    private static func login(_ session: PKCS11Session, token: PKCS11TokenInfo, pin: PKCS11PINProvider) throws {
        guard token.loginRequired else { return }
        if token.pinState.locked { throw PKCS11Error.pinLocked(token: token.displayName) }
        let secret = try pin(token)
        try session.login(pin: secret)
    }

    private static func find(_ session: PKCS11Session, uri: PKCS11URI, keyClass: UInt, required: Bool)
        throws -> UInt?
    {
        var template: [PKCS11Attribute] = [.ulong(PKCS11Constant.attributeClass, keyClass)]
        if let object = uri.object { template.append(.bytes(PKCS11Constant.attributeLabel, Array(object.utf8))) }
        if let id = uri.id { template.append(.bytes(PKCS11Constant.attributeID, id)) }
        let found = try session.findObjects(template)
        guard found.count <= 1 else { throw PKCS11Error.ambiguousKey(uri: uri.description, count: found.count) }
        guard let object = found.first else {
            guard required else { return nil }
            throw PKCS11Error.keyNotFound(
                uri: uri.description, token: session.token.displayName,
                keyClass: keyClass == PKCS11Constant.classPrivateKey ? "private" : "public")
        }
        return object
    }

    private static func findOne(_ session: PKCS11Session, uri: PKCS11URI, keyClass: UInt) throws -> UInt {
        guard let object = try find(session, uri: uri, keyClass: keyClass, required: true) else {
            throw PKCS11Error.keyNotFound(uri: uri.description, token: session.token.displayName, keyClass: "")
        }
        return object
    }

    /// Refuses keys that are not Ed25519: another key type (CKK_EC for ECDSA, CKK_RSA), or
    /// an Edwards key whose CKA_EC_PARAMS names another curve (Ed448).
    private static func checkEd25519(_ session: PKCS11Session, _ object: UInt, uri: PKCS11URI) throws {
        let keyType = try session.ulongAttribute(object, PKCS11Constant.attributeKeyType)
        guard keyType == PKCS11Constant.keyTypeEdwards else {
            let found: String
            switch keyType {
            case PKCS11Constant.keyTypeEC?: found = "an ECDSA key (CKK_EC)"
            case PKCS11Constant.keyTypeRSA?: found = "an RSA key (CKK_RSA)"
            case let other?: found = "a key of type CKK 0x\(String(other, radix: 16))"
            case nil: found = "a key without CKA_KEY_TYPE"
            }
            throw PKCS11Error.notEd25519(uri: uri.description, found: found)
        }
        if let parameters = try session.attribute(object, PKCS11Constant.attributeECParams), !parameters.isEmpty,
            parameters != ed25519OID, parameters != ed25519Name
        {
            throw PKCS11Error.notEd25519(uri: uri.description, found: "an Edwards key of another curve (Ed448?)")
        }
    }

    /// The 32-byte key from CKA_EC_POINT (DER OCTET STRING 04 20 || point, or the raw
    /// point), else from CKA_PUBLIC_KEY_INFO (an Ed25519 SPKI).
    private static func readPublicKey(_ session: PKCS11Session, _ object: UInt, uri: PKCS11URI) throws
        -> Ed25519PublicKey
    {
        let raw: [UInt8]
        if let point = try session.attribute(object, PKCS11Constant.attributeECPoint), !point.isEmpty {
            raw = try decodeECPoint(point, uri: uri)
        } else if let info = try session.attribute(object, PKCS11Constant.attributePublicKeyInfo), !info.isEmpty {
            guard info.count == spkiPrefix.count + 32, Array(info.prefix(spkiPrefix.count)) == spkiPrefix else {
                throw PKCS11Error.malformedPublicKey(
                    uri: uri.description, detail: "CKA_PUBLIC_KEY_INFO (\(info.count) bytes) is no Ed25519 SPKI")
            }
            raw = Array(info.suffix(32))
        } else {
            throw PKCS11Error.malformedPublicKey(
                uri: uri.description, detail: "the key has neither CKA_EC_POINT nor CKA_PUBLIC_KEY_INFO")
        }
        do { return try Ed25519PublicKey(raw: raw) } catch {
            throw PKCS11Error.malformedPublicKey(uri: uri.description, detail: "\(error)")
        }
    }

    /// CKA_EC_POINT as tokens write it for Edwards keys: PKCS#11 v3.0 says the DER OCTET
    /// STRING of the point; some tokens give the 32 raw bytes.
    static func decodeECPoint(_ point: [UInt8], uri: PKCS11URI) throws -> [UInt8] {
        if point.count == 34, point[0] == 0x04, point[1] == 0x20 { return Array(point.suffix(32)) }
        if point.count == 32 { return point }
        throw PKCS11Error.malformedPublicKey(
            uri: uri.description,
            detail:
                "CKA_EC_POINT of \(point.count) bytes is neither a DER OCTET STRING of 32 bytes nor a raw 32-byte point"
        )
    }
}
