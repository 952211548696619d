// One domain's pin set as the client holds it, from the app's baseline or a manifest.

import PinionCore

/// A domain entry: exact host name, whether it covers subdomains, whether failures are
/// enforced or only reported, and its SPKI SHA-256 pins (RFC 7469 §2.4).
public struct PinnedDomain: Sendable, Equatable {
    /// Lowercase A-label host name (`HostName.validate`).
    public var name: String
    /// The entry also matches every subdomain of `name`.
    public var includeSubdomains: Bool
    /// `false`: report-only (failures are reported, connections go on).
    public var enforce: Bool
    /// Accepted pins, in order; may be empty (every connection refused when enforced).
    public var pins: [Pin]

    public init(name: String, includeSubdomains: Bool = false, enforce: Bool = true, pins: [Pin]) {
        self.name = name
        self.includeSubdomains = includeSubdomains
        self.enforce = enforce
        self.pins = pins
    }

    /// The entry of a manifest domain.
    public init(_ domain: ManifestPayload.Domain) {
        self.init(
            name: domain.name, includeSubdomains: domain.includeSubdomains, enforce: domain.enforce, pins: domain.pins)
    }
}
