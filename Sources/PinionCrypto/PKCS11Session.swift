// Tokens, sessions, objects and the sign and key-pair calls of a PKCS#11 module: the
// pointer work behind PKCS11Key.swift (PKCS#11 v2.40 §5.5-5.13, v3.0 for CKM_EDDSA).

import CPKCS11
import PinionCore

/// One token in a slot, as C_GetTokenInfo describes it (blank-padded fields trimmed).
public struct PKCS11TokenInfo: Sendable, Equatable {
    /// The slot id.
    public let slot: UInt
    /// CK_TOKEN_INFO.label.
    public let label: String
    /// CK_TOKEN_INFO.manufacturerID.
    public let manufacturer: String
    /// CK_TOKEN_INFO.model.
    public let model: String
    /// CK_TOKEN_INFO.serialNumber.
    public let serial: String
    /// CK_TOKEN_INFO.flags.
    public let flags: UInt

    /// The PIN retry flags.
    public var pinState: PKCS11PINState {
        PKCS11PINState(
            countLow: flags & UInt(CKF_USER_PIN_COUNT_LOW) != 0, finalTry: flags & UInt(CKF_USER_PIN_FINAL_TRY) != 0,
            locked: flags & UInt(CKF_USER_PIN_LOCKED) != 0)
    }

    /// Whether keys need C_Login (CKF_LOGIN_REQUIRED).
    public var loginRequired: Bool { flags & UInt(CKF_LOGIN_REQUIRED) != 0 }
    /// Whether the PIN is entered on the device itself (CKF_PROTECTED_AUTHENTICATION_PATH).
    public var protectedAuthenticationPath: Bool { flags & UInt(CKF_PROTECTED_AUTHENTICATION_PATH) != 0 }

    /// `label (serial S)`, for messages.
    public var displayName: String { "\"\(label)\" (serial \(serial))" }

    /// Whether every token attribute the URI gives equals this token's (RFC 7512 §2.3).
    public func matches(_ uri: PKCS11URI) -> Bool {
        (uri.token.map { $0 == label } ?? true) && (uri.manufacturer.map { $0 == manufacturer } ?? true)
            && (uri.model.map { $0 == model } ?? true) && (uri.serial.map { $0 == serial } ?? true)
            && (uri.slotID.map { UInt($0) == slot } ?? true)
    }

    /// The token part of a URI naming this token.
    public var uri: PKCS11URI {
        var uri = PKCS11URI()
        uri.model = model
        uri.manufacturer = manufacturer
        uri.serial = serial
        uri.token = label
        return uri
    }
}

/// Attribute and object-class numbers Pinion uses, as Swift values.
enum PKCS11Constant {
    static let classPrivateKey = UInt(CKO_PRIVATE_KEY)
    static let classPublicKey = UInt(CKO_PUBLIC_KEY)
    static let keyTypeEdwards = UInt(CKK_EC_EDWARDS)
    static let keyTypeEC = UInt(CKK_EC)
    static let keyTypeRSA = UInt(CKK_RSA)
    static let attributeClass = UInt(CKA_CLASS)
    static let attributeKeyType = UInt(CKA_KEY_TYPE)
    static let attributeLabel = UInt(CKA_LABEL)
    static let attributeID = UInt(CKA_ID)
    static let attributeECParams = UInt(CKA_EC_PARAMS)
    static let attributeECPoint = UInt(CKA_EC_POINT)
    static let attributePublicKeyInfo = UInt(CKA_PUBLIC_KEY_INFO)
    /// Largest attribute value read from a token, in bytes (a public key is far smaller).
    static let maximumAttributeLength = 4096
}

/// One attribute value of a template: its type and bytes.
struct PKCS11Attribute {
    let type: UInt
    let value: [UInt8]

    static func bool(_ type: UInt, _ value: Bool) -> PKCS11Attribute { .init(type: type, value: [value ? 1 : 0]) }
    static func ulong(_ type: UInt, _ value: UInt) -> PKCS11Attribute {
        .init(type: type, value: withUnsafeBytes(of: CK_ULONG(value)) { Array($0) })
    }
    static func bytes(_ type: UInt, _ value: [UInt8]) -> PKCS11Attribute { .init(type: type, value: value) }
}

