// Size and count limits shared by every part (docs/DESIGN.md §5), with their defaults.

/// Limits on untrusted documents. Defaults follow docs/DESIGN.md §5; all are configurable.
public struct Limits: Sendable, Equatable {
    /// The specVersion this build reads and writes.
    public static let specVersion: Int64 = 1
    /// Largest integer in any document: 2^53 - 1 (exact in every JSON implementation).
    public static let maxInteger: Int64 = 9_007_199_254_740_991

    /// Largest envelope, in bytes (default 8 MiB: a manifest at the domain limit with four
    /// pins per domain and long names fits, about 7.5 MB).
    public var maxEnvelopeBytes: Int
    /// Most domains in one manifest (default 10,000).
    public var maxDomains: Int
    /// Most pins in one domain entry (default 64).
    public var maxPinsPerDomain: Int
    /// Most signatures in one envelope (default 32).
    public var maxSignatures: Int
    /// Deepest JSON nesting (default 16).
    public var maxDepth: Int

    public init(
        maxEnvelopeBytes: Int = 8 * 1024 * 1024, maxDomains: Int = 10_000, maxPinsPerDomain: Int = 64,
        maxSignatures: Int = 32, maxDepth: Int = 16
    ) {
        self.maxEnvelopeBytes = maxEnvelopeBytes
        self.maxDomains = maxDomains
        self.maxPinsPerDomain = maxPinsPerDomain
        self.maxSignatures = maxSignatures
        self.maxDepth = maxDepth
    }

    /// The defaults of docs/DESIGN.md §5.
    public static let standard = Limits()

    /// Parser limits: a payload can never exceed the envelope, and no array or object of
    /// a Pinion document legitimately holds more elements than the largest list limit, so
    /// an over-long list is refused while it is read.
    public var json: JSONLimits {
        JSONLimits(
            maxBytes: maxEnvelopeBytes, maxDepth: maxDepth,
            maxElements: max(maxDomains, maxPinsPerDomain, maxSignatures),
            maxElementsByMember: ["signatures": maxSignatures, "pins": maxPinsPerDomain, "domains": maxDomains])
    }
}
