// A published tree read from a local directory (the `--repo` of `pinion publish`), refusing
// symbolic links and anything but regular files inside the tree.

import Foundation
import PinionTrust
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The files of `{repo}/v1/{scope}/` on the local file system, read through `TreeDirectory`.
///
/// Inside the tree (`v1`, the scope directory, `root/`, `history/`, `log/` and every file) no
/// symbolic link, device, FIFO or directory is followed or read: a tree is plain files. The
/// repository path itself may be a link. The scope directory is opened once without
/// following links and every file is opened relative to it the same way (one openat2(2)
/// call where the kernel has it), so a directory swapped for a link during the audit is
/// never followed. Files are read with a size limit before they are read whole.
public final class DirectoryTreeSource: TreeSource {
    /// The directory given to `pinion publish --repo`.
    public let repo: String
    /// The scope whose files are read.
    public let scope: String

    /// The scope directory once opened.
    private let scopeDirectory = Mutex<TreeDirectory?>(nil)

    /// - Parameters:
    ///   - repo: the tree's top directory (it holds `v1/`).
    ///   - scope: the root's scope.
    public init(repo: String, scope: String) {
        self.repo = repo
        self.scope = scope
    }

    /// `{repo}/v1/{scope}`.
    public var location: String { repo + "/v1/" + scope }

    /// Checks that the scope directory exists as a directory reached without a link.
    ///
    /// - Throws: `TreeSourceError.io` when the repository or scope directory is missing
    ///   or unreadable; `.refused` when a component inside the tree is a link or a file.
    public func checkExists() throws(TreeSourceError) {
        _ = try openScope()
    }

    private func openScope() throws(TreeSourceError) -> TreeDirectory {
        if let open = scopeDirectory.withLock({ $0 }) { return open }
        let top: TreeDirectory
        do {
            top = try TreeDirectory(path: repo)
        } catch {
            if error.code == ENOTDIR { throw .io(file: repo, detail: "is not a directory") }
            throw .io(file: repo, detail: "cannot open: \(error.detail)")
        }
        let missing = "does not exist (no tree published for scope \(scope) here)"
        let opened: TreeDirectory
        do {
            opened = try top.subdirectory(["v1", scope])
        } catch {
            if case .notFound = error {
                let v1Missing = (try? top.subdirectory(["v1"])) == nil
                throw .io(file: v1Missing ? repo + "/v1" : location, detail: missing)
            }
            throw Self.failure(error, repo)
        }
        return scopeDirectory.withLock { current in
            if let raced = current { return raced }
            current = opened
            return opened
        }
    }

    public func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        let directory = try openScope()
        do {
            return try directory.read(file.path.split(separator: "/").map(String.init), maxBytes: limit) { _ in false }
                .body
        } catch {
            if case .notFound = error { return nil }
            if case .tooLarge = error { throw .tooLarge(file: location + "/" + file.path, limit: limit) }
            throw Self.failure(error, location, file: file.path)
        }
    }

    public func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? {
        let directory = try openScope()
        do {
            return TreeListing.classify(try directory.subdirectory([folder.rawValue]).names())
        } catch {
            if case .notFound = error { return TreeListing(versions: []) }
            throw Self.failure(error, location, file: folder.rawValue, listing: true)
        }
    }

    /// `TreeSourceError` for a failure below `base`; `file` names the file asked for.
    private static func failure(_ error: TreeFileError, _ base: String, file: String? = nil, listing: Bool = false)
        -> TreeSourceError
    {
        let whole = base + (file.map { "/" + $0 } ?? "")
        switch error {
        case .refused(let path, let kind): return .refused(file: base + "/" + path, kind: kind)
        case .notFound: return .io(file: whole, detail: "does not exist")
        case .tooLarge: return .io(file: whole, detail: "too large")
        case .unreadable(let code), .unavailable(let code):
            return .io(file: whole, detail: "cannot open: \(String(cString: strerror(code)))")
        case .readFailed(let code):
            return .io(
                file: whole, detail: "\(listing ? "cannot list" : "read failed"): \(String(cString: strerror(code)))")
        }
    }
}
