// The upload plan: the files one or more publish steps changed, in the phases a mirror
// (object store, CDN origin, rsync target) must take them so that no client narrows
// (docs/DESIGN.md §9 "Uploading to a mirror"; the format is in docs/PUBLISHING.md).

import Foundation
import PinionCore
import PinionSystem
import PinionTrust

/// What a mirror must copy after publish steps, phase by phase. Within a phase the files
/// may be uploaded in any order and in parallel; a phase starts only when the previous one
/// is visible at the public URL, and its invalidations are done.
///
/// The phases follow `Publisher.publish`'s write order: immutable content (history files
/// and log tiles), then index.json, manifest.proof and log/checkpoint, then manifest.json,
/// then the new roots. Paths are relative to the tree (`v1/{scope}/...`); `pending/` and
/// hidden files are never listed.
public struct UploadPlan: Sendable, Equatable {
    /// One file to copy.
    public struct File: Sendable, Equatable {
        /// The path below the tree, e.g. `v1/com.example/history/3.json`.
        public var path: String
        /// Size in bytes.
        public var size: Int
        /// SHA-256 of the bytes, lowercase hex (as `sha256sum` prints it).
        public var sha256: String
        /// The Content-Type `pinion serve` sends for it (`PublishedPath.contentType`).
        public var contentType: String
        /// The Cache-Control `pinion serve` sends for it (`PublishedPath.cacheControl`).
        public var cacheControl: String
        /// Written once and never changed: a mirror may create it only if absent, and an
        /// existing copy with the same SHA-256 is kept.
        public var immutable: Bool
    }

    /// One phase: files, then the CDN paths to invalidate once they are visible.
    public struct Phase: Sendable, Equatable {
        /// `content`, `index-and-log`, `manifest` or `roots`.
        public var name: String
        /// The files, sorted by path.
        public var files: [File]
        /// Paths (below the tree) whose cached answers, a 404 included, must be purged at
        /// the CDN after the phase.
        public var invalidate: [String]
    }

    /// The stretch of phases during which a client refresh may be refused (nothing is
    /// narrowed: the client keeps its state); it clears at the first refresh after the
    /// last phase.
    public struct RefusalWindow: Sendable, Equatable {
        /// The phase whose first upload opens the window.
        public var firstPhase: String
        /// The phase whose completion closes it.
        public var lastPhase: String
        /// What clients may refuse in between, one sentence each.
        public var reasons: [String]
    }

    /// The document type written in the plan.
    public static let documentType = "pinion.upload-plan"

    /// The scope.
    public var scope: String
    /// SHA-256 (lowercase hex) of `v1/{scope}/root/1.json`: the tree's identity. An upload
    /// to a mirror whose root 1 differs is another tree and is refused.
    public var root1SHA256: String
    /// The first index.json sequence number covered (nil: no publish step listed anything
    /// new, only index.json and the log's mutable files are planned).
    public var since: Int64?
    /// The last index.json sequence number covered.
    public var through: Int64?
    /// The latest manifest version after the plan (what `pinion status --expect-version`
    /// checks at the public URL), nil when none is published.
    public var manifestVersion: Int64?
    /// The newest root version after the plan.
    public var rootVersion: Int64
    /// The directory the plan was made from (`pinion publish --repo`), absolute.
    public var source: String
    /// The phases in order; empty phases are left out.
    public var phases: [Phase]
    /// Where refusals may happen, or nil when none can.
    public var refusalWindow: RefusalWindow?

