// Rate limiting of report POSTs per source network (a token bucket per IPv4 /24 or IPv6 /64,
// bounded memory) and the client address itself, optionally taken from trusted proxies.

import Foundation
import PinionSystem

/// Token buckets keyed by a text, the source network (`ReportClientAddress.sourcePrefix`).
/// Pure: the caller passes the time.
///
/// Each key may send `burst` reports at once and then `perMinute` a minute. At most
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

/// The address a report comes from, and the network it is counted against.
public enum ReportClientAddress {
    /// Why a forwarded address was refused.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The client's IP address: the connection's peer, or, when the peer lies in one of the
    /// trusted proxy ranges, the `X-Forwarded-For` entry those proxies appended. The list is
    /// read from its end: entries that are themselves trusted proxies (a CDN edge in front of
    /// a load balancer) are skipped, and the first one that is not is the client. Entries to
    /// its left are the client's own claims and are never read.
    ///
    /// - Parameters:
    ///   - peer: the connection's peer, `IP:PORT` or `[IPv6]:PORT`.
    ///   - forwardedFor: the `X-Forwarded-For` field values, in order.
    ///   - trustedProxies: the ranges whose forwarded address is believed; empty: none.
    /// - Returns: a canonical IP literal.
    /// - Throws: `Refusal` when a trusted proxy sent no usable forwarded address.
    public static func resolve(peer: String, forwardedFor: [String], trustedProxies: [IPRange]) throws(Refusal)
        -> String
    {
        let peerAddress = address(ofPeer: peer)
        func trusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }
        guard trusted(peerAddress) else { return peerAddress }
        let entries = forwardedFor.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let last = entries.last, !last.isEmpty else {
            throw Refusal(description: "the trusted proxy sent no X-Forwarded-For address")
        }
        for entry in entries.reversed() {
            guard let canonical = IPLiteral.canonical(entry) else {
                throw Refusal(
                    description: "the trusted proxy's X-Forwarded-For holds an entry that is not an IP address")
            }
            if !trusted(canonical) { return canonical }
        }
        throw Refusal(description: "every X-Forwarded-For address is a trusted proxy; the client is not named")
    }

    /// The network a client address is counted and stored as (`IPLiteral.networkPrefix`:
    /// IPv4 /24, IPv6 /64): one subscriber usually holds a whole IPv6 /64, so a quota per
    /// address would give one attacker 2^64 quotas; the rest of the address is not kept.
    ///
    /// - Parameter address: a canonical IP literal (from `resolve`).
    /// - Returns: the prefix in CIDR notation, or `address` itself when it is not a literal.
    public static func sourcePrefix(of address: String) -> String {
        IPLiteral.networkPrefix(address) ?? address
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
