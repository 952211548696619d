// The client's pure trust decisions (docs/DESIGN.md §4-§6): takes the current state, fetched
// bytes and a start time, returns the new state or a typed error. No I/O: fetching,
// persisting and polling sit outside, so tests drive it with bytes.

import PinionCore

/// The verified, in-memory view of the persisted state. Only the refresh (TrustCore.swift,
/// Refresh.swift, RefreshLogStep.swift) changes it.
public struct TrustedState: Sendable, Equatable {
    /// What is persisted (exact envelope bytes, floor, last known time, revoked set).
    public internal(set) var persisted: ClientState
    /// The trusted roots, from the embedded one to the newest accepted.
    public internal(set) var chain: RootChain
    /// The last accepted manifest, verified under the root it names; nil if none.
    public internal(set) var manifest: ManifestPayload?
    /// Whether `manifest` is valid under the newest root (its rootVersion is the newest
    /// root's). Expiry is separate: it is evaluated at every connection.
    public internal(set) var manifestValid: Bool
    /// Domain names of a manifest that was dropped (corrupt or unverifiable store): they
    /// stay enforced with no pins until a fresh manifest arrives.
    public internal(set) var forcedDomains: [String]

    /// The revoked set R (docs/DESIGN.md §7).
    public var revoked: Set<Pin> { Set(persisted.revokedPins) }
    /// The floor: (rootVersion, version) of the last accepted manifest.
    public var floor: ManifestOrder? { persisted.floor }
}

/// The outcome of one refresh.
public enum RefreshOutcome: Sendable, Equatable {
    case updated(ManifestOrder)
    case unchanged
    case rejected(ClientError)
    case networkFailure(ClientError)
}

/// What `TrustCore.refresh` decided: the new state (to persist when `stateChanged`), the
/// outcome, and every event. `PinningClient.refresh()` reports a `RefreshReport` from it.
public struct RefreshedState: Sendable, Equatable {
    public var state: TrustedState
    public var outcome: RefreshOutcome
    public var events: [ClientEvent]
    /// Whether `state.persisted` differs from the state the refresh started from.
    public var stateChanged: Bool
    /// The published file a rejection concerns (`root/4.json`, `manifest.json`); nil otherwise.
    public var document: String? = nil
    /// For a manifest refused for its signatures, the cause a signer can act on (another
    /// scope, a root version the client does not have yet, keys the newest root no longer
    /// lists: `ManifestDiagnosis`); nil otherwise. The verdict is the same.
    public var diagnosis: String? = nil
}

/// The trust rules of the client, parameterised by the app's embedded root.
public struct TrustCore: Sendable {
    /// Seconds the wall clock may lag `lastKnownTime` before it is reported (docs/DESIGN.md §6).
    public static let clockStepTolerance: Int64 = 300
    /// Seconds `issuedAt` may lead the start time before it is reported (docs/DESIGN.md §6).
    public static let futureDatedTolerance: Int64 = 86_400

    public let scope: String
    public let crypto: CryptoProvider
    public let limits: Limits
    private let anchor: RootChain

    /// - Parameters:
    ///   - scope: the app's scope; the embedded root must name it.
    ///   - embeddedRoot: exact envelope bytes of the root compiled into the app.
    /// - Throws: `ClientError.invalidEmbeddedRoot` when it does not verify or names
    ///   another scope.
    public init(scope: String, embeddedRoot: [UInt8], crypto: CryptoProvider, limits: Limits = .standard)
        throws(ClientError)
    {
        do {
            anchor = try RootChain(anchor: embeddedRoot, crypto: crypto, limits: limits)
        } catch {
            throw .invalidEmbeddedRoot(error.description)
        }
        guard anchor.newest.payload.scope == scope else {
            throw .invalidEmbeddedRoot("its scope is \(anchor.newest.payload.scope), the app's is \(scope)")
        }
        self.scope = scope
        self.crypto = crypto
        self.limits = limits
    }

    /// The state of a first run: the embedded root, no manifest.
    public func initialState(forcedDomains: [String] = []) -> TrustedState {
        var persisted = ClientState(scope: scope)
        persisted.revokedSetPinsRole = TrustCore.roleKey(anchor.newest.payload.pinsRole)
        persisted.manifestDomainNames = forcedDomains
        return TrustedState(
            persisted: persisted, chain: anchor, manifest: nil, manifestValid: false, forcedDomains: forcedDomains)
    }

    // MARK: - Start-up

