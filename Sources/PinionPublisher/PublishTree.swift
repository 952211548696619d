// Reading one scope of a published tree for `Publisher.publish`: its roots, index and history.

import PinionCore
import PinionSystem
import PinionTrust

/// The files of one scope in a published tree (`{repo}/v1/{scope}/...`, docs/DESIGN.md §9).
struct PublishTree {
    let repo: String
    let scope: String
    let crypto: CryptoProvider
    let limits: Limits

    var scopeDirectory: String { repo + "/v1/" + scope }
    var rootDirectory: String { scopeDirectory + "/root" }
    var historyDirectory: String { scopeDirectory + "/history" }
    var indexPath: String { scopeDirectory + "/index.json" }
    var manifestPath: String { scopeDirectory + "/manifest.json" }
    func rootPath(_ version: Int64) -> String { rootDirectory + "/\(version).json" }
    func historyPath(_ version: Int64) -> String { historyDirectory + "/\(version).json" }

    /// Largest index.json read: the history grows over years.
    var indexLimit: Int { max(16 * limits.maxEnvelopeBytes, 64 * 1024 * 1024) }

    static func file<T>(_ body: () throws(PublishFileError) -> T) throws(PublishError) -> T {
        do { return try body() } catch { throw .file(error) }
    }

    /// The bytes of a published file, or nil when absent; a link or special file is refused.
    func read(_ path: String) throws(PublishError) -> [UInt8]? {
        try Self.file { () throws(PublishFileError) in
            try PublishFiles.readRegularIfPresent(path, limit: limits.maxEnvelopeBytes)
        }
    }

    /// Refuses a tree whose directories (v1, the scope, root/, history/) or whose
    /// index.json and manifest.json are links or other kinds, before anything is read.
    func checkKinds() throws(PublishError) {
        for directory in [repo + "/v1", scopeDirectory, rootDirectory, historyDirectory] {
            let kind = try Self.file { () throws(PublishFileError) in try PublishFiles.kind(directory) }
            guard kind == nil || kind == .directory else {
                throw .refused(
                    input: nil,
                    reason:
                        "\(directory): not a directory (a symbolic link or a file); the tree needs repair before publishing"
                )
            }
        }
        for path in [indexPath, manifestPath] {
            let kind = try Self.file { () throws(PublishFileError) in try PublishFiles.kind(path) }
            guard kind == nil || kind == .regular else {
                throw .refused(
                    input: nil, reason: "\(path): not a regular file; the tree needs repair before publishing")
            }
        }
    }

    /// Whether history/ holds any published manifest.
    func hasHistory() throws(PublishError) -> Bool {
        let names = try Self.file { () throws(PublishFileError) in try PublishFiles.list(historyDirectory) }
        return names.contains { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
    }

    /// Versions of root/N.json present; they must be 1 ... N without gaps.
    func rootVersions() throws(PublishError) -> [Int64] {
        let names = try Self.file { () throws(PublishFileError) in try PublishFiles.list(rootDirectory) }
        let versions = names.compactMap { name -> Int64? in
            guard name.hasSuffix(".json"), let number = Int64(name.dropLast(5)), number >= 1, "\(number).json" == name
            else { return nil }
            return number
        }.sorted()
        for (position, version) in versions.enumerated() where version != Int64(position + 1) {
            throw .refused(
                input: nil, reason: "\(rootDirectory): root \(position + 1).json is missing before \(version).json")
        }
        return versions
    }

    /// The published root chain, verified from root/1.json (self-signed) to the newest with
    /// `RootChainWalk` (no rotation limit: this is the publisher's own tree), or nil when no
    /// root is published.
    func rootChain() throws(PublishError) -> RootChain? {
        let versions = try rootVersions()
        guard let last = versions.last else { return nil }
        let firstPath = rootPath(1)
        guard let first = try read(firstPath) else {
            throw .refused(input: nil, reason: "\(firstPath): vanished while the tree was locked")
        }
        let anchor: RootChain
        do { anchor = try RootChain(anchor: first, crypto: crypto, limits: limits) } catch {
            throw .refused(input: nil, reason: "\(firstPath): \(error)")
        }
        guard anchor.newest.version == 1 else {
            throw .refused(input: nil, reason: "\(firstPath): is not root version 1")
        }
        var walk = RootChainWalk(from: anchor, maxRotations: nil, crypto: crypto, limits: limits)
        let end = walk.run(lookup: { (version) throws(PublishError) -> [UInt8]? in
            guard version <= last else { return nil }
            let path = rootPath(version)
            guard let bytes = try read(path) else {
                throw .refused(input: nil, reason: "\(path): vanished while the tree was locked")
            }
            return bytes
        })
        switch end {
        case .complete: return walk.chain
        case .lookupFailed(_, let error): throw error
        case .refused(let version, _, let error): throw .refused(input: nil, reason: "\(rootPath(version)): \(error)")
        }
    }

    /// index.json, or an empty index when it does not exist.
    func index() throws(PublishError) -> PublishedIndex {
        guard
            let bytes = try Self.file({ () throws(PublishFileError) in
                try PublishFiles.readRegularIfPresent(indexPath, limit: indexLimit)
            })
        else { return PublishedIndex(scope: scope) }
        let index: PublishedIndex
        do { index = try PublishedIndex.parse(bytes, limits: limits) } catch {
            throw .refused(input: nil, reason: "\(indexPath): \(error)")
        }
        guard index.scope == scope else {
            throw .refused(input: nil, reason: "\(indexPath): scope is \(index.scope), not \(scope)")
        }
        return index
    }
}
