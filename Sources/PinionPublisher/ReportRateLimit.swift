// Per-client-address rate limiting of report POSTs (a token bucket per address, bounded
// memory) and the client address itself, optionally taken from one trusted proxy.

import Foundation
import PinionSystem

/// Token buckets keyed by client address. Pure: the caller passes the time.
///
/// Each address may send `burst` reports at once and then `perMinute` a minute. At most
/// `maxAddresses` are remembered; when full, addresses whose bucket has refilled are
/// forgotten, and if none has, a new address is refused (a flood from many addresses then
/// limits itself rather than growing memory).
public struct ReportRateLimiter: Sendable {
    /// Reports an address may send at once.
    public let burst: Double
    /// Reports an address may send per minute after its burst.
    public let perMinute: Double
    /// Most addresses remembered.
    public let maxAddresses: Int
    private var buckets: [String: (tokens: Double, updated: Double)] = [:]

    /// - Parameters: the burst (at least 1), the rate per minute (more than 0) and the address cap.
    public init(burst: Int, perMinute: Double, maxAddresses: Int = 65_536) {
        self.burst = Double(max(1, burst))
        self.perMinute = perMinute > 0 ? perMinute : 1
        self.maxAddresses = max(1, maxAddresses)
    }

    /// Takes one token for `address` at `seconds` (any monotonic clock, in seconds).
    ///
    /// - Returns: nil when allowed, or the whole seconds until a token is free (for Retry-After).
    public mutating func take(_ address: String, at seconds: Double) -> Int? {
        var bucket = buckets[address] ?? (burst, seconds)
        if buckets[address] == nil, buckets.count >= maxAddresses {
            forgetRefilled(at: seconds)
            guard buckets.count < maxAddresses else { return 60 }
        }
        let elapsed = max(0, seconds - bucket.updated)
        bucket.tokens = min(burst, bucket.tokens + elapsed * perMinute / 60)
        bucket.updated = seconds
        guard bucket.tokens >= 1 else {
            buckets[address] = bucket
            return max(1, Int(((1 - bucket.tokens) * 60 / perMinute).rounded(.up)))
        }
        bucket.tokens -= 1
        buckets[address] = bucket
        return nil
    }

    /// The number of addresses remembered.
    public var count: Int { buckets.count }

    private mutating func forgetRefilled(at seconds: Double) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + max(0, seconds - bucket.updated) * perMinute / 60 < burst
        }
    }
}

/// The address a report is counted against.
public enum ReportClientAddress {
    /// Why a forwarded address was refused.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The client's IP address: the connection's peer, or, when the peer is the configured
    /// proxy, the last `X-Forwarded-For` entry (the one that proxy appended; entries before
    /// it are the client's own claims and are ignored).
    ///
    /// - Parameters:
    ///   - peer: the connection's peer, `IP:PORT` or `[IPv6]:PORT`.
    ///   - forwardedFor: the `X-Forwarded-For` field values, in order.
    ///   - trustedProxy: the proxy's canonical IP literal, or nil to trust none.
    /// - Returns: a canonical IP literal.
    /// - Throws: `Refusal` when the trusted proxy sent no usable forwarded address.
    public static func resolve(peer: String, forwardedFor: [String], trustedProxy: String?) throws(Refusal) -> String {
        let peerAddress = address(ofPeer: peer)
        guard let trustedProxy, peerAddress == trustedProxy else { return peerAddress }
        let entries = forwardedFor.joined(separator: ",").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let last = entries.last, !last.isEmpty else {
            throw Refusal(description: "the trusted proxy sent no X-Forwarded-For address")
        }
        guard let canonical = IPLiteral.canonical(last) else {
            throw Refusal(description: "the trusted proxy's X-Forwarded-For does not end with an IP address")
        }
        return canonical
    }

    /// The IP part of `IP:PORT` or `[IPv6]:PORT`, canonical when it parses.
    static func address(ofPeer peer: String) -> String {
        var host = Substring(peer)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return IPLiteral.canonical(String(host)) ?? String(host)
    }
}