    /// Re-checks a stored state from the embedded root (docs/DESIGN.md §6, start-up): stored
    /// roots are re-verified in order (a root the app's embedded one already supersedes is
    /// skipped; one that fails ends the chain there); the stored manifest is re-verified
    /// under the newest root of the stored or embedded chain, whichever is newer, and is
    /// current when it verifies there (pins role, cap, `pinsRoleSince <= rootVersion`,
    /// docs/DESIGN.md §5). One that only verifies under the older root it names is kept as
    /// not current; one that verifies under neither (including one signed under a root
    /// older than the embedded one that the newest root no longer accepts) is dropped and
    /// its domains stay enforced.
    ///
    /// - Returns: the trusted state and what was found.
    public func restore(_ stored: ClientState) -> (TrustedState, [ClientEvent]) {
        guard stored.scope == scope else {
            let state = initialState(forcedDomains: stored.manifestDomainNames)
            return (state, [.storeDropped("the stored state belongs to scope \(stored.scope)")])
        }
        var events: [ClientEvent] = []
        let (chain, keptRoots, diverged) = restoreRoots(stored.acceptedRoots, events: &events)
        var persisted = stored
        persisted.acceptedRoots = keptRoots
        if diverged, let floor = persisted.floor, floor.rootVersion >= chain.roots[0].version {
            // The floor is kept only as far as the stored manifest still verifies under the
            // trusted chain (set again below); a floor from a dropped fork would refuse every
            // manifest of the legitimate chain as a rollback, forever.
            persisted.floor = nil
            persisted.floorPayloadSHA256 = nil
            events.append(.storeDropped("the rollback floor \(floor) came from roots this build does not trust"))
        }
        var state = TrustedState(
            persisted: persisted, chain: chain, manifest: nil, manifestValid: false, forcedDomains: [])
        guard let manifestBytes = stored.manifest else {
            state.forcedDomains = stored.manifestDomainNames
            reconcileLog(&state)
            return (state, events)
        }
        var check = verifyStoredManifest(manifestBytes, chain: chain)
        let payloadHash = (try? Envelope.parse(manifestBytes, limits: limits)).map { crypto.hasher.sha256($0.payload) }
        if case .success(let payload, _) = check,
            state.persisted.floor == ManifestOrder(rootVersion: payload.rootVersion, version: payload.version),
            let recorded = state.persisted.floorPayloadSHA256, recorded != payloadHash
        {
            // Another payload than the one accepted at this floor: the file was edited or
            // mixed up; the floor and its hash stand, the manifest does not.
            check = .failure("its payload is not the one recorded at the floor \(payload.version)")
        }
        switch check {
        case .success(let payload, let current):
            state.manifest = payload
            state.manifestValid = current
            if !state.manifestValid {
                events.append(
                    .manifestNotCurrent(
                        "it was signed under root \(payload.rootVersion); the newest root is \(chain.newest.version)"))
            }
            let order = ManifestOrder(rootVersion: payload.rootVersion, version: payload.version)
            if state.persisted.floor.map({ $0 < order }) ?? true {
                state.persisted.floor = order
                state.persisted.floorPayloadSHA256 = payloadHash
            } else if state.persisted.floor == order, state.persisted.floorPayloadSHA256 == nil {
                // A state of formatVersion 1 recorded no hash: the verified manifest supplies it.
                state.persisted.floorPayloadSHA256 = payloadHash
            }
        case .failure(let reason):
            state.persisted.manifest = nil
            state.persisted.manifestETag = nil
            state.forcedDomains = stored.manifestDomainNames
            events.append(.storeDropped("the stored manifest no longer verifies: \(reason)"))
        }
        reconcileLog(&state)
        return (state, events)
    }