    /// Reads the tree under its publish lock and plans the upload of every step whose
    /// index.json sequence number is `since` or later.
    ///
    /// - Parameters:
    ///   - repo: the directory given to `pinion publish --repo`.
    ///   - scope: the scope (`v1/{scope}`).
    ///   - since: the first sequence number to include; nil plans only the mutable files
    ///     (index.json, manifest.proof, log/checkpoint), for a step that listed nothing new.
    ///   - crypto: SHA-256.
    ///   - limits: the largest envelope read.
    /// - Returns: the plan.
    /// - Throws: `PublishError.refused` for a tree that is not published (no root 1), a
    ///   sequence number past the last step, a link or special file in the tree;
    ///   `PublishError.file` for I/O errors.
    public static func make(
        repo: String, scope: String, since: Int64?, crypto: CryptoProvider, limits: Limits = .standard
    ) throws(PublishError) -> UploadPlan {
        guard try PublishTree.file({ () throws(PublishFileError) in try PublishFiles.kind(repo) }) == .directory else {
            throw .refused(input: nil, reason: "\(repo): not a directory holding a published tree")
        }
        let tree = PublishTree(repo: repo, scope: scope, crypto: crypto, limits: limits)
        let lock = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.lock(repo) }
        return try withExtendedLifetime(lock) { () throws(PublishError) -> UploadPlan in
            try tree.checkKinds()
            return try UploadPlanner(tree: tree, since: since).plan()
        }
    }

    /// The scopes published in `repo` (the directories below `v1/` holding a root 1).
    ///
    /// - Throws: `PublishError.file` when `v1/` cannot be listed.
    public static func scopes(in repo: String) throws(PublishError) -> [String] {
        let names = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.list(repo + "/v1") }
        var scopes: [String] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            let root1 = repo + "/v1/" + name + "/root/1.json"
            if try PublishTree.file({ () throws(PublishFileError) in try PublishFiles.kind(root1) }) == .regular {
                scopes.append(name)
            }
        }
        return scopes
    }

    /// The plan as JSON (docs/PUBLISHING.md "Upload plans"), with a final newline.
    public func serialized() -> [UInt8] {
        func number(_ value: Int64?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
        let files: (Phase) -> JSONValue = { phase in
            .array(
                phase.files.map { file in
                    .object(
                        JSONObject([
                            .init("path", .string(file.path)), .init("size", .number(String(file.size))),
                            .init("sha256", .string(file.sha256)), .init("contentType", .string(file.contentType)),
                            .init("cacheControl", .string(file.cacheControl)),
                            .init("immutable", .bool(file.immutable)),
                        ]))
                })
        }
        let phases: [JSONValue] = phases.map { phase in
            .object(
                JSONObject([
                    .init("name", .string(phase.name)), .init("files", files(phase)),
                    .init("invalidate", .array(phase.invalidate.map { .string($0) })),
                ]))
        }
        let window: JSONValue =
            refusalWindow.map { window in
                .object(
                    JSONObject([
                        .init("firstPhase", .string(window.firstPhase)), .init("lastPhase", .string(window.lastPhase)),
                        .init("reasons", .array(window.reasons.map { .string($0) })),
                    ]))
            } ?? .null
        return JSONWriter.write(
            .object(
                JSONObject([
                    .init("type", .string(Self.documentType)), .init("formatVersion", .number("1")),
                    .init(
                        "tree",
                        .object(
                            JSONObject([
                                .init("scope", .string(scope)), .init("root1SHA256", .string(root1SHA256)),
                                .init("source", .string(source)),
                            ]))),
                    .init("since", number(since)), .init("through", number(through)),
                    .init("manifestVersion", number(manifestVersion)), .init("rootVersion", number(rootVersion)),
                    .init("refusalWindow", window), .init("phases", .array(phases)),
                ])))
    }
}

/// Builds an `UploadPlan` from one scope of a locked tree.
private struct UploadPlanner {
    let tree: PublishTree
    let since: Int64?

    /// Tiles are at most a few kilobytes; anything larger is not a tile.
    private static let tileLimit = 1 << 20

    func plan() throws(PublishError) -> UploadPlan {
        let index = try tree.index()
        guard let root1 = try tree.read(tree.rootPath(1)) else {
            throw .refused(input: nil, reason: "\(tree.rootPath(1)): no root is published for scope \(tree.scope)")
        }
        let last = (index.manifests.compactMap(\.sequence) + index.roots.compactMap(\.sequence)).max()
        if let since {
            guard let last, since <= last else {
                throw .refused(
                    input: nil,
                    reason:
                        "\(tree.indexPath): no publish step has sequence number \(since) or later (the last is \(last.map(String.init) ?? "none"))"
                )
            }
            guard since >= 1 else { throw .refused(input: nil, reason: "sequence numbers start at 1, not \(since)") }
        }
        let included: (Int64?) -> Bool = { sequence in
            guard let since, let sequence else { return false }
            return sequence >= since
        }
        let newManifests = index.manifests.filter { included($0.sequence) }
        let newRoots = index.roots.filter { included($0.sequence) }.map(\.version)
        let rootVersions = try tree.rootVersions()
        for version in newRoots where !rootVersions.contains(version) {
            throw .refused(
                input: nil,
                reason:
                    "\(tree.rootPath(version)) is listed in index.json but missing: an unfinished publish; run pinion publish again first"
            )
        }
        let logDirectory = tree.scopeDirectory + "/log"
        let proofPath = tree.scopeDirectory + "/manifest.proof"
        let hasLog = try exists(proofPath)

        var phases: [UploadPlan.Phase] = []
        var content = try newManifests.map { entry throws(PublishError) in try file(tree.historyPath(entry.version)) }
        if hasLog, since != nil { content += try tiles(below: logDirectory + "/tile") }
        if !content.isEmpty { phases.append(phase("content", content, invalidate: [])) }

        var mutable: [UploadPlan.File] = []
        for path in [tree.indexPath, proofPath, logDirectory + "/checkpoint"] where try exists(path) {
            mutable.append(try file(path))
        }
        if !mutable.isEmpty { phases.append(phase("index-and-log", mutable, invalidate: mutable.map(\.path))) }

        if !newManifests.isEmpty {
            let manifest = try file(tree.manifestPath)
            phases.append(phase("manifest", [manifest], invalidate: [manifest.path]))
        }
        if !newRoots.isEmpty {
            let roots = try newRoots.map { version throws(PublishError) in try file(tree.rootPath(version)) }
            // A CDN that cached the 404 of root/{n}.json before it existed would hide the rotation.
            phases.append(phase("roots", roots, invalidate: roots.map(\.path)))
        }
        let sequences =
            (newManifests.compactMap(\.sequence)
                + newRoots.compactMap { version in
                    index.roots.first { $0.version == version }?.sequence
                })
        return UploadPlan(
            scope: tree.scope, root1SHA256: hex(root1), since: since, through: sequences.max(),
            manifestVersion: index.manifests.last?.version, rootVersion: rootVersions.last ?? 1,
            source: absolute(tree.repo), phases: phases,
            refusalWindow: window(phases: phases, hasLog: hasLog, newManifests: newManifests, newRoots: newRoots))
    }

