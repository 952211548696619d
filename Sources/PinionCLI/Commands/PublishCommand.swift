// `pinion publish`: add a signed root or manifest to the static tree a publisher serves
// (docs/DESIGN.md §9), applying the auditor's rules to the step it adds. Never needs a secret key.

import Foundation
import PinionClient
import PinionCore
import PinionCrypto

struct PublishCommand: Command {
    static let path = ["publish"]
    static let summary = "add a signed root or manifest to the published tree"
    static let options: [OptionSpec] = [.value("repo"), .flag("allow-lift"), .value("at")]
    static let help = """
        usage: pinion publish --repo DIR ENVELOPE [--allow-lift] [--at TIME]

        Adds ENVELOPE (a root or a manifest, told apart by payloadType) to the static tree
        DIR/v1/{scope}/ (docs/DESIGN.md section 9):
          root/{n}.json           every root, immutable
          history/{version}.json  every published manifest, immutable
          index.json              the manifest history (version, rootVersion, payload
                                  SHA-256, issuedAt, expiresAt)
          manifest.json           the latest manifest, replaced last by atomic rename
        Before writing it refuses, with the reason: a first root that is not version 1
        signed by its own root role; a root that is not exactly the next version signed by
        both the previous and its own root role; a manifest that does not verify under the
        newest root, is expired, names another rootVersion, is not the latest version + 1,
        has a `previous` other than the latest payload's SHA-256, an issuedAt before the
        latest's, or drops a revoked pin of the latest (unless --allow-lift).
        Immutable files are written first and manifest.json last, so a reader at any
        instant sees the old or the new state. Publishing the same envelope again is a
        no-op that completes a publish that died mid-way.

        options:
          --repo DIR        the tree (created if missing)
          --allow-lift      accept lifting a revocation (the auditor flags it)
          --at TIME         RFC 3339 time for the expiry checks (default: now)

        """

