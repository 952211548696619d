// The directories a command is about to create, so that a refusal can remove them again.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The directories that do not exist yet among a path, its missing ancestors and some
/// paths below it, recorded before a command creates any of them. `removeIfEmpty()`
/// removes those that are still empty, deepest first (rmdir(2) never removes a directory
/// with anything in it, so a concurrent writer's files are safe).
struct CreatedDirectories {
    private let missing: [String]

    /// - Parameters:
    ///   - path: the directory the command creates (with its parents) when missing.
    ///   - inside: deeper directories the command may create below `path`.
    init(missingFrom path: String, inside: [String]) {
        var missing: [String] = []
        var candidate = path
        while !candidate.isEmpty, candidate != "/", candidate != ".", !FileManager.default.fileExists(atPath: candidate)
        {
            missing.append(candidate)
            let parent = (candidate as NSString).deletingLastPathComponent
            if parent == candidate { break }
            candidate = parent
        }
        for directory in inside where !FileManager.default.fileExists(atPath: directory) {
            var step = directory
            while step.count > path.count, !missing.contains(step) {
                missing.append(step)
                step = (step as NSString).deletingLastPathComponent
            }
        }
        self.missing = missing.sorted { $0.count > $1.count }
    }

    /// Removes every recorded directory that exists and is empty, deepest first.
    func removeIfEmpty() {
        for directory in missing { _ = rmdir(directory) }
    }
}
