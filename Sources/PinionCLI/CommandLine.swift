// The `pinion` command dispatcher: finds the command, parses its flags, maps errors to
// exit codes and messages (docs/DESIGN.md §11).

import Foundation
import PinionCore
import PinionCrypto

/// Where a command writes and what it may ask of its environment. Tests pass closures
/// that capture output; the executable passes standard output and standard error.
public struct CLIContext: Sendable {
    /// Writes to standard output.
    public let out: @Sendable (String) -> Void
    /// Writes to standard error.
    public let err: @Sendable (String) -> Void
    /// The wall clock, read once per command for defaults such as `issuedAt`.
    public let now: @Sendable () -> Timestamp

    public init(
        out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }
    ) {
        self.out = out
        self.err = err
        self.now = now
    }

    /// Reports whether any write failed (a closed pipe, a full disk); the command then
    /// exits with 3 (I/O error) instead of claiming success.
    public var writeFailed: @Sendable () -> Bool = { false }

    /// Standard output and standard error of this process. Write errors never trap
    /// (FileHandle.write(_:) would); they are remembered and turn the exit code into 3.
    public static func standardStreams() -> CLIContext {
        let failure = WriteFailure()
        var context = CLIContext(
            out: { text in
                do { try FileHandle.standardOutput.write(contentsOf: Data(text.utf8)) } catch { failure.set() }
            },
            err: { text in
                do { try FileHandle.standardError.write(contentsOf: Data(text.utf8)) } catch { failure.set() }
            })
        context.writeFailed = { failure.get() }
        return context
    }

    func warn(_ message: String) { err("pinion: warning: \(TerminalText.escape(message))\n") }
    /// Writes `line` and a newline; each line of it escaped (`TerminalText.escapeLines`),
    /// since what commands print carries names and values from files and servers.
    func print(_ line: String) { out(TerminalText.escapeLines(line) + "\n") }
}

/// One `pinion` command.
protocol Command {
    /// The words that name it, e.g. `["manifest", "init"]`.
    static var path: [String] { get }
    /// One line for `pinion --help`.
    static var summary: String { get }
    /// The full `--help` text (usage line, description, options).
    static var help: String { get }
    static var options: [OptionSpec] { get }
    static func run(_ arguments: ParsedArguments, context: CLIContext) throws
}

/// Entry point of the `pinion` command line.
public enum PinionCommandLine {
    /// The version this build reports.
    public static let version = "0.1.0"

    static var commands: [any Command.Type] {
        [
            KeygenCommand.self, KeyIDCommand.self, KeyListCommand.self, NoteVkeyCommand.self, SPKICommand.self,
            RootInitCommand.self,
            RootRotateCommand.self,
            ManifestInitCommand.self, ManifestSetDomainCommand.self, ManifestRemoveDomainCommand.self,
            ManifestRevokePinCommand.self, ManifestShowCommand.self, SignCommand.self, VerifyCommand.self,
            PublishCommand.self, PlanCommand.self, LogRefreshCommand.self, ServeCommand.self, WitnessCommand.self,
            WitnessCosignCommand.self, ClientRefreshCommand.self, ClientConnectCommand.self,
            AuditCommand.self, AdoptionCommand.self, StatusCommand.self, DiffCommand.self, ReportsCommand.self,
            ImportCommand.self, ExportCommand.self, LintCommand.self, CheckHostCommand.self,
        ]
    }

    /// Runs one command line (without the program name).
    ///
    /// - Returns: the exit code: 0 success, 1 verification or policy failure, 2 usage
    ///   error, 3 I/O or network error.
    public static func run(_ arguments: [String], context: CLIContext = .standardStreams()) -> Int32 {
        if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            context.out(overview)
            return arguments.isEmpty ? ExitCode.usage : ExitCode.success
        }
        if arguments == ["--version"] {
            context.print("pinion \(version)")
            return ExitCode.success
        }
        var words = arguments
        if words.first == "help" { words = Array(words.dropFirst()) + ["--help"] }
        let match = commands.filter { words.starts(with: $0.path) }.max(by: {
            $0.path.count < $1.path.count
        })
        guard let command = match else {
            let group = commands.filter { $0.path.first == words.first && $0.path.count > 1 }
            if !group.isEmpty {
                context.err("pinion: error: \(words.first ?? "") needs a subcommand:\n")
                for member in group {
                    context.err("  pinion \(member.path.joined(separator: " "))  \(member.summary)\n")
                }
                return ExitCode.usage
            }
            context.err(
                "pinion: error: unknown command \"\(TerminalText.escape(words.first ?? ""))\"; see pinion --help\n")
            return ExitCode.usage
        }
        do {
            let parsed = try ParsedArguments(
                Array(words.dropFirst(command.path.count)), specs: command.options)
            if parsed.helpRequested {
                context.out(command.help)
                return ExitCode.success
            }
            try command.run(parsed, context: context)
            return context.writeFailed() ? ExitCode.io : ExitCode.success
        } catch {
            let failure = CLIError.from(error)
            // `pinion status` exits 4 for a warning (docs/DESIGN.md §11): not an error.
            let label = failure.exitCode == ExitCode.warning ? "warning" : "error"
            context.err("pinion: \(label): \(TerminalText.escape(failure.message))\n")
            if failure.exitCode == ExitCode.usage {
                context.err("see: pinion \(command.path.joined(separator: " ")) --help\n")
            }
            return failure.exitCode
        }
    }

    static var overview: String {
        var text = """
            pinion \(version): signed, versioned, expiring TLS pin manifests.

            usage: pinion COMMAND [OPTIONS]

            commands:

            """
        for command in commands {
            let name = command.path.joined(separator: " ")
            text +=
                "  " + name + String(repeating: " ", count: max(2, 24 - name.count)) + command.summary
                + "\n"
        }
        text += """

            pinion COMMAND --help shows the options of one command.
            Exit codes: 0 success, 1 verification or policy failure, 2 usage error, 3 I/O or network error
            (pinion status adds 4: warning).

            """
        return text
    }
}

/// A flag set by any failed write to standard output or error.
final class WriteFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var failed = false

    func set() { lock.withLock { failed = true } }
    func get() -> Bool { lock.withLock { failed } }
}