/// Builds a CK_ATTRIBUTE array over one contiguous copy of the values, valid only inside
/// `body`.
private func withTemplate<R>(
    _ attributes: [PKCS11Attribute], _ body: (UnsafeMutablePointer<CK_ATTRIBUTE>?, CK_ULONG) throws -> R
) rethrows -> R {
    let total = attributes.reduce(0) { $0 + $1.value.count }
    let storage = UnsafeMutableRawPointer.allocate(byteCount: max(total, 1), alignment: 8)
    defer { storage.deallocate() }
    let array = UnsafeMutablePointer<CK_ATTRIBUTE>.allocate(capacity: max(attributes.count, 1))
    defer { array.deallocate() }
    var offset = 0
    for (index, attribute) in attributes.enumerated() {
        let target = storage + offset
        attribute.value.withUnsafeBytes { source in
            if let base = source.baseAddress { target.copyMemory(from: base, byteCount: source.count) }
        }
        array[index] = CK_ATTRIBUTE(
            type: CK_ATTRIBUTE_TYPE(attribute.type), pValue: target, ulValueLen: CK_ULONG(attribute.value.count))
        offset += attribute.value.count
    }
    return try body(attributes.isEmpty ? nil : array, CK_ULONG(attributes.count))
}

private func trimmedField<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { raw in
        var bytes = Array(raw)
        while let last = bytes.last, last == 0x20 || last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension PKCS11Module {
    /// The initialised tokens present (C_GetSlotList with tokenPresent, then
    /// C_GetTokenInfo; a token without CKF_TOKEN_INITIALIZED holds no keys and is skipped).
    ///
    /// - Throws: `PKCS11Error`.
    public func tokens() throws -> [PKCS11TokenInfo] {
        var count: CK_ULONG = 0
        try check("C_GetSlotList") { $0.C_GetSlotList?(CK_BBOOL(CK_TRUE), nil, &count) }
        guard count <= 1024 else { throw PKCS11Error.badLength(function: "C_GetSlotList", detail: "\(count) slots") }
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        var filled = count
        try check("C_GetSlotList") { list in
            slots.withUnsafeMutableBufferPointer { list.C_GetSlotList?(CK_BBOOL(CK_TRUE), $0.baseAddress, &filled) }
        }
        guard filled <= count else {
            throw PKCS11Error.badLength(function: "C_GetSlotList", detail: "\(filled) slots after announcing \(count)")
        }
        return try slots.prefix(Int(filled)).map { try tokenInfo(slot: UInt($0)) }.filter {
            $0.flags & UInt(CKF_TOKEN_INITIALIZED) != 0
        }
    }

    /// C_GetTokenInfo of one slot.
    func tokenInfo(slot: UInt) throws -> PKCS11TokenInfo {
        var info = CK_TOKEN_INFO()
        try check("C_GetTokenInfo") { $0.C_GetTokenInfo?(CK_SLOT_ID(slot), &info) }
        return PKCS11TokenInfo(
            slot: slot, label: trimmedField(info.label), manufacturer: trimmedField(info.manufacturerID),
            model: trimmedField(info.model), serial: trimmedField(info.serialNumber), flags: UInt(info.flags))
    }
}

/// An open session with one token (C_OpenSession), closed when released.
final class PKCS11Session {
    let module: PKCS11Module
    let token: PKCS11TokenInfo
    private let handle: CK_SESSION_HANDLE
    private var loggedIn = false

    init(module: PKCS11Module, token: PKCS11TokenInfo, readWrite: Bool) throws {
        self.module = module
        self.token = token
        var session: CK_SESSION_HANDLE = 0
        var flags = CK_FLAGS(CKF_SERIAL_SESSION)
        if readWrite { flags |= CK_FLAGS(CKF_RW_SESSION) }
        try module.check("C_OpenSession") { $0.C_OpenSession?(CK_SLOT_ID(token.slot), flags, nil, nil, &session) }
        handle = session
    }

    deinit {
        let handle = handle
        if loggedIn { _ = try? module.rawCall("C_Logout") { $0.C_Logout?(handle) } }
        _ = try? module.rawCall("C_CloseSession") { $0.C_CloseSession?(handle) }
    }

    /// C_Login as the user. `pin` nil means the PIN is entered on the device (protected
    /// authentication path). A wrong PIN is reported with the flags read right after; it is
    /// never retried.
    func login(pin: SecureBytes?) throws {
        let handle = handle
        let status: CK_RV
        if let pin {
            status = try pin.withUnsafeBytes { bytes in
                try module.rawCall("C_Login") { list in
                    let base = bytes.baseAddress.map {
                        UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self))
                    }
                    return list.C_Login?(handle, CK_USER_TYPE(CKU_USER), base, CK_ULONG(bytes.count))
                }
            }
        } else {
            status = try module.rawCall("C_Login") { $0.C_Login?(handle, CK_USER_TYPE(CKU_USER), nil, 0) }
        }
        switch status {
        case CK_RV(CKR_OK): loggedIn = true
        case CK_RV(CKR_USER_ALREADY_LOGGED_IN): break
        case CK_RV(CKR_PIN_INCORRECT), CK_RV(CKR_PIN_LEN_RANGE), CK_RV(CKR_PIN_INVALID):
            let after = (try? module.tokenInfo(slot: token.slot)) ?? token
            if after.pinState.locked { throw PKCS11Error.pinLocked(token: token.displayName) }
            throw PKCS11Error.pinIncorrect(token: token.displayName, state: after.pinState)
        case CK_RV(CKR_PIN_LOCKED): throw PKCS11Error.pinLocked(token: token.displayName)
        default: throw PKCS11Module.error("C_Login", status)
        }
    }

    /// Object handles matching the template (at most `limit`).
    func findObjects(_ template: [PKCS11Attribute], limit: Int = 16) throws -> [UInt] {
        let handle = handle
        try withTemplate(template) { attributes, count in
            try module.check("C_FindObjectsInit") { $0.C_FindObjectsInit?(handle, attributes, count) }
        }
        defer { _ = try? module.rawCall("C_FindObjectsFinal") { $0.C_FindObjectsFinal?(handle) } }
        var found = [CK_OBJECT_HANDLE](repeating: 0, count: limit)
        var count: CK_ULONG = 0
        try module.check("C_FindObjects") { list in
            found.withUnsafeMutableBufferPointer {
                list.C_FindObjects?(handle, $0.baseAddress, CK_ULONG(limit), &count)
            }
        }
        guard count <= CK_ULONG(limit) else {
            throw PKCS11Error.badLength(function: "C_FindObjects", detail: "\(count) objects for \(limit) slots")
        }
        return found.prefix(Int(count)).map { UInt($0) }
    }

    /// One attribute's bytes; `nil` when the object does not have it (or it is sensitive).
    func attribute(_ object: UInt, _ type: UInt) throws -> [UInt8]? {
        let handle = handle
        var query = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(type), pValue: nil, ulValueLen: 0)
        let status = try module.rawCall("C_GetAttributeValue") {
            $0.C_GetAttributeValue?(handle, CK_OBJECT_HANDLE(object), &query, 1)
        }
        if status == CK_RV(CKR_ATTRIBUTE_TYPE_INVALID) || status == CK_RV(CKR_ATTRIBUTE_SENSITIVE) { return nil }
        guard status == CK_RV(CKR_OK) else { throw PKCS11Module.error("C_GetAttributeValue", status) }
        if query.ulValueLen == CK_ULONG(bitPattern: -1) { return nil }  // CK_UNAVAILABLE_INFORMATION
        guard query.ulValueLen <= CK_ULONG(PKCS11Constant.maximumAttributeLength) else {
            throw PKCS11Error.badLength(
                function: "C_GetAttributeValue",
                detail: "attribute 0x\(String(type, radix: 16)) of \(query.ulValueLen) bytes")
        }
        let capacity = Int(query.ulValueLen)
        var value = [UInt8](repeating: 0, count: capacity)
        var length: CK_ULONG = CK_ULONG(capacity)
        try value.withUnsafeMutableBytes { buffer in
            var read = CK_ATTRIBUTE(
                type: CK_ATTRIBUTE_TYPE(type), pValue: buffer.baseAddress, ulValueLen: CK_ULONG(capacity))
            try module.check("C_GetAttributeValue") {
                $0.C_GetAttributeValue?(handle, CK_OBJECT_HANDLE(object), &read, 1)
            }
            length = read.ulValueLen
        }
        guard length <= CK_ULONG(capacity) else {
            throw PKCS11Error.badLength(
                function: "C_GetAttributeValue", detail: "\(length) bytes written into a \(capacity)-byte buffer")
        }
        return Array(value.prefix(Int(length)))
    }

    /// A CK_ULONG attribute; `nil` when absent or not CK_ULONG-sized.
    func ulongAttribute(_ object: UInt, _ type: UInt) throws -> UInt? {
        guard let bytes = try attribute(object, type), bytes.count == MemoryLayout<CK_ULONG>.size else { return nil }
        return UInt(bytes.withUnsafeBytes { $0.loadUnaligned(as: CK_ULONG.self) })
    }

    /// C_SignInit(CKM_EDDSA, no parameters: PureEdDSA Ed25519) then C_Sign into a 64-byte
    /// buffer. Returns what the token wrote; the caller checks the length and verifies it.
    func signEdDSA(key: UInt, message: [UInt8]) throws -> [UInt8] {
        let handle = handle
        var mechanism = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_EDDSA), pParameter: nil, ulParameterLen: 0)
        try module.check("C_SignInit") { $0.C_SignInit?(handle, &mechanism, CK_OBJECT_HANDLE(key)) }
        var data = message
        var signature = [UInt8](repeating: 0, count: 64)
        var length = CK_ULONG(64)
        let status = try data.withUnsafeMutableBufferPointer { input in
            try signature.withUnsafeMutableBufferPointer { output in
                try module.rawCall("C_Sign") {
                    $0.C_Sign?(handle, input.baseAddress, CK_ULONG(input.count), output.baseAddress, &length)
                }
            }
        }
        if status == CK_RV(CKR_DATA_LEN_RANGE) {
            throw PKCS11Error.tokenRefusedMessageSize(uri: "", size: message.count)
        }
        if status == CK_RV(CKR_BUFFER_TOO_SMALL) {
            throw PKCS11Error.badLength(function: "C_Sign", detail: "a signature longer than 64 bytes (\(length))")
        }
        guard status == CK_RV(CKR_OK) else { throw PKCS11Module.error("C_Sign", status) }
        guard length <= 64 else { throw PKCS11Error.badLength(function: "C_Sign", detail: "\(length) bytes into 64") }
        return Array(signature.prefix(Int(length)))
    }

    /// C_GenerateKeyPair(CKM_EC_EDWARDS_KEY_PAIR_GEN) with the two templates; returns
    /// (public key handle, private key handle).
    func generateKeyPair(public publicTemplate: [PKCS11Attribute], private privateTemplate: [PKCS11Attribute])
        throws -> (UInt, UInt)
    {
        let handle = handle
        var mechanism = CK_MECHANISM(
            mechanism: CK_MECHANISM_TYPE(CKM_EC_EDWARDS_KEY_PAIR_GEN), pParameter: nil, ulParameterLen: 0)
        var publicKey: CK_OBJECT_HANDLE = 0
        var privateKey: CK_OBJECT_HANDLE = 0
        try withTemplate(publicTemplate) { publicAttributes, publicCount in
            try withTemplate(privateTemplate) { privateAttributes, privateCount in
                try module.check("C_GenerateKeyPair") {
                    $0.C_GenerateKeyPair?(
                        handle, &mechanism, publicAttributes, publicCount, privateAttributes, privateCount, &publicKey,
                        &privateKey)
                }
            }
        }
        return (UInt(publicKey), UInt(privateKey))
    }
}
