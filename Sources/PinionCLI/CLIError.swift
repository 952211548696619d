// The CLI's error type and the one mapping of error categories to exit codes (docs/DESIGN.md §11).

import PinionCore

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

    /// The exit code of an error category: the only place a category becomes a code
    /// (refusal 1, usage 2, io 3). `pinion status`'s 4 (warning) is its own, never a
    /// category's.
    public static func of(_ category: PinionErrorCategory) -> Int32 {
        switch category {
        case .refusal: return failure
        case .usage: return usage
        case .io: return io
        }
    }
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

    /// An error of `category`, with the category's exit code.
    public init(category: PinionErrorCategory, _ message: String) {
        self.init(exitCode: ExitCode.of(category), message)
    }

    static func usage(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.usage, message) }
    static func failure(_ message: String) -> CLIError {
        CLIError(exitCode: ExitCode.failure, message)
    }
    static func io(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.io, message) }

    public var description: String { message }

    /// Maps any error a command can meet to its exit code and message: a `CLIError` as it
    /// is, a library error by its `PinionErrorCategory` (with `file` named first in format
    /// and trust messages), anything else as a failure (1).
    public static func from(_ error: any Error, file: String? = nil) -> CLIError {
        switch error {
        case let error as CLIError:
            return error
        case let error as FormatError:
            return CLIError(category: error.category, (file.map { error.inFile($0) } ?? error).description)
        case let error as TrustError:
            if case .format(let format) = error {
                return CLIError(category: error.category, (file.map { format.inFile($0) } ?? format).description)
            }
            return CLIError(category: error.category, file.map { "\($0): \(error)" } ?? error.description)
        case let error as any CategorizedError:
            return CLIError(category: error.category, error.description)
        default:
            return .failure(String(describing: error))
        }
    }
}
