// Obtaining the one passphrase of a command (docs/DESIGN.md §2): --passphrase-file, then
// PINION_PASSPHRASE, then the terminal without echo. The bytes only ever live in SecureBytes.

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why no usable passphrase could be obtained. `source` names where it came from
/// ("passphrase file PATH", "environment variable NAME", "terminal").
public enum PassphraseError: Error, Equatable, CustomStringConvertible {
    /// The passphrase is empty (an empty file, a file holding only a newline, an empty
    /// variable, or Enter/Ctrl-D at the prompt).
    case empty(source: String)
    /// Over `limit` bytes: for a file, the whole file including its newline.
    case tooLong(source: String, limit: Int)
    /// The passphrase holds a NUL byte, which OpenSSL's tools cannot represent.
    case containsNUL(source: String)
    /// The two passphrases typed at the terminal differ.
    case mismatch
    /// No `--passphrase-file`, no environment variable and no terminal.
    case noSource
    /// The operating system refused an operation; `operation` is a verb ("open", "read",
    /// "write to", "configure"), `errno` the C error number.
    case io(path: String, operation: String, errno: Int32)

    /// A one-line message for the user that names the source and what to do.
    public var description: String {
        switch self {
        case .empty(let source):
            return "the passphrase from the \(source) is empty"
        case .tooLong(let source, let limit):
            return "the passphrase from the \(source) is longer than \(limit) bytes"
        case .containsNUL(let source):
            return "the passphrase from the \(source) contains a NUL byte"
        case .mismatch:
            return "the passphrases do not match"
        case .noSource:
            return "no passphrase: use --passphrase-file, PINION_PASSPHRASE or run on a terminal"
        case .io(let path, let operation, let code):
            let text = strerror(code).map { String(cString: $0) } ?? "error \(code)"
            return "cannot \(operation) \(path): \(text)"
        }
    }
}

/// Obtains one passphrase into guarded memory (docs/DESIGN.md §2).
///
/// Sources, first found wins:
/// 1. `--passphrase-file F`: the file's bytes, read with read(2) straight into
///    `SecureBytes`, less one trailing "\n" or "\r\n"; the file may hold at most
///    `maximumLength` bytes (newline included).
/// 2. The environment variable (default `PINION_PASSPHRASE`), copied byte for byte from
///    `getenv` (no `String` is made of it).
/// 3. The controlling terminal `/dev/tty`, echo off; asked twice when `confirm` is set.
///
/// Every source refuses an empty passphrase, one longer than `maximumLength` bytes, and one
/// holding a NUL byte.
public enum Passphrase {
    /// Longest passphrase in bytes (OpenSSL's PEM passphrase buffer, `PEM_BUFSIZE`).
    public static let maximumLength = 1024

    /// Obtains the passphrase from the first available source.
    ///
    /// - Parameters:
    ///   - file: the `--passphrase-file` path, or `nil`.
    ///   - environmentVariable: the variable consulted when `file` is `nil`.
    ///   - confirm: at the terminal, ask twice and require the same answer (for a new key).
    ///     Files and the environment are taken as they are.
    ///   - prompt: the question written to the terminal, for example "Passphrase for root.key: ".
    /// - Returns: the passphrase, 1 ... `maximumLength` bytes.
    /// - Throws: `PassphraseError` (`.noSource` when there is no terminal either);
    ///   `SodiumError` if guarded memory cannot be allocated.
    public static func obtain(
        file: String?, environmentVariable: String = "PINION_PASSPHRASE", confirm: Bool, prompt: String
    ) throws -> SecureBytes {
        try obtain(
            file: file, environmentVariable: environmentVariable, confirm: confirm, prompt: prompt,
            terminalPath: "/dev/tty", environment: { getenv($0) })
    }

