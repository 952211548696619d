// Benchmark 1: the client's refresh work (parse + verify + merge) against libsodium
// verification of the same PAE plus Foundation's JSONSerialization of the same payload.

import BenchSodium
import Foundation
import PinionCore
import PinionCrypto
import PinionLinux

#if canImport(Glibc)
    import Glibc
#endif

/// The standard limits (docs/DESIGN.md §5). Since the standard envelope limit became 8 MiB, the
/// 10,000-domain manifest (about 4.3 MB with 3 pins a domain) fits it; the raise below only
/// applies to a generated envelope over the standard limit. Every other limit stays standard.
func benchLimits(for envelope: [UInt8]) -> Limits {
    var limits = Limits.standard
    if envelope.count > limits.maxEnvelopeBytes { limits.maxEnvelopeBytes = 8 * 1024 * 1024 }
    return limits
}

/// The SDK's pure refresh of one manifest: TrustCore.refresh (envelope, signatures,
/// strict payload, rules) with fetch closures returning bytes, then the fail-closed merge
/// with a two-domain baseline (PolicySnapshot), as PinningClient does after a refresh.
struct PinionRefresh {
    let core: TrustCore
    let initial: TrustedState
    let baseline: Baseline
    let manifest: [UInt8]
    let limits: Limits
    let now = Timestamp(Date())

    init(root: [UInt8], manifest: [UInt8]) {
        limits = benchLimits(for: manifest)
        guard let core = try? TrustCore(scope: benchScope, embeddedRoot: root, crypto: .sodium, limits: limits) else {
            fail("the benchmark root does not verify")
        }
        self.core = core
        initial = core.initialState()
        self.manifest = manifest
        guard
            let baseline = try? Baseline(domains: [
                PinnedDomain(name: pinnedName, includeSubdomains: true, pins: [randomPin(), randomPin()]),
                PinnedDomain(name: "other.example", pins: [randomPin(), randomPin()]),
            ])
        else { fail("baseline refused") }
        self.baseline = baseline
    }

    func run() -> PolicySnapshot {
        let result = core.refresh(
            initial, startTime: now, fetcher: MemoryFetcher(manifest: manifest, etag: "\"bench\""))
        guard case .updated = result.outcome else { fail("refresh did not update: \(result.outcome)") }
        let state = result.state
        return PolicySnapshot(
            baseline: baseline, manifest: state.manifest, manifestValid: state.manifestValid,
            revoked: state.revoked, staleGrace: 0, forcedDomains: state.forcedDomains,
            rootExpiresAt: state.chain.newest.payload.expiresAt)
    }
}

/// The reference: crypto_sign_verify_detached over the envelope's PAE, then
/// JSONSerialization of the payload. Inputs are prepared outside the timed part.
struct ReferenceRefresh {
    let pae: [UInt8]
    let signature: [UInt8]
    let publicKey: [UInt8]
    let payload: Data

    init(root: [UInt8], manifest: [UInt8]) {
        guard let rootEnvelope = try? Envelope.parse(root),
            let rootPayload = try? RootPayload.parse(rootEnvelope.payload, crypto: .sodium),
            let envelope = try? Envelope.parse(manifest, limits: benchLimits(for: manifest)),
            let signature = envelope.signatures.first,
            let key = rootPayload.publicKey(for: signature.keyID)
        else { fail("cannot prepare the reference inputs") }
        pae = envelope.signingInput
        self.signature = signature.signature
        publicKey = key
        payload = Data(envelope.payload)
    }

    func run() -> Any {
        guard crypto_sign_verify_detached(signature, pae, UInt64(pae.count), publicKey) == 0 else {
            fail("reference signature does not verify")
        }
        guard let object = try? JSONSerialization.jsonObject(with: payload) else { fail("reference JSON failed") }
        return object
    }
}

/// `refresh DIR REPS`: one result line per manifest size.
func benchRefresh(directory: String, repetitions: Int) {
    let root = readFile(directory + "/root.json")
    for count in manifestSizes {
        let manifest = readFile(directory + "/manifest-\(count).json")
        let pinion = PinionRefresh(root: root, manifest: manifest)
        let reference = ReferenceRefresh(root: root, manifest: manifest)
        blackHole(pinion.run())
        blackHole(reference.run())
        var pinionTimes: [Double] = []
        var referenceTimes: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<repetitions {
            let r = cpuNanosecondsPerCall { blackHole(reference.run()) }
            let p = cpuNanosecondsPerCall { blackHole(pinion.run()) }
            pinionTimes.append(p)
            referenceTimes.append(r)
            ratios.append(p / r)
        }
        // Where the time goes, for the profile section (same run, medians).
        var phases: [String: [Double]] = [:]
        let verifiedRoot = pinion.initial.chain.newest
        for _ in 0..<repetitions {
            phases["envelopeParse", default: []].append(
                cpuNanosecondsPerCall { blackHole(try? Envelope.parse(manifest, limits: pinion.limits)) })
            phases["manifestVerify", default: []].append(
                cpuNanosecondsPerCall {
                    blackHole(
                        try? ManifestVerifier.verify(
                            manifest, under: verifiedRoot, crypto: .sodium, limits: pinion.limits))
                })
            phases["refreshOnly", default: []].append(
                cpuNanosecondsPerCall {
                    blackHole(
                        pinion.core.refresh(
                            pinion.initial, startTime: pinion.now, fetcher: MemoryFetcher(manifest: manifest)))
                })
        }
        var line = ResultLine()
        line["benchmark"] = "refresh"
        line["domains"] = count
        line["envelopeBytes"] = manifest.count
        line["maxEnvelopeBytes"] = pinion.limits.maxEnvelopeBytes
        line["standardMaxEnvelopeBytes"] = Limits.standard.maxEnvelopeBytes
        line["pinionNs"] = median(pinionTimes)
        line["referenceNs"] = median(referenceTimes)
        line["ratio"] = median(ratios)
        line["ratios"] = ratios
        line["repetitions"] = repetitions
        line["phasesNs"] = phases.mapValues { median($0) }
        line.print()
    }
}

/// `rss DIR DOMAINS MODE`: one refresh (MODE pinion), one reference (MODE reference) or
/// nothing (MODE load: the file read only) in this process, then its peak resident set.
func measurePeakMemory(directory: String, domains: Int, mode: String) {
    let root = readFile(directory + "/root.json")
    let manifest = readFile(directory + "/manifest-\(domains).json")
    switch mode {
    case "pinion": blackHole(PinionRefresh(root: root, manifest: manifest).run())
    case "reference": blackHole(ReferenceRefresh(root: root, manifest: manifest).run())
    case "load": blackHole(manifest)
    default: fail("unknown mode \(mode)")
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    var line = ResultLine()
    line["benchmark"] = "rss"
    line["domains"] = domains
    line["mode"] = mode
    line["maxRSSKiB"] = usage.ru_maxrss
    line.print()
}

/// `profile-refresh DIR DOMAINS ITERATIONS`: the Pinion side only, for
/// `valgrind --tool=callgrind` (see RESULTS.md, "Profiles").
func profileRefresh(directory: String, domains: Int, iterations: Int) {
    let pinion = PinionRefresh(
        root: readFile(directory + "/root.json"), manifest: readFile(directory + "/manifest-\(domains).json"))
    for _ in 0..<iterations { blackHole(pinion.run()) }
}