    /// Seconds an issuedAt may lie after the publish time (signers' clock skew).
    static let issuedAtTolerance: Int64 = 3600

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let envelopePath = try arguments.positional(["ENVELOPE"])[0]
        let repo = try arguments.required("repo")
        let now =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        let bytes = try Files.read(envelopePath, limit: maxInputBytes)
        let envelope: Envelope
        do { envelope = try Envelope.parse(bytes) } catch {
            throw CLIError.document(error, file: envelopePath, bytes: bytes, expected: "a signed envelope (JSON)")
        }
        let scope: String
        do {
            switch envelope.kind {
            case .root: scope = try RootPayload.parse(envelope.payload, crypto: crypto).scope
            case .pins: scope = try ManifestPayload.parse(envelope.payload).scope
            }
        } catch {
            throw CLIError.failure(Load.located(error, envelopePath).description)
        }
        let tree = PublishedTree(repo: repo, scope: scope)
        // A refused publish leaves no directory behind that it created.
        let created = CreatedDirectories(
            missingFrom: repo, inside: [tree.scopeDirectory + "/root", tree.scopeDirectory + "/history"])
        do {
            try publish(
                envelope, bytes, envelopePath: envelopePath, tree: tree, now: now, arguments: arguments,
                context: context)
        } catch {
            created.removeIfEmpty()
            throw error
        }
    }

    static func publish(
        _ envelope: Envelope, _ bytes: [UInt8], envelopePath: String, tree: PublishedTree, now: Timestamp,
        arguments: ParsedArguments, context: CLIContext
    ) throws {
        // One publish at a time per tree: a concurrent one could otherwise leave
        // manifest.json behind index.json.
        let lock = try tree.lock()
        defer { withExtendedLifetime(lock) {} }
        try tree.checkDirectories()
        tree.removeAbandonedTemporaryFiles()
        try tree.checkWritableTargets()
        switch envelope.kind {
        case .root: try publishRoot(bytes, envelopePath: envelopePath, tree: tree, now: now, context: context)
        case .pins:
            try publishManifest(
                bytes, envelopePath: envelopePath, tree: tree, now: now, allowLift: arguments.flag("allow-lift"),
                context: context)
        }
    }

    static func publishRoot(
        _ bytes: [UInt8], envelopePath: String, tree: PublishedTree, now: Timestamp, context: CLIContext
    )
        throws
    {
        let version: Int64
        do {
            version = try RootPayload.parse(Envelope.parse(bytes).payload, crypto: crypto).version
        } catch {
            throw CLIError.failure("\(envelopePath): \(error)")
        }
        let existing = try tree.rootVersions()
        if let existingBytes = try tree.readIfPresent(tree.rootPath(version)) {
            guard existingBytes == bytes else {
                throw CLIError.failure("\(envelopePath): root version \(version) is already published with other bytes")
            }
            context.print("root version \(version) is already published (no change)")
            return
        }
        var chain: RootChain
        if existing.isEmpty {
            if try tree.hasHistory() {
                throw CLIError.failure(
                    "\(tree.scopeDirectory): manifests are published but root/ is empty; restore the published roots instead of starting a new chain"
                )
            }
            guard version == 1 else {
                throw CLIError.failure(
                    "\(envelopePath): the first root published must be version 1 (self-signed), not \(version)")
            }
            do { chain = try RootChain(anchor: bytes, crypto: crypto) } catch {
                throw CLIError.failure("\(envelopePath): \(error)")
            }
        } else {
            chain = try tree.rootChain()
            do { try chain.append(bytes, crypto: crypto) } catch { throw CLIError.failure("\(envelopePath): \(error)") }
        }
        do { try chain.checkNewestCurrent(at: now) } catch { throw CLIError.failure("\(envelopePath): \(error)") }
        try tree.createDirectories()
        try Files.writeAtomically(bytes, to: tree.rootPath(version), replace: false)
        context.print("published root version \(version) of scope \(tree.scope): \(tree.rootPath(version))")
    }

    static func publishManifest(
        _ bytes: [UInt8], envelopePath: String, tree: PublishedTree, now: Timestamp, allowLift: Bool,
        context: CLIContext
    ) throws {
        guard !(try tree.rootVersions()).isEmpty else {
            throw CLIError.failure(
                "\(tree.scopeDirectory): no root is published for scope \(tree.scope); publish root version 1 first")
        }
        let chain = try tree.rootChain()
        let verified: VerifiedManifest
        do {
            verified = try ManifestVerifier.verify(bytes, under: chain.newest, crypto: crypto)
            try chain.checkNewestCurrent(at: now)
            try verified.checkCurrent(at: now)
        } catch {
            throw CLIError.manifest(error, file: envelopePath, envelopeBytes: bytes, chain: chain)
        }
        let payload = verified.payload
        // A future issuedAt binds every later version to be at least as late (issuedAt never
        // goes back), so a signer's clock error would stall the channel until then.
        if payload.issuedAt.secondsSince1970 > now.secondsSince1970 + PublishCommand.issuedAtTolerance {
            throw CLIError.failure(
                "\(envelopePath): issuedAt \(payload.issuedAt) is more than an hour after the publish time \(now); every later version would have to be at least as late (check the signer's clock, or give the publish time with --at)"
            )
        }
        var index = try tree.index()
        let historyPath = tree.historyPath(payload.version)
        if let published = try tree.readIfPresent(historyPath) {
            guard published == bytes else {
                throw CLIError.failure(
                    "\(envelopePath): version \(payload.version) is already published with other bytes (\(historyPath)); a version is never published twice"
                )
            }
        }
        let indexed = index.manifests.first { $0.version == payload.version }
        let alreadyIndexed = indexed != nil
        if let indexed, indexed.payloadSHA256 != verified.payloadSHA256 {
            throw CLIError.failure(
                "\(envelopePath): index.json lists version \(payload.version) with another payload; a version is never published twice"
            )
        }
        if index.manifests.isEmpty, try tree.hasHistory(), try tree.readIfPresent(historyPath) != bytes {
            throw CLIError.failure(
                "\(tree.scopeDirectory)/history holds manifests index.json does not list: re-run the publish that died, or repair the tree"
            )
        }
        if let latest = index.manifests.last, !alreadyIndexed {
            // A history file beyond the index is a publish that died mid-way: finish it first.
            if let unfinished = try tree.readIfPresent(tree.historyPath(latest.version + 1)), unfinished != bytes {
                throw CLIError.failure(
                    "\(tree.historyPath(latest.version + 1)) is an unfinished publish; run pinion publish with that envelope first"
                )
            }
            guard let latestBytes = try tree.readIfPresent(tree.historyPath(latest.version)) else {
                throw CLIError.failure("\(tree.historyPath(latest.version)) is missing although index.json lists it")
            }
            let latestPayload: ManifestPayload
            let latestEnvelope: Envelope
            do {
                latestEnvelope = try Envelope.parse(latestBytes)
                latestPayload = try ManifestPayload.parse(latestEnvelope.payload)
            } catch {
                throw CLIError.failure("\(tree.historyPath(latest.version)): \(error)")
            }
            guard crypto.hasher.sha256(latestEnvelope.payload) == latest.payloadSHA256 else {
                throw CLIError.failure(
                    "\(tree.historyPath(latest.version)) does not match its index.json entry; repair the tree before publishing"
                )
            }
            do {
                try HistoryRules.checkSuccessor(
                    payload, of: latestPayload, latestPayloadSHA256: latest.payloadSHA256, allowLift: allowLift)
            } catch {
                throw CLIError.failure("\(envelopePath): \(error)")
            }
            let lifted = HistoryRules.liftedRevocations(payload, of: latestPayload)
            if !lifted.isEmpty {
                context.warn(
                    "lifting revocation(s) of \(lifted.map(\.description).joined(separator: ", ")) (--allow-lift)")
            }
        } else if alreadyIndexed, index.manifests.last?.version != payload.version {
            throw CLIError.failure(
                "\(envelopePath): version \(payload.version) is already published and older than the latest (version \(index.manifests.last?.version ?? 0)); serving it again would be a rollback"
            )
        }

        try tree.createDirectories()
        // Immutable history first, then the index, then manifest.json by atomic rename.
        if try tree.readIfPresent(historyPath) == nil {
            try Files.writeAtomically(bytes, to: historyPath, replace: false)
        }
        if !alreadyIndexed {
            index.manifests.append(
                PublishedIndex.Entry(
                    version: payload.version, rootVersion: payload.rootVersion, payloadSHA256: verified.payloadSHA256,
                    issuedAt: payload.issuedAt, expiresAt: payload.expiresAt))
            try Files.writeAtomically(index.serialized(), to: tree.indexPath, replace: true)
        }
        if try tree.readIfPresent(tree.manifestPath) != bytes {
            var old = stat()
            let previousModification = lstat(tree.manifestPath, &old) == 0 ? old.st_mtim : nil
            try Files.writeAtomically(
                bytes, to: tree.manifestPath, replace: true, modifiedAfter: previousModification)
            context.print(
                "published manifest version \(payload.version) (rootVersion \(payload.rootVersion)) of scope \(tree.scope), expires \(payload.expiresAt)"
            )
        } else {
            context.print("manifest version \(payload.version) is already published (no change)")
        }
    }
}