    /// `obtain` with the terminal device and the environment lookup replaceable (tests use a
    /// pseudo-terminal and a private table instead of the process's shared ones).
    static func obtain(
        file: String?, environmentVariable: String, confirm: Bool, prompt: String,
        terminalPath: String, environment: (String) -> UnsafeMutablePointer<CChar>?
    ) throws -> SecureBytes {
        if let file {
            return try fromFile(path: file)
        }
        if let value = environment(environmentVariable) {
            return try fromCString(value, source: "environment variable \(environmentVariable)")
        }
        return try fromTerminal(path: terminalPath, confirm: confirm, prompt: prompt)
    }

    // MARK: - File

    private static func fromFile(path: String) throws -> SecureBytes {
        let source = "passphrase file \(path)"
        let buffer: SecureBytes
        do {
            buffer = try SecureBytes.readFile(path: path, limit: maximumLength)
        } catch let error as SecureFileReadError {
            switch error {
            case .open(let code): throw PassphraseError.io(path: path, operation: "open", errno: code)
            case .read(let code): throw PassphraseError.io(path: path, operation: "read", errno: code)
            case .tooLarge: throw PassphraseError.tooLong(source: source, limit: maximumLength)
            }
        }
        let total = buffer.count
        let newline = buffer.withUnsafeBytes { bytes -> Int in
            guard total >= 1, bytes[total - 1] == 0x0A else { return 0 }
            return total >= 2 && bytes[total - 2] == 0x0D ? 2 : 1
        }
        buffer.truncate(to: total - newline)
        try validate(buffer, source: source)
        return buffer
    }

    // MARK: - Environment

    private static func fromCString(_ value: UnsafePointer<CChar>, source: String) throws
        -> SecureBytes
    {
        let length = strlen(value)
        guard length > 0 else { throw PassphraseError.empty(source: source) }
        guard length <= maximumLength else {
            throw PassphraseError.tooLong(source: source, limit: maximumLength)
        }
        let buffer = try SecureBytes(capacity: length)
        buffer.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            _ = memcpy(base, value, length)
        }
        return buffer
    }

    // MARK: - Terminal

    private static func fromTerminal(path: String, confirm: Bool, prompt: String) throws
        -> SecureBytes
    {
        let descriptor = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        // No controlling terminal (ENXIO), none at all, or not allowed: no source.
        guard descriptor >= 0 else { throw PassphraseError.noSource }
        defer { _ = close(descriptor) }
        var original = termios()
        guard tcgetattr(descriptor, &original) == 0 else { throw PassphraseError.noSource }
        return try terminalLock.withLock { _ throws -> SecureBytes in
            try TerminalSession.withEchoOff(descriptor: descriptor, original: original, path: path) {
                let first = try askLine(descriptor: descriptor, path: path, prompt: prompt)
                try validate(first, source: "terminal")
                guard confirm else { return first }
                let second = try askLine(
                    descriptor: descriptor, path: path, prompt: "Enter the same passphrase again: ")
                guard first.constantTimeEquals(second) else { throw PassphraseError.mismatch }
                return first
            }
        }
    }

    /// Writes `prompt`, reads one line with echo off (already set by the caller), then
    /// writes the newline the user's Enter did not echo.
    private static func askLine(descriptor: Int32, path: String, prompt: String) throws -> SecureBytes {
        try writeAll(Array(prompt.utf8), to: descriptor, path: path)
        // Reading one byte at a time leaves nothing of the line in any buffer but this one.
        // The last slot takes every byte past the limit, so the capacity never overflows.
        let buffer = try SecureBytes(capacity: maximumLength + 1)
        var count = 0
        try buffer.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            while true {
                let slot = min(count, maximumLength)
                let result = read(descriptor, base + slot, 1)
                if result < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw PassphraseError.io(path: path, operation: "read", errno: code)
                }
                if result == 0 || base[slot] == 0x0A || base[slot] == 0x0D { break }
                count += 1
            }
        }
        // Wipes the line end and anything past the limit.
        buffer.truncate(to: min(count, maximumLength))
        try writeAll(Array("\n".utf8), to: descriptor, path: path)
        guard count <= maximumLength else {
            throw PassphraseError.tooLong(source: "terminal", limit: maximumLength)
        }
        return buffer
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw PassphraseError.io(path: path, operation: "write to", errno: code)
            }
            written += count
        }
    }

    // MARK: - Checks

    private static func validate(_ passphrase: SecureBytes, source: String) throws {
        guard passphrase.count > 0 else { throw PassphraseError.empty(source: source) }
        guard passphrase.count <= maximumLength else {
            throw PassphraseError.tooLong(source: source, limit: maximumLength)
        }
        let hasNUL = passphrase.withUnsafeBytes { $0.contains(0) }
        guard !hasNUL else { throw PassphraseError.containsNUL(source: source) }
    }
}

