// A URLSession the glue manages: invalidated and recreated when the policy removes trust, because
// URLSession skips the server-trust challenge on reused connections and resumed TLS sessions.
// Apple-only glue, type-checked against Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionTrust

    /// Hands out a URLSession pinned by `PinionURLSessionDelegate`, and replaces it (cancelling the
    /// old one's tasks with `invalidateAndCancel`) before the next task whenever trust was removed
    /// since it was made: `trustGeneration` rose, or the policy now (expiry included) removes trust
    /// compared with the policy it was made under. Take `session` before every task; never keep it.
    ///
    /// `@unchecked Sendable` is sound: `current` is private and touched only while holding `lock`.
    public final class PinnedURLSession: @unchecked Sendable {
        /// The client whose policy decides each connection.
        public let client: PinningClient
        private let makeConfiguration: @Sendable () -> URLSessionConfiguration
        private let lock = NSLock()
        private var current: (session: URLSession, generation: UInt64, policy: MergedPolicy)?

        /// - Parameters:
        ///   - client: the pinning client.
        ///   - configuration: makes the configuration of each new session (default: `.default`).
        public init(
            client: PinningClient,
            configuration: @escaping @Sendable () -> URLSessionConfiguration = { .default }
        ) {
            self.client = client
            self.makeConfiguration = configuration
        }

        /// The session to start the next task on.
        public var session: URLSession {
            lock.lock()
            defer { lock.unlock() }
            let generation = client.trustGeneration
            let policy = client.policyNow()
            if let current, current.generation == generation, !policy.removesTrust(comparedTo: current.policy) {
                return current.session
            }
            current?.session.invalidateAndCancel()
            let session = URLSession(
                configuration: makeConfiguration(), delegate: PinionURLSessionDelegate(client: client),
                delegateQueue: nil)
            current = (session, generation, policy)
            return session
        }

        /// Invalidates the current session and cancels its tasks (the next `session` makes a new one).
        public func invalidate() {
            lock.lock()
            defer { lock.unlock() }
            current?.session.invalidateAndCancel()
            current = nil
        }
    }
#endif
