// A PKCS#11 module loaded with dlopen and initialised once per process while in use, with
// its raw calls (the only home of PKCS#11 pointer work besides PKCS11Session.swift).

import CPKCS11
import PinionCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loaded and initialised PKCS#11 module (PKCS#11 v2.40 §5.4, C_GetFunctionList and
/// C_Initialize).
///
/// Handles are shared: opening the same path twice in one process gives handles to one
/// initialised module; C_Finalize runs when the last handle is released, so a module is
/// initialised once however many keys a command uses. Every call into the module is made
/// under one lock per module, which is what a module that cannot do its own locking needs
/// (it is initialised with CKF_OS_LOCKING_OK, and without arguments if it answers
/// CKR_CANT_LOCK). The library stays mapped after the last release: some modules cannot be
/// unloaded safely.
public final class PKCS11Module: @unchecked Sendable {
    /// The module's path as given.
    public let path: String
    private let shared: Shared

    private init(path: String, shared: Shared) {
        self.path = path
        self.shared = shared
    }

    /// The function list and the one lock of a module, shared by all its handles.
    private final class Shared: @unchecked Sendable {
        let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
        let lock = Mutex<Void>(())
        init(functions: UnsafeMutablePointer<CK_FUNCTION_LIST>) { self.functions = functions }
    }

    deinit { PKCS11Module.release(path: path) }

    /// The module Pinion uses: `--pkcs11-module` if given, else the environment variable
    /// `PINION_PKCS11_MODULE`.
    ///
    /// - Parameters:
    ///   - option: the --pkcs11-module value, or `nil`.
    /// - Returns: the path.
    /// - Throws: `PKCS11Error.noModule`.
    public static func path(option: String?) throws -> String {
        // getenv of the one variable: materialising the whole environment (ProcessInfo)
        // would copy PINION_PKCS11_PIN and PINION_PASSPHRASE into Swift strings that are
        // never wiped.
        try path(option: option, environment: { name in getenv(name).map { String(cString: $0) } })
    }

    /// `path(option:)` with the environment lookup replaceable (tests).
    static func path(option: String?, environment: (String) -> String?) throws -> String {
        if let option, !option.isEmpty { return option }
        if let value = environment("PINION_PKCS11_MODULE"), !value.isEmpty { return value }
        throw PKCS11Error.noModule
    }

    /// The module for a key URI: the one `--pkcs11-module` or PINION_PKCS11_MODULE gives,
    /// else the URI's `module-path=` (RFC 7512 §2.3; it must be absolute). When both are
    /// given they must be the same path: a URI naming one module while another signs would
    /// hide which device holds the key.
    ///
    /// - Parameters:
    ///   - option: the `--pkcs11-module` value, if given.
    ///   - uri: the key's URI.
    /// - Throws: `PKCS11Error.noModule`, `.moduleMismatch`, `.relativeModulePath`.
    public static func path(option: String?, uri: PKCS11URI) throws -> String {
        try path(option: option, uri: uri, environment: { name in getenv(name).map { String(cString: $0) } })
    }

    /// `path(option:uri:)` with the environment lookup replaceable (tests).
    static func path(option: String?, uri: PKCS11URI, environment: (String) -> String?) throws -> String {
        if let named = uri.modulePath, !named.hasPrefix("/") {
            throw PKCS11Error.relativeModulePath(uri: uri.description, path: named)
        }
        let given: String
        do { given = try path(option: option, environment: environment) } catch PKCS11Error.noModule {
            guard let named = uri.modulePath else { throw PKCS11Error.noModule }
            return named
        }
        if let named = uri.modulePath, named != given {
            throw PKCS11Error.moduleMismatch(uri: uri.description, named: named, used: given)
        }
        return given
    }

