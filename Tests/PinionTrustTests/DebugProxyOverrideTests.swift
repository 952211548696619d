// The debug proxy override's decision (PinionTrust, pure): only verified chains ending in a named proxy CA,
// on the domains listed, bypass the pins; every other verdict stands, and each bypass is a reported use.

import PinionCore
import PinionTrust
import Testing

private func pin(_ fill: UInt8) throws -> Pin { try Pin(digest: [UInt8](repeating: fill, count: 32)) }

/// The client's verdict for a host whose verified chain has these SPKI digests (leaf first).
private func verdict(_ host: String, _ chain: [Pin], enforce: Bool = true) throws -> ConnectionVerdict {
    let policy = MergedPolicy([
        PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: enforce, pins: [try pin(1)])
    ])
    switch evaluate(host: host, verifiedChain: chain.map(\.digest), policy: policy) {
    case .trusted(let pin, let entry): return .trusted(pin: pin, entry: entry)
    case .notPinned: return .notPinned
    case .reportOnly(let failure): return .reportOnly(failure)
    case .rejected(let failure): return .rejected(failure)
    }
}

@Suite struct DebugProxyOverrideTests {
    let proxyCA: Pin
    let realChain: [Pin]
    let proxiedChain: [Pin]
    let mdmChain: [Pin]

    init() throws {
        proxyCA = try pin(0x50)
        realChain = [try pin(9), try pin(1), try pin(0x70)]  // the pinned intermediate, a public root
        proxiedChain = [try pin(0x51), proxyCA]  // the proxy's forged leaf, then its CA
        mdmChain = [try pin(0x61), try pin(0x60)]  // another user-installed CA
    }

    @Test func aChainEndingInTheNamedProxyCABypassesTheListedDomainsPinsAndIsReported() throws {
        let override = try DebugProxyOverride(proxyCAs: [proxyCA], domains: .only(["example.test"]))
        let rejected = try verdict("api.example.test", proxiedChain)
        let decision = override.decide(host: "API.example.test.", verifiedChainPins: proxiedChain, verdict: rejected)
        guard case .bypassed(let use) = decision else {
            Issue.record("not bypassed: \(decision)")
            return
        }
        #expect(decision.allowsConnection)
        #expect(use.host == "API.example.test.")
        #expect(use.proxyCA == proxyCA)
        #expect(use.overridden == rejected)
        #expect(use.description.contains("UNSAFE") && use.description.contains(proxyCA.description))
        let reportOnly = try verdict("api.example.test", proxiedChain, enforce: false)
        let soft = override.decide(host: "api.example.test", verifiedChainPins: proxiedChain, verdict: reportOnly)
        guard case .bypassed(let softUse) = soft else {
            Issue.record("report-only not bypassed: \(soft)")
            return
        }
        #expect(softUse.overridden == reportOnly && softUse.proxyCA == proxyCA)
    }

    @Test func anotherCANeverBypasses() throws {
        let override = try DebugProxyOverride(proxyCAs: [proxyCA], domains: .all)
        let rejected = try verdict("api.example.test", mdmChain)
        let decision = override.decide(host: "api.example.test", verifiedChainPins: mdmChain, verdict: rejected)
        #expect(decision == .unchanged(rejected))
        #expect(!decision.allowsConnection)
        // The proxy CA inside the chain but not its anchor: not a chain that ends in it.
        let middle = [try pin(0x51), proxyCA, try pin(0x60)]
        let inner = try verdict("api.example.test", middle)
        #expect(
            override.decide(host: "api.example.test", verifiedChainPins: middle, verdict: inner) == .unchanged(inner))
        #expect(override.decide(host: "api.example.test", verifiedChainPins: [], verdict: inner) == .unchanged(inner))
    }

    @Test func aPinnedDomainsRealChainKeepsItsVerdict() throws {
        let override = try DebugProxyOverride(proxyCAs: [proxyCA], domains: .all)
        let trusted = try verdict("api.example.test", realChain)
        #expect(
            override.decide(host: "api.example.test", verifiedChainPins: realChain, verdict: trusted)
                == .unchanged(trusted))
        // A real chain that fails its pins (a rotated key) is still refused: the override never loosens it.
        let rotated = [try pin(9), try pin(8), try pin(0x70)]
        let rejected = try verdict("api.example.test", rotated)
        #expect(
            override.decide(host: "api.example.test", verifiedChainPins: rotated, verdict: rejected)
                == .unchanged(rejected))
    }

    @Test func hostsOutsideTheListedDomainsKeepTheirVerdict() throws {
        let override = try DebugProxyOverride(proxyCAs: [proxyCA], domains: .only(["other.test"]))
        let rejected = try verdict("api.example.test", proxiedChain)
        #expect(
            override.decide(host: "api.example.test", verifiedChainPins: proxiedChain, verdict: rejected)
                == .unchanged(rejected))
        #expect(override.covers(host: "a.other.test") && override.covers(host: "OTHER.test."))
        #expect(!override.covers(host: "notother.test") && !override.covers(host: "127.0.0.1"))
    }

    @Test func withoutAFailureThereIsNoUse() throws {
        let override = try DebugProxyOverride(proxyCAs: [proxyCA], domains: .all)
        let unpinned = try verdict("www.elsewhere.test", proxiedChain)
        #expect(unpinned == .notPinned)
        #expect(
            override.decide(host: "www.elsewhere.test", verifiedChainPins: proxiedChain, verdict: unpinned)
                == .unchanged(.notPinned))
    }

    @Test func badOverridesAreRefused() throws {
        #expect(throws: DebugProxyOverride.Failure.noProxyCA) { try DebugProxyOverride(proxyCAs: [], domains: .all) }
        #expect(throws: DebugProxyOverride.Failure.noDomains) {
            try DebugProxyOverride(proxyCAs: [proxyCA], domains: .only([]))
        }
        for name in ["", ".", "10.0.0.1", "[::1]", "::1"] {
            #expect(throws: DebugProxyOverride.Failure.invalidDomain(name)) {
                try DebugProxyOverride(proxyCAs: [proxyCA], domains: .only([name]))
            }
        }
    }
}
