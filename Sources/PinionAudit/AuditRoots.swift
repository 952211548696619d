// The auditor's root walk (docs/DESIGN.md §4, §10): every rotation from root 1, both thresholds, the given root unchanged.
//
// It drives `RootChainWalk` one root at a time (no rotation limit; `maxRoots` bounds it) and,
// unlike a client, carries on past a refused root from that root's own signatures, so that
// every fault of the history is listed.

import PinionCore
import PinionTrust

extension AuditRun {
    mutating func auditRoots() throws(AuditError) {
        var walk: RootChainWalk?
        var previousPinsRole: RootPayload.Role?
        var version: Int64 = 1
        while true {
            guard version <= Int64(options.maxRoots) else {
                violation(
                    .rootFormat, version, .root(version), "more than \(options.maxRoots) roots; the audit stops here")
                break
            }
            guard let next = try auditRoot(version, walk: &walk, previousPinsRole: &previousPinsRole) else { break }
            version = next
        }
        try auditRootsAfterChain(firstAbsent: version)
    }

    /// A walk from `chain` with no rotation limit (`maxRoots` bounds the audit instead).
    private func rootWalk(from chain: RootChain) -> RootChainWalk {
        RootChainWalk(from: chain, maxRotations: nil, crypto: crypto, limits: options.limits)
    }

    /// Reads root `version` and places it on the walk, listing its faults.
    ///
    /// - Returns: the next version to read, or nil when the chain ends at `version`.
    private mutating func auditRoot(
        _ version: Int64, walk: inout RootChainWalk?, previousPinsRole: inout RootPayload.Role?
    ) throws(AuditError) -> Int64? {
        let given = anchor.newest
        let file = TreeFile.root(version)
        switch try read(file, limit: options.limits.maxEnvelopeBytes, version: version) {
        case .refused:
            // When root/ itself is refused (a link or a file where the folder belongs),
            // every root would be refused the same way: one finding is enough.
            if Self.folderRefused(.root, in: source) { return nil }
            walk = nil
            return version + 1
        case .absent:
            if version < given.version {
                violation(
                    .rootMissing, version, file,
                    "missing; every root from 1 up to the given root (version \(given.version)) must be published")
                walk = nil
                return given.version
            }
            if version == given.version {
                violation(
                    .rootMissing, version, file,
                    "missing; the given root (version \(given.version)) is not published")
                walk = rootWalk(from: anchor)
                record(given, file: "(given root)", previousPinsRole: &previousPinsRole)
                return version + 1
            }
            return nil
        case .bytes(let bytes):
            var placed = placeRoot(bytes, version: version, file: file, walk: &walk)
            if version == given.version {
                placed = checkGivenRoot(bytes, placed: placed, version: version, file: file, walk: &walk)
            }
            if let placed { record(placed, file: file.path, previousPinsRole: &previousPinsRole) }
            unverifiedContent = false
            return version + 1
        }
    }

    /// Places a root on the walk as a rotation or, when it is not one, starts the walk over on
    /// the root's own signatures, so that later rotations and the manifests signed under it are
    /// still checked (and their faults listed).
    ///
    /// - Returns: the root placed, or nil when it verifies neither way (the walk is then nil).
    private mutating func placeRoot(_ bytes: [UInt8], version: Int64, file: TreeFile, walk: inout RootChainWalk?)
        -> VerifiedRoot?
    {
        var rotationError: TrustError?
        switch walk?.accept(bytes) {
        case .success(let root):
            return root
        case .failure(let error):
            // Reported below, after a signature that does not verify if there is one.
            rotationError = error
        case nil:
            break
        }
        do throws(TrustError) {
            let restarted: RootChain
            do throws(TrustError) {
                restarted = try RootChain(anchor: bytes, crypto: crypto, limits: options.limits)
            } catch {
                rootSignaturesDoNotVerify(bytes, version: version)
                if let rotationError { rootViolation(rotationError, version: version) }
                throw error
            }
            if let rotationError { rootViolation(rotationError, version: version) }
            let root = restarted.newest
            if root.version != version {
                if rotationError == nil {
                    violation(.rootFileName, version, file, "holds root version \(root.version), not \(version)")
                }
                walk = nil
                return nil
            }
            if root.payload.scope != report.scope {
                if rotationError == nil {
                    violation(
                        .scope, version, file,
                        TrustError.scopeMismatch(expected: report.scope, found: root.payload.scope).description)
                }
                walk = nil
                return nil
            }
            walk = rootWalk(from: restarted)
            return root
        } catch {
            if error != rotationError { rootViolation(error, version: version) }
            walk = nil
            return nil
        }
    }

    /// Compares the tree's root of the given root's version with the given root: clients trust
    /// the given root, so the rest is checked against it when the tree's differs or failed.
    ///
    /// - Returns: the root to record for this version.
    private mutating func checkGivenRoot(
        _ bytes: [UInt8], placed: VerifiedRoot?, version: Int64, file: TreeFile, walk: inout RootChainWalk?
    ) -> VerifiedRoot? {
        let given = anchor.newest
        var placed = placed
        let hash = (try? Envelope.parse(bytes, limits: options.limits)).map { crypto.hasher.sha256($0.payload) }
        if hash != given.payloadSHA256 {
            // A tree root that verifies on its own is another trust history: ask
            // whether the given root is the one the app embeds.
            if placed != nil {
                report.givenRootDiffers = version
                treeRootOfGivenVersion = bytes
            }
            violation(
                .rootEquivocation, version, file,
                "differs from the given root of the same version (payload sha256:\(hash.map(Hex.encode) ?? "unreadable"), given sha256:\(Hex.encode(given.payloadSHA256)))"
            )
            placed = nil
        }
        if placed == nil {
            // Clients trust the given root: check the rest against it.
            walk = rootWalk(from: anchor)
            placed = given
        }
        return placed
    }

