// Path arithmetic on strings, for the directory walks of the publisher and the state storage.
// Foundation's NSString.deletingLastPathComponent traps on a one-character relative path
// ("t") in the toolchain this project builds with, so the parent is computed here.

/// Parents of file-system paths, as text (no file system access).
package enum PathText {
    /// The parent of `path`: everything before its last `/` (trailing slashes ignored);
    /// `""` for a single relative component (`tree`, `t`), `/` for a top-level absolute path.
    ///
    /// - Parameter path: a path, relative or absolute.
    /// - Returns: its parent directory's path.
    package static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
        return String(parent)
    }
}
