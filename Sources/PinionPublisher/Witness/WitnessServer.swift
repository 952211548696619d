// `pinion witness`: the witness's routes served over HTTPS on the same server stack as `pinion serve`.

import Foundation
import PinionCore
import PinionSystem

/// A witness over HTTPS. Create it (binds and loads the certificate), `start()`, then
/// `drain(timeout:)`. The certificate only protects the connection: the cosignatures are what
/// authenticate a witness.
public final class WitnessServer: Sendable {
    /// The witness it serves.
    public let witness: Witness
    /// The path prefix of its routes (`""` or e.g. `/w1`).
    public let pathPrefix: String
    private let server: HTTPSPublisher

    /// The bound port.
    public var port: UInt16 { server.port }
    /// `https://ADDRESS:PORT` followed by the path prefix: the URL for a root's witness list.
    public var url: String { server.url + pathPrefix }
    /// The connection cap in force (lowered to fit the open files limit).
    public var maxConnections: Int { server.maxConnections }

    /// - Parameters:
    ///   - witness: the witness and its state.
    ///   - server: listen address, certificate and key, workers, connection cap and timeouts
    ///     (`repository`, metrics and reports are not used and must be off).
    ///   - pathPrefix: empty, or `/` and URL path segments without a final `/`.
    ///   - rateLimit: requests per client address; nil: no limit.
    ///   - clock: now in POSIX seconds, for cosignature times.
    ///   - accessLog: where request lines go.
    /// - Throws: `PublisherError` (`.badSetting` for a bad prefix or limit).
    public init(
        witness: Witness, server configuration: PublisherConfiguration, pathPrefix: String = "",
        rateLimit: WitnessRateLimit? = WitnessRateLimit(),
        clock: @escaping @Sendable () -> UInt64 = { UInt64(max(1, Date().timeIntervalSince1970)) },
        accessLog: AccessLog = .standardError
    ) throws(PublisherError) {
        guard WitnessHandler.isPathPrefix(pathPrefix) else {
            throw .badSetting(
                "--path-prefix must be empty or /SEGMENT[/SEGMENT...] of A-Z a-z 0-9 - . _ ~, without a final /")
        }
        if let rateLimit {
            guard rateLimit.burst >= 1, rateLimit.burst <= 1_000_000, rateLimit.perMinute > 0,
                rateLimit.perMinute.isFinite
            else { throw .badSetting("the rate limit needs a burst of at least 1 and a rate above 0") }
        }
        var configuration = configuration
        configuration.requestLimits.maxBodyBytes = witness.limits.maxBodyBytes
        self.witness = witness
        self.pathPrefix = pathPrefix
        server = try HTTPSPublisher(
            configuration: configuration,
            handler: WitnessHandler(witness: witness, pathPrefix: pathPrefix, rateLimit: rateLimit, clock: clock),
            accessLog: accessLog)
    }

    /// Starts the worker threads; returns at once.
    public func start() { server.start() }

    /// Loads the certificate chain and key again (SIGHUP).
    ///
    /// - Throws: `PublisherError.tlsCredentials`; the old ones stay.
    public func reloadCredentials() throws(PublisherError) { try server.reloadCredentials() }

    /// Stops accepting and lets requests in flight finish (at most `timeout` seconds).
    ///
    /// - Returns: true when every connection finished in time.
    @discardableResult
    public func drain(timeout: Double) -> Bool { server.drain(timeout: timeout) }
}
