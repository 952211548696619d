// The platform-neutral API an app's TLS stack uses: an async refresh, a stream of events, the
// verdict on a chain the platform's own X.509 validation verified, and the trust generation
// that tells connection pools and TLS session caches when to flush.

import Foundation
import PinionCore

extension PinningClient {
    /// Runs one refresh, exactly as `refresh()`, on a global dispatch queue, so that the
    /// caller's actor or thread is never blocked by the network.
    ///
    /// Cancellation: checked before the refresh starts (then `CancellationError` is thrown and
    /// nothing is fetched). A refresh that has started runs to its end, bounded by the
    /// configuration's deadlines (`refreshDeadline`, `totalDeadline`), so that what it accepted
    /// is persisted whole; its report is returned even if the task was cancelled meanwhile.
    ///
    /// - Returns: the outcome of the refresh (docs/DESIGN.md §6).
    /// - Throws: `CancellationError` when the task was cancelled before the refresh began.
    public func refresh() async throws -> RefreshReport {
        try Task.checkCancellation()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.refresh()) }
        }
    }

    /// A new stream of every event from now on (the events `onEvent` receives, in the same
    /// order). Events are yielded on the thread that raised them (a refresh's queue, or the
    /// thread evaluating a connection); the consumer's task reads them on its own executor.
    /// The stream buffers the newest 256 events for a slow reader and ends when the consumer's
    /// task is cancelled or the iterator is dropped.
    ///
    /// - Returns: an `AsyncStream` of `ClientEvent`.
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream<ClientEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let number = subscribers.withLock { subscribers -> Int in
            let number = subscribers.next
            subscribers.next += 1
            subscribers.continuations[number] = continuation
            return number
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: number) }
        }
        return stream
    }

    /// The one call any TLS stack makes after its own X.509 validation passed (SecTrust on
    /// Apple, a PKIX trust manager on the JVM, OpenSSL on Linux): evaluates the verified chain
    /// for `host` under the policy now (docs/DESIGN.md §8) and reports a failure, throttled.
    ///
    /// Pins are computed from each certificate's DER by `CertificateSPKI` (RFC 7469 §2.4: the
    /// SHA-256 of the DER SubjectPublicKeyInfo exactly as the certificate carries it). A
    /// certificate that is not strict DER does not count for pinning; a chain with none left
    /// is rejected like an empty verified chain. Never blocks on a refresh.
    ///
    /// - Parameters:
    ///   - host: the host name the connection is for (normalised as §8.2 says).
    ///   - port: the port, for reports (default 443).
    ///   - verifiedChainDER: DER certificates of the VERIFIED chain, leaf first (never the
    ///     chain the server sent: an attacker can append any certificate to that).
    ///   - servedChainDER: the certificates the server sent, for reports only.
    /// - Returns: `.trusted`, `.notPinned`, `.reportOnly` or `.rejected`.
    public func verdict(
        for host: String, port: UInt16 = 443, verifiedChainDER: [[UInt8]], servedChainDER: [[UInt8]] = []
    ) -> ConnectionVerdict {
        var digests: [[UInt8]] = []
        var usable: [[UInt8]] = []
        for der in verifiedChainDER {
            guard let spki = try? CertificateSPKI.fromCertificateDER(der, hasher: crypto.hasher) else { continue }
            digests.append(spki.sha256)
            usable.append(der)
        }
        return check(
            PeerChain(
                host: host, port: port, verifiedSPKISHA256: digests, verifiedChainDER: usable,
                servedChainDER: servedChainDER))
    }

    /// How many times the effective policy has removed trust since this client was created.
    ///
    /// A connection pool or TLS session cache that skips the pin check for reused connections
    /// (URLSession, OkHttp, JSSE) must drop every connection made under an older generation:
    /// a policy change that removes trust applies from the next request on (docs/DESIGN.md §8).
    /// It grows on a refresh that narrows the policy, and once the manifest stops being current
    /// (expiry, staleGrace, root expiry) at the first evaluation or the first read of this
    /// property from then on, whichever comes first: a pool that reads it before reusing a
    /// connection learns of an expiry even when no connection was evaluated since. Each increase
    /// is also announced as `ClientEvent.trustRemoved`, on the thread that caused it.
    /// Non-blocking: a lock held for a comparison, never across a refresh.
    public var trustGeneration: UInt64 {
        let now = effectiveNow
        observeIfExpired(at: now)
        observeIfStale(at: now)
        return observed.withLock { $0.generation }
    }

    /// Observes the policy again once the observed one has stopped applying (the manifest
    /// expired, or its staleGrace or the newest root's expiry passed). Between refreshes that
    /// is the only way the effective policy changes, so a connection's evaluation costs one
    /// comparison of times here, not a comparison of whole policies.
    func observeIfExpired(at now: Timestamp) {
        guard let until = observed.withLock({ $0.until }), now >= until else { return }
        observe(policy, at: now)
    }

    /// Raises `staleCheckpoint` once the stored log checkpoint is past maxCheckpointAge
    /// (docs/DESIGN.md §12), once per checkpoint: one time comparison under a lock on the hot
    /// path, like `observeIfExpired`.
    func observeIfStale(at now: Timestamp) {
        let event = staleWatch.withLock { watch -> ClientEvent? in
            guard let from = watch.from, now >= from, let stored = watch.checkpoint else { return nil }
            watch.from = nil
            watch.raised = true
            return .staleCheckpoint(
                size: stored.checkpoint.size, quorumTime: stored.quorumTime,
                age: now.secondsSince1970 - stored.quorumTime)
        }
        if let event { emit(event) }
    }

    /// Watches the checkpoint of `state` for staleness; `raised` when its event was just
    /// raised (by the refresh that verified it). A new checkpoint (a re-cosign included) is
    /// watched afresh.
    func armStaleness(_ state: TrustedState, raised: Bool) {
        staleWatch.withLock { watch in
            let checkpoint = state.persisted.logCheckpoint
            if checkpoint != watch.checkpoint {
                watch.checkpoint = checkpoint
                watch.raised = false
            }
            if raised { watch.raised = true }
            watch.from = watch.raised ? nil : state.logStaleFrom
        }
    }

    /// Delivers an event to `onEvent` and to every `events()` stream.
    func emit(_ event: ClientEvent) {
        onEventHandler(event)
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Compares the policy `snapshot` gives at `now` with the one connections were last
    /// evaluated under; a change that removes trust raises the generation and announces it.
    /// Also records when that policy stops applying by time, for `trustGeneration`.
    func observe(_ snapshot: PolicySnapshot, at now: Timestamp) {
        let policy = snapshot.policy(at: now)
        let until = snapshot.isManifestCurrent(at: now) ? snapshot.manifestCurrentUntil : nil
        let raised = observed.withLock { observed -> UInt64? in
            defer {
                observed.policy = policy
                observed.until = until
            }
            guard let previous = observed.policy, policy.removesTrust(comparedTo: previous) else { return nil }
            observed.generation += 1
            return observed.generation
        }
        if let raised { emit(.trustRemoved(generation: raised)) }
    }
}

extension MergedPolicy {
    /// Whether a connection that `previous` accepted might be refused under this policy: true
    /// unless this policy only adds pins to the very same entries (same names, flags). Erring
    /// towards true costs a reconnect; erring towards false would keep a revoked key in use.
    ///
    /// - Parameter previous: the policy connections were made under.
    /// - Returns: true when trust may have been removed.
    public func removesTrust(comparedTo previous: MergedPolicy) -> Bool {
        guard entries.count == previous.entries.count else { return true }
        for (name, entry) in entries {
            guard let old = previous.entries[name], old.enforce == entry.enforce,
                old.includeSubdomains == entry.includeSubdomains
            else { return true }
            let pins = Set(entry.pins)
            if !old.pins.allSatisfy(pins.contains) { return true }
        }
        return false
    }
}
