// The CLI's error type and the mapping of library errors to exit codes (docs/DESIGN.md §11).

import PinionCore
import PinionCrypto
import PinionSystem

/// Exit codes of every `pinion` command (docs/DESIGN.md §11).
public enum ExitCode {
    /// Success.
    public static let success: Int32 = 0
    /// Verification or policy failure: the thing checked is bad.
    public static let failure: Int32 = 1
    /// Usage error: bad flags or arguments, the wrong kind of file.
    public static let usage: Int32 = 2
    /// I/O or network error.
    public static let io: Int32 = 3
}

/// A failure a command reports: the exit code and one message naming the file, the field
/// and the rule.
public struct CLIError: Error, Equatable, CustomStringConvertible {
    public let exitCode: Int32
    public let message: String

    public init(exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    static func usage(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.usage, message) }
    static func failure(_ message: String) -> CLIError {
        CLIError(exitCode: ExitCode.failure, message)
    }
    static func io(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.io, message) }

    public var description: String { message }

    /// Maps any error a command can meet to its exit code and message.
    static func from(_ error: any Error, file: String? = nil) -> CLIError {
        switch error {
        case let error as CLIError:
            return error
        case let error as FormatError:
            return .failure((file.map { error.inFile($0) } ?? error).description)
        case let error as TrustError:
            if case .wrongPayloadKind = error {
                return .usage(file.map { "\($0): \(error)" } ?? error.description)
            }
            if case .format(let format) = error {
                return .failure((file.map { format.inFile($0) } ?? format).description)
            }
            return .failure(file.map { "\($0): \(error)" } ?? error.description)
        case let error as KeyFileError:
            if error.isIOError { return .io(error.description) }
            if error.isUsageError { return .usage(error.description) }
            return .failure(error.description)
        case let error as PassphraseError:
            // Empty, too long, mismatched or missing passphrases are the user's input.
            if case .io = error { return .io(error.description) }
            return .usage(error.description)
        case let error as SPKIError:
            return error.isIOError ? .io(error.description) : .failure(error.description)
        case let error as TLSProbeError:
            switch error {
            case .invalidHost, .invalidServerName, .invalidTimeout: return .usage(error.description)
            default: return error.isIOError ? .io(error.description) : .failure(error.description)
            }
        default:
            return .failure(String(describing: error))
        }
    }
}