    /// Re-verifies stored roots in order from the embedded one (start-up, docs/DESIGN.md §6).
    ///
    /// - Returns: the chain, the stored roots kept (those beyond the embedded root that still
    ///   verify, up to the first that does not), and whether the stored chain diverged from
    ///   the trusted one (a stored root that differs from the trusted root of its version, is
    ///   unreadable or no longer verifies): its floor may have been set by roots this build
    ///   does not trust.
    private func restoreRoots(_ stored: [[UInt8]], events: inout [ClientEvent]) -> (RootChain, [[UInt8]], Bool) {
        var chain = anchor
        var keptRoots: [[UInt8]] = []
        var diverged = false
        for bytes in stored {
            guard let version = try? RootChain.peekVersion(bytes, limits: limits) else {
                events.append(.storeDropped("a stored root is unreadable; the chain ends at \(chain.newest.version)"))
                return (chain, keptRoots, true)
            }
            if version <= chain.newest.version {
                // Superseded by the embedded root; but the same version with another payload
                // is a fork (root equivocation), for example a chain of a thief's rotation.
                if let trusted = chain.root(version: version),
                    let envelope = try? Envelope.parse(bytes, limits: limits),
                    crypto.hasher.sha256(envelope.payload) != trusted.payloadSHA256
                {
                    events.append(
                        .storeDropped(
                            "stored root \(version) differs from the trusted root \(version) (a fork of the root chain)"
                        ))
                    diverged = true
                }
                continue
            }
            do {
                try chain.append(bytes, crypto: crypto, limits: limits)
                keptRoots.append(bytes)
            } catch {
                events.append(.storeDropped("stored root \(version) no longer verifies: \(error)"))
                return (chain, keptRoots, true)
            }
        }
        return (chain, keptRoots, diverged)
    }

    private enum StoredCheck {
        /// Verified; `current` when under the newest root.
        case success(ManifestPayload, current: Bool)
        case failure(String)
    }

    private func verifyStoredManifest(_ bytes: [UInt8], chain: RootChain) -> StoredCheck {
        let rootVersion: Int64
        do {
            let envelope = try Envelope.parse(bytes, limits: limits)
            rootVersion = try ManifestPayload.parse(envelope.payload, limits: limits).rootVersion
        } catch {
            return .failure(error.description)
        }
        let newestError: TrustError
        do {
            return .success(
                try ManifestVerifier.verify(bytes, under: chain.newest, crypto: crypto, limits: limits).payload,
                current: true)
        } catch {
            newestError = error
        }
        guard let root = chain.root(version: rootVersion) else {
            // Named by a root older than the embedded one: its signatures and scope were
            // checked under the newest root's pins role (they come before rootVersion), so
            // it is kept as non-current (docs/DESIGN.md §6).
            if case .rootVersionBeforePinsRole = newestError,
                let payload = try? ManifestPayload.parse(Envelope.parse(bytes, limits: limits).payload, limits: limits)
            {
                return .success(payload, current: false)
            }
            return .failure(newestError.description)
        }
        guard root.version != chain.newest.version else { return .failure(newestError.description) }
        // Signed under an older root of the chain whose pins role the newest no longer
        // accepts: kept as a non-current manifest, which can take trust away (B ∩ M) but
        // never grant it (docs/DESIGN.md §6, §7).
        do {
            return .success(
                try ManifestVerifier.verify(bytes, under: root, crypto: crypto, limits: limits).payload,
                current: false)
        } catch {
            return .failure(error.description)
        }
    }

    // MARK: - Refresh steps

    /// What `acceptManifest` decided.
    public enum ManifestStep: Sendable, Equatable {
        /// Accepted: the new state, and events such as a future-dated issuedAt.
        case updated(TrustedState, [ClientEvent])
        /// The same payload as the accepted one (co-signatures may differ): a quiet no-op.
        case unchanged
    }

