// What `pinion client refresh|connect` add around the SDK: `--at` rehearsals that never
// persist, a state directory that must exist for connect, readable CA files, timeouts.

import Foundation
import PinionCore
import PinionLinux
import PinionSystem

/// A client's state storage for a rehearsal at another time (`--at`): reads come from the
/// state directory when it exists, writes and removals stay in memory and are dropped at
/// exit. A rehearsal in the future would otherwise move lastKnownTime forward and expire
/// everything at the next real refresh.
final class RehearsalStorage: StateStorage, @unchecked Sendable {
    private let base: DirectoryStorage?
    private let lock = NSLock()
    private var written: [String: [UInt8]?] = [:]

    /// - Parameter directory: the state directory; it is only read, and is not created
    ///   when missing (the rehearsal then starts from no state).
    /// - Throws: `StorageError` when the directory exists but cannot be opened.
    init(directory: String) throws(StorageError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            base = try DirectoryStorage(path: directory)
        } else {
            base = nil
        }
    }

    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        if let overlay = lock.withLock({ written[name] }) { return overlay }
        return try base?.read(name, maxBytes: maxBytes)
    }

    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        lock.withLock { written[name] = .some(bytes) }
    }

    func remove(_ name: String) throws(StorageError) {
        lock.withLock { written[name] = .some(nil) }
    }
}

extension ClientSetup {
    /// `--at TIME`, if given.
    static func rehearsalTime(_ arguments: ParsedArguments) throws(CLIError) -> Timestamp? {
        try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
    }

    /// Refuses a `--state DIR` that does not exist: only `client refresh` creates one, so
    /// that a mistyped directory never reads as "no pins" and passes every check.
    static func requireExistingState(_ arguments: ParsedArguments) throws(CLIError) {
        let directory = try arguments.required("state")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw .usage(
                "--state \(directory): no such directory; run pinion client refresh first (only refresh creates a state directory)"
            )
        }
        guard isDirectory.boolValue else { throw .usage("--state \(directory): not a directory") }
    }

    /// Reads `--cafile` once, so that a missing or unreadable CA file is an I/O error about
    /// that file, not a network failure of the first document fetched.
    static func checkCAFile(_ arguments: ParsedArguments) throws(CLIError) {
        guard let path = arguments.value("cafile") else { return }
        do { _ = try Files.read(path, limit: maxInputBytes) } catch {
            throw CLIError(exitCode: error.exitCode, "--cafile (the CA file): \(error.message)")
        }
    }

    /// A timeout flag: seconds as a number (`2.5`) or a duration (`30s`, `2m`), in (0, 600].
    static func timeoutSeconds(_ text: String, option: String) throws(CLIError) -> Double {
        let seconds: Double
        if let value = Double(text), value.isFinite {
            seconds = value
        } else if let value = try? DurationText.seconds(text, option: option) {
            seconds = Double(value)
        } else {
            throw .usage("--\(option) must be seconds (10, 2.5) or a duration (30s, 2m) in (0, 600], got \"\(text)\"")
        }
        guard seconds > 0, seconds <= 600 else {
            throw .usage("--\(option) must be seconds (10, 2.5) or a duration (30s, 2m) in (0, 600], got \"\(text)\"")
        }
        return seconds
    }
}

extension ClientSetup {
    /// The client's clock: fixed at `at` for a rehearsal, else the command's.
    static func clock(at: Timestamp?, context: CLIContext) -> @Sendable () -> Timestamp {
        guard let at else { return context.now }
        return { at }
    }
}
