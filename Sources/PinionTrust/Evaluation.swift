// Pin evaluation of one connection after X.509 validation (docs/DESIGN.md §8 steps 2-4).

import PinionCore

/// The outcome of checking a connection's verified chain against the effective policy: what
/// `evaluate(host:verifiedChain:policy:)` returns, what `PinningClient.check(_:)` and
/// `verdict(for:port:verifiedChainDER:servedChainDER:)` return to the app, and what
/// `pinion client connect` prints.
public enum ConnectionVerdict: Sendable, Equatable {
    /// A certificate on the verified chain has a pinned key: the connection goes on.
    /// - `pin`: the first pin met walking the chain from the leaf.
    /// - `entry`: the name of the policy entry the pins came from (the longest match).
    case trusted(pin: Pin, entry: String)
    /// No policy entry matches the host (or it is an IP literal or empty): X.509
    /// validation alone decides.
    case notPinned
    /// The pin check failed on an enforced host: the connection must be closed before one
    /// byte of the request is sent.
    case rejected(PinFailure)
    /// The pin check failed, but every matching entry is report-only: the connection goes
    /// on and the failure is reported (docs/DESIGN.md §8 step 4).
    case reportOnly(PinFailure)
}

/// Why a pinned host's connection failed the pin check, with what a report needs.
public struct PinFailure: Sendable, Equatable {
    /// The rule that failed.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The verified chain is empty or missing (for example a resumed TLS session).
        case noVerifiedChain
        /// The entry has no pins left (emptied by a manifest, revoked, or a manifest-only
        /// domain after expiry): every connection is refused (docs/DESIGN.md §7).
        case noUsablePin
        /// No certificate on the verified chain has a pinned key.
        case noMatchingPin

        /// The reason in words, for messages.
        public var description: String {
            switch self {
            case .noVerifiedChain: return "no verified certificate chain"
            case .noUsablePin: return "no usable pin for this domain"
            case .noMatchingPin: return "no key in the verified chain matches a pin"
            }
        }
    }

    /// The rule that failed.
    public var reason: Reason
    /// The host as evaluated: lowercase, one trailing dot removed.
    public var host: String
    /// The policy entry the pins came from (the longest match): RFC 7469 §3 `noted-hostname`.
    public var entry: String
    /// Whether that entry covers subdomains: RFC 7469 §3 `include-subdomains`.
    public var includeSubdomains: Bool
    /// The pins of that entry: RFC 7469 §3 `known-pins`.
    public var knownPins: [Pin]

    /// - Parameters:
    ///   - reason: the rule that failed.
    ///   - host: the normalised host name.
    ///   - entry: the name of the matching entry with the longest name.
    ///   - includeSubdomains: that entry's flag.
    ///   - knownPins: that entry's pins (possibly empty).
    public init(reason: Reason, host: String, entry: String, includeSubdomains: Bool, knownPins: [Pin]) {
        self.reason = reason
        self.host = host
        self.entry = entry
        self.includeSubdomains = includeSubdomains
        self.knownPins = knownPins
    }
}

/// What the policy demands of one host: the longest matching entry's pins and the OR of the
/// enforce flags of every matching entry (docs/DESIGN.md §8 step 2).
public struct HostPolicy: Sendable, Equatable {
    /// The host as matched: lowercase, one trailing dot removed.
    public var host: String
    /// The longest matching entry (the exact entry, or the nearest parent with
    /// includeSubdomains).
    public var entry: PinnedDomain
    /// OR of `enforce` over every matching entry: a narrower report-only entry never
    /// weakens an enforced parent.
    public var enforce: Bool

    /// - Parameters:
    ///   - host: the normalised host.
    ///   - entry: the longest matching entry.
    ///   - enforce: OR of the enforce flags of all matching entries.
    public init(host: String, entry: PinnedDomain, enforce: Bool) {
        self.host = host
        self.entry = entry
        self.enforce = enforce
    }
}