/// One terminal prompt at a time: the signal handler below has a single restore slot.
private let terminalLock = Mutex<Void>(())

/// What the signal handler needs to put the terminal back. Signal handlers cannot capture
/// context, so this is the one piece of process-wide mutable state: written only under
/// `terminalLock`, before the handlers are installed and after they are removed, and read
/// through a raw pointer (no exclusivity bookkeeping inside a handler).
private struct TerminalRestoreSlot {
    var descriptor: Int32
    var attributes: termios
}

nonisolated(unsafe) private let terminalRestoreSlot: UnsafeMutablePointer<TerminalRestoreSlot> = {
    let slot = UnsafeMutablePointer<TerminalRestoreSlot>.allocate(capacity: 1)
    slot.initialize(to: TerminalRestoreSlot(descriptor: -1, attributes: termios()))
    return slot
}()

/// Echo off for the duration of a closure, restored on every exit: normal return, thrown
/// error, and the terminating signals SIGINT, SIGTERM, SIGHUP and SIGQUIT (when their
/// disposition is the default; an ignored signal or an application's handler is left
/// alone). A job-control stop (Ctrl-Z) is not intercepted: the shell restores its own
/// terminal modes while the job is stopped.
private enum TerminalSession {
    private static let terminatingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func withEchoOff<R>(
        descriptor: Int32, original: termios, path: String, _ body: () throws -> R
    ) throws -> R {
        terminalRestoreSlot.pointee = TerminalRestoreSlot(descriptor: descriptor, attributes: original)
        // Touch the slot before any handler can run, so the handler never initialises it.
        let installed = installHandlers()
        defer {
            // Terminal first: a signal arriving in between finds the handler still in place.
            var restored = original
            _ = tcsetattr(descriptor, TCSAFLUSH, &restored)
            removeHandlers(installed)
            terminalRestoreSlot.pointee.descriptor = -1
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        // TCSAFLUSH also drops anything typed before the prompt appeared.
        guard tcsetattr(descriptor, TCSAFLUSH, &silent) == 0 else {
            throw PassphraseError.io(path: path, operation: "configure", errno: errno)
        }
        return try body()
    }

    private static func installHandlers() -> [Int32] {
        var installed: [Int32] = []
        for signalNumber in terminatingSignals {
            var current = sigaction()
            guard sigaction(signalNumber, nil, &current) == 0,
                current.__sigaction_handler.sa_handler == nil  // SIG_DFL
            else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signalNumber in
                // Only async-signal-safe calls: tcsetattr, then the default action via raise
                // (SA_RESETHAND already restored it; the signal is delivered on return).
                let slot = terminalRestoreSlot
                if slot.pointee.descriptor >= 0 {
                    _ = tcsetattr(slot.pointee.descriptor, TCSANOW, &slot.pointee.attributes)
                }
                _ = raise(signalNumber)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(bitPattern: UInt32(truncatingIfNeeded: SA_RESETHAND))
            if sigaction(signalNumber, &action, nil) == 0 { installed.append(signalNumber) }
        }
        return installed
    }

    private static func removeHandlers(_ installed: [Int32]) {
        for signalNumber in installed {
            var action = sigaction()
            sigemptyset(&action.sa_mask)
            _ = sigaction(signalNumber, &action, nil)
        }
    }
}
