// The CLI's input and output files: PinionSystem's size-limited reads and its one atomic writer, with the CLI's messages.

import PinionCore
import PinionSystem

enum Files {
    /// Reads `path` (a FIFO or pipe included), refusing more than `limit` bytes before
    /// reading them all (`CommandFiles.read`).
    ///
    /// - Throws: `CLIError` exit 3 when the file cannot be read, exit 1 when it is too large.
    static func read(_ path: String, limit: Int) throws(CLIError) -> [UInt8] {
        do { return try CommandFiles.read(path, limit: limit) } catch {
            throw CLIError(category: error.category, error.description)
        }
    }

    /// Reads `path`, a regular file only (`CommandFiles.readRegular`).
    ///
    /// - Throws: `CLIError` exit 3 when it cannot be read or is not a regular file, exit 1
    ///   when it is too large.
    static func readRegular(_ path: String, limit: Int) throws(CLIError) -> [UInt8] {
        do { return try CommandFiles.readRegular(path, limit: limit) } catch {
            throw CLIError(category: error.category, error.description)
        }
    }

    /// Refuses to replace anything but a regular file (a device node, FIFO, directory or
    /// symbolic link would be silently swapped for a plain file by the rename).
    ///
    /// - Returns: the permission bits of the existing regular file, or nil if none exists.
    static func existingRegularFileMode(_ path: String) throws(CLIError) -> UInt32? {
        let existing: CommandFiles.Existing
        do { existing = try CommandFiles.existing(path) } catch {
            throw CLIError(category: error.category, error.description)
        }
        switch existing {
        case .none: return nil
        case .regular(let mode): return mode
        case .symbolicLink: throw refusedReplacement(path, "a symbolic link")
        case .other: throw refusedReplacement(path, "not a regular file")
        }
    }

    /// Writes `bytes` to `path` atomically with `PublishFiles.writeAtomically` (temporary
    /// file, fsync, rename or no-clobber link, fsync of the directory): a crash leaves
    /// either the old file or the new one, and a replaced file keeps its permission bits.
    ///
    /// - Parameters:
    ///   - replace: when false and `path` exists, refuse with a usage error naming `--force`.
    ///   - mode: permission bits of a new file.
    /// - Throws: `CLIError`: usage (2) for an existing file without `replace` or a path
    ///   that is not a regular file, io (3) on any write failure.
    static func writeAtomically(_ bytes: [UInt8], to path: String, replace: Bool, mode: UInt32 = 0o644)
        throws(CLIError)
    {
        if try existingRegularFileMode(path) != nil, !replace { throw alreadyExists(path) }
        do { try PublishFiles.writeAtomically(bytes, to: path, replace: replace, mode: mode) } catch {
            switch error {
            // Created or swapped meanwhile, after the check above.
            case .exists: throw alreadyExists(path)
            case .wrongKind: throw refusedReplacement(path, "not a regular file")
            case .io, .tooLarge: throw CLIError(category: error.category, error.description)
            }
        }
    }

    private static func alreadyExists(_ path: String) -> CLIError {
        .usage("\(path) already exists; refusing to overwrite it (use --force to replace it)")
    }

    private static func refusedReplacement(_ path: String, _ kind: String) -> CLIError {
        .usage("\(path) is \(kind); refusing to replace it (write to a regular file path)")
    }
}