    /// Checks a fetched manifest in the order of docs/DESIGN.md §6 steps 3-5 against one start
    /// time `t0`: envelope and signatures under the newest root's pins role, strict payload,
    /// scope, rootVersion, lifetime cap; then order against the floor (rollback,
    /// equivocation, no-op); then `expiresAt > max(t0, lastKnownTime)`.
    ///
    /// - Parameters:
    ///   - bytes: the fetched envelope (the size limit was enforced while reading).
    ///   - etag: the response's ETag, stored for the next conditional GET.
    ///   - t0: the refresh's start time (wall clock), read once.
    /// - Throws: `ClientError`; `state` is not modified.
    public func acceptManifest(_ bytes: [UInt8], etag: String?, into state: TrustedState, startTime t0: Timestamp)
        throws(ClientError) -> ManifestStep
    {
        let now = max(t0, state.persisted.lastKnownTime ?? t0)
        let verified: VerifiedManifest
        do {
            verified = try ManifestVerifier.verify(bytes, under: state.chain.newest, crypto: crypto, limits: limits)
        } catch {
            throw .trust(error)
        }
        let payload = verified.payload
        let order = ManifestOrder(rootVersion: payload.rootVersion, version: payload.version)
        if let floor = state.persisted.floor {
            if order < floor { throw .rollback(offered: order, floor: floor) }
            if order == floor, let stored = state.persisted.manifest {
                let storedPayload = try? Envelope.parse(stored, limits: limits).payload
                if storedPayload == verified.envelope.payload {
                    // The same manifest again: unchanged while it is current; once expired,
                    // a publisher still offering it is refused like any expired manifest.
                    do { try verified.checkCurrent(at: now) } catch { throw .trust(error) }
                    return .unchanged
                }
                throw .equivocation(order: order)
            }
            // At the floor with no stored envelope (it no longer verified at start-up): the
            // payload hash recorded with the floor decides. The same payload is accepted and
            // stored; another one is equivocation. Only a state migrated from formatVersion 1
            // without its manifest has no hash; a manifest that verifies re-establishes it.
            if order == floor, let recorded = state.persisted.floorPayloadSHA256,
                recorded != verified.payloadSHA256
            {
                throw .equivocation(order: order)
            }
        }
        do {
            try state.chain.checkNewestCurrent(at: now)
            try verified.checkCurrent(at: now)
        } catch {
            throw .trust(error)
        }

        var events: [ClientEvent] = []
        if payload.issuedAt > t0.adding(seconds: TrustCore.futureDatedTolerance) {
            events.append(.futureDated(issuedAt: payload.issuedAt, startTime: t0))
        }
        var next = state
        next.persisted.manifest = bytes
        next.persisted.manifestETag = TrustCore.storableETag(etag)
        next.persisted.floor = order
        next.persisted.floorPayloadSHA256 = verified.payloadSHA256
        next.persisted.lastKnownTime = max(state.persisted.lastKnownTime ?? t0, t0)
        let newestRoot = state.chain.newest.payload
        let pinsRole = TrustCore.roleKey(newestRoot.pinsRole)
        // The revoked set belongs to one pins-role epoch (docs/DESIGN.md §7): it restarts
        // with the first manifest accepted at or above a changed pinsRoleSince, that is when
        // the manifest that built it (the floor's) was signed below the newest root's
        // pinsRoleSince. Without a floor, the recorded pins key ids decide.
        let sameEpoch =
            state.persisted.floor.map { $0.rootVersion >= newestRoot.effectivePinsRoleSince }
            ?? (next.persisted.revokedSetPinsRole == pinsRole)
        var revoked = sameEpoch && next.persisted.revokedSetPinsRole == pinsRole ? next.persisted.revokedPins : []
        for pin in payload.revokedPins where !revoked.contains(pin) { revoked.append(pin) }
        next.persisted.revokedPins = revoked
        next.persisted.revokedSetPinsRole = pinsRole
        next.persisted.manifestDomainNames = payload.domains.map(\.name)
        next.manifest = payload
        next.manifestValid = true
        next.forcedDomains = []
        events.append(.updated(order))
        return .updated(next, events)
    }

    /// A role's key ids in a canonical order, so that listing the same keys in another
    /// order is not a role change.
    static func roleKey(_ role: RootPayload.Role) -> [String] { role.keyIDs.sorted() }

    /// An ETag worth storing and sending back: at most 1,024 printable ASCII bytes; any
    /// other value is dropped (the next fetch is then unconditional), never an error.
    static func storableETag(_ etag: String?) -> String? {
        guard let etag, !etag.isEmpty, etag.utf8.count <= 1024, etag.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else { return nil }
        return etag
    }

}

extension TrustCore {
    /// Drops the stored checkpoint when the newest root no longer has the log it belongs to.
    func reconcileLog(_ state: inout TrustedState) {
        guard let stored = state.persisted.logCheckpoint else { return }
        if let policy = state.chain.newest.payload.log, storedCheckpoint(stored, under: policy) != nil { return }
        state.persisted.logCheckpoint = nil
    }
}

extension RootChain {
    /// The version of a root envelope without checking signatures (to skip roots the
    /// embedded one supersedes).
    static func peekVersion(_ bytes: [UInt8], limits: Limits) throws -> Int64 {
        let envelope = try Envelope.parse(bytes, limits: limits)
        guard envelope.kind == .root else { throw TrustError.wrongPayloadKind(expected: .root, found: envelope.kind) }
        let value = try StrictJSONParser.parse(envelope.payload, limits: limits.json)
        guard case .object(let object) = value, case .number(let text)? = object["version"], let version = Int64(text)
        else { throw FormatError(path: "payload.version", rule: .missingMember("version")) }
        return version
    }
}