extension MergedPolicy {
    /// Normalises a host for matching (docs/DESIGN.md §8 step 2): ASCII letters lowercased and
    /// exactly one trailing dot removed.
    ///
    /// - Parameter host: the host the app connects to (no port, no brackets).
    /// - Returns: the normalised name, or nil when the host cannot be pinned by name: empty,
    ///   an IPv6 literal (any `:` or a leading `[`), or an IPv4 literal (last label all
    ///   digits or `0x` hex, the rule of `HostName.validate`).
    public static func normalizedHost(_ host: String) -> String? {
        var bytes = Array(host.utf8)
        var changed = false
        if bytes.last == UInt8(ascii: ".") {
            bytes.removeLast()
            changed = true
        }
        guard !bytes.isEmpty else { return nil }
        for index in bytes.indices where (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[index]) {
            bytes[index] += 0x20
            changed = true
        }
        if bytes.first == UInt8(ascii: "[") || bytes.contains(UInt8(ascii: ":")) { return nil }
        let lastLabel = bytes[(bytes.lastIndex(of: UInt8(ascii: ".")).map { $0 + 1 } ?? 0)...]
        let isDecimal =
            !lastLabel.isEmpty && lastLabel.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        let isHex =
            lastLabel.count >= 2 && lastLabel.starts(with: [UInt8(ascii: "0"), UInt8(ascii: "x")])
            && lastLabel.dropFirst(2).allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            }
        if isDecimal || isHex { return nil }
        // An already-normalised host (the usual case) is returned as it is, not copied.
        return changed ? String(decoding: bytes, as: UTF8.self) : host
    }

    /// The entries matching `host` (docs/DESIGN.md §8 step 2): the exact entry and every parent
    /// entry with includeSubdomains, matched on label boundaries only
    /// (`notapi.example.test` and `api.example.test.evil.test` do not match
    /// `api.example.test`).
    ///
    /// Cost: one dictionary lookup per label of the host, whatever the policy's size.
    ///
    /// - Parameter host: the host the app connects to.
    /// - Returns: the longest match and the ORed enforce flag, or nil when the host is not
    ///   pinned.
    public func hostPolicy(for host: String) -> HostPolicy? {
        guard let name = MergedPolicy.normalizedHost(host) else { return nil }
        var longest = entries[name]
        var enforce = longest?.enforce ?? false
        // Parents from the longest down; each suffix starts right after a dot. Walked over
        // the bytes: searching the UTF8View and converting Substrings cost more than the
        // lookups themselves (bench/RESULTS.md, pin evaluation).
        let bytes = Array(name.utf8)
        for dot in bytes.indices where bytes[dot] == UInt8(ascii: ".") {
            guard let parent = parentEntry(bytes[(dot + 1)...]) else { continue }
            if longest == nil { longest = parent }
            enforce = enforce || parent.enforce
        }
        guard let longest else { return nil }
        return HostPolicy(host: name, entry: longest, enforce: enforce)
    }
}

/// Checks a connection that passed X.509 validation against the effective policy
/// (docs/DESIGN.md §8 steps 2-4; RFC 7469 §2.6 pin validation on the verified chain).
///
/// - Parameters:
///   - host: the host the app connects to (any case, optionally with one trailing dot).
///   - verifiedChain: SHA-256 digests (32 bytes each) of the DER SubjectPublicKeyInfo of every
///     certificate on the chain OpenSSL verified (`SSL_get0_verified_chain`), leaf first.
///     Never the chain the peer sent: certificates off the verified path must not count.
///   - policy: the effective policy at the connection's time (`PolicySnapshot.policy(at:)`).
/// - Returns: `.notPinned` when no entry matches; `.trusted` when a digest of the chain is
///   in the longest match's pins; otherwise a `PinFailure` (checked in this order:
///   `.noUsablePin`, `.noVerifiedChain`, `.noMatchingPin`) as `.rejected` when any matching
///   entry enforces, else `.reportOnly`.
public func evaluate(host: String, verifiedChain: [[UInt8]], policy: MergedPolicy) -> ConnectionVerdict {
    guard let match = policy.hostPolicy(for: host) else { return .notPinned }
    let pins = match.entry.pins
    let reason: PinFailure.Reason
    if pins.isEmpty {
        reason = .noUsablePin
    } else if verifiedChain.isEmpty {
        reason = .noVerifiedChain
    } else {
        for digest in verifiedChain {
            if let pin = pins.first(where: { $0.digest == digest }) {
                return .trusted(pin: pin, entry: match.entry.name)
            }
        }
        reason = .noMatchingPin
    }
    let failure = PinFailure(
        reason: reason, host: match.host, entry: match.entry.name,
        includeSubdomains: match.entry.includeSubdomains, knownPins: pins)
    return match.enforce ? .rejected(failure) : .reportOnly(failure)
}