    /// Loads (dlopen, RTLD_NOW | RTLD_LOCAL) and initialises the module, or shares the
    /// handle already open in this process.
    ///
    /// - Parameter path: a file path (it must contain a `/`, so dlopen never searches the
    ///   library path for a bare name).
    /// - Throws: `PKCS11Error.moduleLoad`, `.moduleBroken`, `.call("C_Initialize", ...)`.
    public static func open(path: String) throws -> PKCS11Module {
        try registry.withLock { entries throws -> PKCS11Module in
            if var entry = entries[path] {
                entry.users += 1
                entries[path] = entry
                return PKCS11Module(path: path, shared: entry.shared)
            }
            guard path.contains("/") else {
                throw PKCS11Error.moduleLoad(
                    path: path, detail: "give a path to the module file (for example ./\(path))")
            }
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                let detail = dlerror().map { String(cString: $0) } ?? "dlopen failed"
                throw PKCS11Error.moduleLoad(path: path, detail: detail)
            }
            guard let symbol = dlsym(handle, "C_GetFunctionList") else {
                throw PKCS11Error.moduleBroken(path: path, detail: "no C_GetFunctionList (not a PKCS#11 module)")
            }
            let getFunctionList = unsafeBitCast(symbol, to: CK_C_GetFunctionList.self)
            var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
            let status = getFunctionList(&list)
            guard status == CKR_OK, let list else {
                throw PKCS11Error.moduleBroken(
                    path: path, detail: "C_GetFunctionList returned \(PKCS11ReturnValue(status))")
            }
            let needed: [(String, Bool)] = [
                ("C_Initialize", list.pointee.C_Initialize != nil), ("C_Finalize", list.pointee.C_Finalize != nil),
                ("C_GetSlotList", list.pointee.C_GetSlotList != nil),
                ("C_GetTokenInfo", list.pointee.C_GetTokenInfo != nil),
                ("C_OpenSession", list.pointee.C_OpenSession != nil),
                ("C_CloseSession", list.pointee.C_CloseSession != nil), ("C_Login", list.pointee.C_Login != nil),
                ("C_Logout", list.pointee.C_Logout != nil),
                ("C_FindObjectsInit", list.pointee.C_FindObjectsInit != nil),
                ("C_FindObjects", list.pointee.C_FindObjects != nil),
                ("C_FindObjectsFinal", list.pointee.C_FindObjectsFinal != nil),
                ("C_GetAttributeValue", list.pointee.C_GetAttributeValue != nil),
                ("C_SignInit", list.pointee.C_SignInit != nil), ("C_Sign", list.pointee.C_Sign != nil),
            ]
            if let missing = needed.first(where: { !$0.1 }) {
                throw PKCS11Error.moduleBroken(path: path, detail: "\(missing.0) is NULL in its function list")
            }
            let ownsInitialisation = try initialise(list)
            let shared = Shared(functions: list)
            entries[path] = Entry(shared: shared, users: 1, ownsInitialisation: ownsInitialisation)
            return PKCS11Module(path: path, shared: shared)
        }
    }

    /// C_Initialize with OS locking; `false` when another part of the process had already
    /// initialised the module (then Pinion must not finalise it either).
    private static func initialise(_ list: UnsafeMutablePointer<CK_FUNCTION_LIST>) throws -> Bool {
        guard let initialize = list.pointee.C_Initialize else { return false }
        var arguments = CK_C_INITIALIZE_ARGS()
        arguments.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        var status = withUnsafeMutablePointer(to: &arguments) { initialize(UnsafeMutableRawPointer($0)) }
        if status == CKR_CANT_LOCK { status = initialize(nil) }
        if status == CKR_CRYPTOKI_ALREADY_INITIALIZED { return false }
        guard status == CKR_OK else {
            throw PKCS11Error.call(function: "C_Initialize", value: PKCS11ReturnValue(status))
        }
        return true
    }

    private static func release(path: String) {
        registry.withLock { entries in
            guard var entry = entries[path] else { return }
            entry.users -= 1
            if entry.users > 0 {
                entries[path] = entry
                return
            }
            entries[path] = nil
            if entry.ownsInitialisation, let finalize = entry.shared.functions.pointee.C_Finalize {
                _ = entry.shared.lock.withLock { _ in finalize(nil) }
            }
        }
    }

    private struct Entry {
        let shared: Shared
        var users: Int
        let ownsInitialisation: Bool
    }

    private static let registry = Mutex<[String: Entry]>([:])

    /// Runs one module call under the module's lock and maps its CK_RV.
    ///
    /// - Parameters:
    ///   - name: the function, for messages.
    ///   - body: makes the call; returns `nil` when the function pointer is NULL.
    /// - Throws: `PKCS11Error.deviceRemoved` for a vanished token, `.call` otherwise.
    func check(_ name: String, _ body: (CK_FUNCTION_LIST) -> CK_RV?) throws {
        let status = try rawCall(name, body)
        guard status == CKR_OK else { throw Self.error(name, status) }
    }

    /// Runs one module call under the lock and returns its CK_RV unmapped.
    func rawCall(_ name: String, _ body: (CK_FUNCTION_LIST) -> CK_RV?) throws -> CK_RV {
        let status = shared.lock.withLock { _ in body(shared.functions.pointee) }
        guard let status else { throw PKCS11Error.moduleBroken(path: path, detail: "\(name) is NULL") }
        return status
    }

    static func error(_ name: String, _ status: CK_RV) -> PKCS11Error {
        let value = PKCS11ReturnValue(UInt(status))
        return value.isDeviceGone ? .deviceRemoved(function: name, value: value) : .call(function: name, value: value)
    }
}