/// The files of one scope in a published tree.
struct PublishedTree {
    let repo: String
    let scope: String

    var scopeDirectory: String { repo + "/v1/" + scope }
    var indexPath: String { scopeDirectory + "/index.json" }
    var manifestPath: String { scopeDirectory + "/manifest.json" }
    func rootPath(_ version: Int64) -> String { scopeDirectory + "/root/\(version).json" }
    func historyPath(_ version: Int64) -> String { scopeDirectory + "/history/\(version).json" }

    /// An exclusive lock on the repository directory (created if missing).
    func lock() throws(CLIError) -> StorageLock {
        do { try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true) } catch {
            throw .io("\(repo): cannot create: \(error.localizedDescription)")
        }
        let descriptor = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io("\(repo): cannot open: \(Files.errnoText())") }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let reason = Files.errnoText()
            close(descriptor)
            throw .io("\(repo): cannot lock: \(reason)")
        }
        return StorageLock(release: {
            _ = flock(descriptor, LOCK_UN)
            _ = close(descriptor)
        })
    }

    /// Refuses before any write when index.json or manifest.json is not a regular file.
    func checkWritableTargets() throws(CLIError) {
        for path in [indexPath, manifestPath] {
            do { _ = try Files.existingRegularFileMode(path) } catch {
                throw .failure("\(path): not a regular file; the tree needs repair before publishing")
            }
        }
    }

    /// Whether history/ holds any published manifest.
    func hasHistory() throws(CLIError) -> Bool {
        let names = try list(scopeDirectory + "/history")
        return names.contains { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
    }

    func createDirectories() throws(CLIError) {
        for directory in [scopeDirectory + "/root", scopeDirectory + "/history"] {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw .io("\(directory): cannot create: \(error.localizedDescription)")
            }
        }
    }

    /// The bytes of a published file, or nil when it does not exist. A symbolic link or a
    /// special file is refused: the tree's files are compared byte for byte with what is
    /// published, and a link would make that comparison (and what servers send) point
    /// elsewhere.
    func readIfPresent(_ path: String) throws(CLIError) -> [UInt8]? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io("\(path): cannot inspect: \(Files.errnoText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .failure("\(path): not a regular file (a symbolic link or special file); the tree needs repair")
        }
        return try Files.read(path, limit: maxInputBytes)
    }

    /// Names in `directory`; none when it does not exist; an I/O error when it cannot be read
    /// (an unreadable directory must not look empty).
    func list(_ directory: String) throws(CLIError) -> [String] {
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            if errno == ENOENT { return [] }
            throw .io("\(directory): cannot inspect: \(Files.errnoText())")
        }
        do { return try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw .io("\(directory): cannot list: \(error.localizedDescription)")
        }
    }

    /// Refuses a tree whose directories (v1, the scope, root/, history/) are symbolic links
    /// or other non-directories, before anything is read or written through them.
    func checkDirectories() throws(CLIError) {
        for directory in [repo + "/v1", scopeDirectory, scopeDirectory + "/root", scopeDirectory + "/history"] {
            var info = stat()
            guard lstat(directory, &info) == 0 else {
                if errno == ENOENT { continue }
                throw .io("\(directory): cannot inspect: \(Files.errnoText())")
            }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .failure(
                    "\(directory): not a directory (a symbolic link or a file); the tree needs repair before publishing"
                )
            }
        }
    }

    /// Removes temporary files (`.NAME.tmp-PID-N`) a publish that died left behind. Called
    /// under the tree's lock, so no live publish owns them. Servers never serve them
    /// (hidden names), but they would accumulate.
    func removeAbandonedTemporaryFiles() {
        for directory in [scopeDirectory, scopeDirectory + "/root", scopeDirectory + "/history"] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names where name.hasPrefix(".") && name.contains(".json.tmp-") {
                var info = stat()
                let path = directory + "/" + name
                if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { unlink(path) }
            }
        }
    }

    /// Versions of root/N.json present; they must be 1 ... N without gaps.
    func rootVersions() throws(CLIError) -> [Int64] {
        let names = try list(scopeDirectory + "/root")
        let versions = names.compactMap { name -> Int64? in
            guard name.hasSuffix(".json"), let number = Int64(name.dropLast(5)), number >= 1, "\(number).json" == name
            else { return nil }
            return number
        }.sorted()
        for (position, version) in versions.enumerated() where version != Int64(position + 1) {
            throw .failure("\(scopeDirectory)/root: root \(position + 1).json is missing before \(version).json")
        }
        return versions
    }

    /// The published root chain, verified from root/1.json (self-signed) to the newest.
    func rootChain() throws(CLIError) -> RootChain {
        let versions = try rootVersions()
        guard let first = versions.first else { throw .failure("\(scopeDirectory): no root is published") }
        var chain: RootChain
        do {
            chain = try RootChain(anchor: try Files.read(rootPath(first), limit: maxInputBytes), crypto: crypto)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(rootPath(first)): \(error)")
        }
        guard chain.newest.version == 1 else { throw .failure("\(rootPath(1)): is not root version 1") }
        for version in versions.dropFirst() {
            do { try chain.append(try Files.read(rootPath(version), limit: maxInputBytes), crypto: crypto) } catch let
                error
                as CLIError
            {
                throw error
            } catch {
                throw .failure("\(rootPath(version)): \(error)")
            }
        }
        return chain
    }

    func index() throws(CLIError) -> PublishedIndex {
        var info = stat()
        guard lstat(indexPath, &info) == 0 else { return PublishedIndex(scope: scope) }
        // The history grows over years: allow far more than one envelope.
        let bytes = try Files.read(indexPath, limit: max(16 * maxInputBytes, 64 * 1024 * 1024))
        do {
            let index = try PublishedIndex.parse(bytes)
            guard index.scope == scope else {
                throw CLIError.failure("\(indexPath): scope is \(index.scope), not \(scope)")
            }
            return index
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(indexPath): \(error)")
        }
    }
}