    /// The refusals the phases allow: a proof ahead of manifest.json (a logged tree), and a
    /// manifest signed under a root not uploaded yet.
    private func window(
        phases: [UploadPlan.Phase], hasLog: Bool, newManifests: [PublishedIndex.Entry], newRoots: [Int64]
    ) -> UploadPlan.RefusalWindow? {
        let names = phases.map(\.name)
        var first: String?
        var last: String?
        var reasons: [String] = []
        if hasLog, names.contains("manifest") {
            first = "index-and-log"
            last = "manifest"
            reasons.append(
                "manifest.proof and log/checkpoint name the new manifest before manifest.json serves it: clients refuse the proof and keep their state"
            )
        }
        let signedUnderNewRoot = newManifests.contains { newRoots.contains($0.rootVersion) }
        if names.contains("manifest"), names.contains("roots"), signedUnderNewRoot {
            first = first ?? "manifest"
            last = "roots"
            reasons.append(
                "manifest.json is signed under a root not yet served: clients refuse it (rootVersion above their newest) and keep their state"
            )
        }
        guard let first, let last else { return nil }
        return UploadPlan.RefusalWindow(firstPhase: first, lastPhase: last, reasons: reasons)
    }

    private func phase(_ name: String, _ files: [UploadPlan.File], invalidate: [String]) -> UploadPlan.Phase {
        UploadPlan.Phase(name: name, files: files.sorted { $0.path < $1.path }, invalidate: invalidate)
    }

    private func exists(_ path: String) throws(PublishError) -> Bool {
        try PublishTree.file({ () throws(PublishFileError) in try PublishFiles.kind(path) }) != nil
    }

    /// A planned file: read (links and special files refused), hashed, and given the
    /// serving fields of `pinion serve` for its path.
    private func file(_ path: String, limit: Int? = nil) throws(PublishError) -> UploadPlan.File {
        let relative = String(path.dropFirst(tree.repo.count + 1))
        guard let served = PublishedPath("/" + relative) else {
            throw .refused(input: nil, reason: "\(path): not a path pinion serve would serve")
        }
        let read = try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.readRegularIfPresent(path, limit: limit ?? tree.indexLimit)
        }
        guard let bytes = read else { throw .refused(input: nil, reason: "\(path): missing") }
        let immutable = served.cacheControl.contains("immutable")
        return UploadPlan.File(
            path: relative, size: bytes.count, sha256: hex(bytes), contentType: served.contentType,
            cacheControl: served.cacheControl, immutable: immutable)
    }

    /// Every tile and entry bundle below `directory` (tiles never change, so a mirror keeps
    /// those it has); hidden names are skipped.
    private func tiles(below directory: String) throws(PublishError) -> [UploadPlan.File] {
        var found: [UploadPlan.File] = []
        var pending = [directory]
        while let current = pending.popLast() {
            let names = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.list(current) }
            for name in names where !name.hasPrefix(".") {
                let path = current + "/" + name
                switch try PublishTree.file({ () throws(PublishFileError) in try PublishFiles.kind(path) }) {
                case .directory: pending.append(path)
                case .regular: found.append(try file(path, limit: Self.tileLimit))
                default: throw .refused(input: nil, reason: "\(path): not a regular file or directory")
                }
            }
        }
        return found
    }

    private func hex(_ bytes: [UInt8]) -> String { Hex.encode(tree.crypto.hasher.sha256(bytes)) }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