    /// Root files after the chain (a gap), stray names in root/, and an expired newest root.
    ///
    /// - Parameter firstAbsent: the first version after the chain, which is absent.
    private mutating func auditRootsAfterChain(firstAbsent version: Int64) throws(AuditError) {
        if let listing = try list(.root) {
            if let beyond = listing.versions.first(where: { $0 > version }) {
                violation(
                    .rootGap, beyond, .root(beyond),
                    "exists but root/\(version).json is missing; the chain has a gap and is not read further")
            }
            for name in listing.strayNames {
                warning(.strayFile, nil, "root/" + name, "not a root file name ({version}.json); ignored")
            }
        }
        if let newest = roots.keys.max(), let root = roots[newest], root.payload.expiresAt <= options.at {
            violation(
                .rootExpired, newest, TreeFile.root(newest),
                "the newest root expired at \(root.payload.expiresAt) (audit time \(options.at)): clients accept no manifest"
            )
        }
    }

    mutating func record(_ root: VerifiedRoot, file: String, previousPinsRole: inout RootPayload.Role?) {
        roots[root.version] = root
        var signers: [String] = []
        for id in (root.previousRoleReport?.valid ?? []) + root.ownRoleReport.valid where !signers.contains(id) {
            signers.append(id)
        }
        let pinsRole = root.payload.pinsRole
        let changed = previousPinsRole.map {
            Set($0.keyIDs) != Set(pinsRole.keyIDs) || $0.threshold != pinsRole.threshold
        }
        previousPinsRole = pinsRole
        report.roots.append(
            RootSummary(
                version: root.version, file: file, payloadSHA256: root.payloadSHA256,
                issuedAt: root.payload.issuedAt, expiresAt: root.payload.expiresAt,
                maxManifestLifetime: root.payload.maxManifestLifetime, rootRole: root.payload.rootRole,
                pinsRole: pinsRole, signers: signers, pinsRoleChanged: changed ?? false))
        if let previous = root.previousRoleReport {
            signatureWarnings(
                previous, version: root.version, file: file, role: "root role of root \(root.version - 1)")
        }
        signatureWarnings(root.ownRoleReport, version: root.version, file: file, role: "root role")
    }

    mutating func signatureWarnings(_ signatures: SignatureReport, version: Int64?, file: String, role: String) {
        for id in signatures.invalid {
            warning(
                .invalidSignature, version, file, "the signature by \(role) key \(id) does not verify (not counted)")
        }
        for id in signatures.duplicates {
            warning(.duplicateSignature, version, file, "key \(id) signed more than once (counted once)")
        }
    }

    /// For a root that verifies neither as a rotation nor on its own signatures: when a
    /// signature by a key the tree's roots or the given root list does not verify over the
    /// raw payload bytes and none does, reports that (the file was changed after signing) as
    /// the cause, and marks what its content breaks as following from it.
    mutating func rootSignaturesDoNotVerify(_ bytes: [UInt8], version: Int64) {
        guard let envelope = try? Envelope.parse(bytes, limits: options.limits) else { return }
        let message = envelope.signingInput
        let documents = roots.values.map(\.payload) + [anchor.newest.payload]
        var failing: [String] = []
        for signature in envelope.signatures {
            guard let key = documents.lazy.compactMap({ $0.publicKey(for: signature.keyID) }).first else { continue }
            if crypto.verifier.isValidSignature(signature.signature, of: message, publicKey: key) { return }
            if !failing.contains(signature.keyID) { failing.append(signature.keyID) }
        }
        guard !failing.isEmpty else { return }
        violation(
            .rootSignature, version, .root(version),
            "the signature does not verify (the file was changed after signing, or signed by another key): the signature(s) of \(failing.joined(separator: ", ")) do not verify over its payload bytes"
        )
        unverifiedContent = true
    }

    mutating func rootViolation(_ error: TrustError, version: Int64) {
        let file = TreeFile.root(version)
        switch error {
        case .format(let format): violation(.rootFormat, version, file, format.description)
        case .wrongPayloadKind: violation(.rootFormat, version, file, "\(error); a root file must hold a root")
        case .thresholdNotMet(_, let rootVersion, _, _) where rootVersion == version:
            violation(.rootSignature, version, file, "not signed by a threshold of its own root role: \(error)")
        case .thresholdNotMet(_, let rootVersion, _, _):
            violation(
                .rootRotation, version, file,
                "the rotation from root \(rootVersion) is not signed by a threshold of root \(rootVersion)'s root role: \(error)"
            )
        case .rootNotNext(_, let found):
            violation(.rootFileName, version, file, "holds root version \(found), not \(version)")
        case .scopeMismatch: violation(.scope, version, file, error.description)
        case .pinsRoleSinceInvalid: violation(.rootRotation, version, file, error.description)
        default: violation(.rootFormat, version, file, error.description)
        }
    }
}
