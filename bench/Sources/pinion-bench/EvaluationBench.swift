// Benchmark 2: pin evaluation per connection (Evaluation.swift) on a 10,000-domain policy
// and a 3-certificate chain, against the SHA-256 of the chain's three SPKI DER encodings.

import BenchOpenSSL
import Foundation
import PinionCore
import PinionLinux

/// SHA-256 of each SPKI with OpenSSL's EVP_Digest, into fresh arrays: what the SDK does per
/// connection to build `verifiedSPKISHA256` (PinnedHTTPSClient, OpenSSLSupport.sha256).
func spkiDigests(_ spkis: [[UInt8]]) -> [[UInt8]] {
    spkis.map { spki in
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = spki.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        if status != 1 { fail("EVP_Digest failed") }
        return digest
    }
}

/// `evaluate DIR REPS`: one result line per case.
func benchEvaluation(directory: String, repetitions: Int) {
    let pinion = PinionRefresh(
        root: readFile(directory + "/root.json"), manifest: readFile(directory + "/manifest-10000.json"))
    let policy = pinion.run().policy(at: pinion.now)
    guard policy.entries.count >= 10_000 else { fail("the policy has \(policy.entries.count) entries") }
    let spkis = (0..<3).map { readFile(directory + "/spki-\($0).der") }
    let digests = spkiDigests(spkis)
    let cases: [(name: String, host: String, entry: String, pinIndex: Int)] = [
        ("exact host, leaf pin", pinnedName, pinnedName, 0),
        (
            "subdomain of an includeSubdomains entry, intermediate pin", "www.eu." + parentPinnedName, parentPinnedName,
            1
        ),
    ]
    for (name, host, expectedEntry, expectedIndex) in cases {
        guard case .trusted(let pin, let entry) = evaluate(host: host, verifiedChain: digests, policy: policy),
            entry == expectedEntry, pin.digest == digests[expectedIndex]
        else {
            fail("\(name): \(evaluate(host: host, verifiedChain: digests, policy: policy))")
        }
        var referenceTimes: [Double] = []
        var lookupTimes: [Double] = []
        var connectionTimes: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<repetitions {
            let r = cpuNanosecondsPerCall(minimumNanoseconds: 100_000_000) { blackHole(spkiDigests(spkis)) }
            let e = cpuNanosecondsPerCall(minimumNanoseconds: 100_000_000) {
                blackHole(evaluate(host: host, verifiedChain: digests, policy: policy))
            }
            let c = cpuNanosecondsPerCall(minimumNanoseconds: 100_000_000) {
                blackHole(evaluate(host: host, verifiedChain: spkiDigests(spkis), policy: policy))
            }
            referenceTimes.append(r)
            lookupTimes.append(e)
            connectionTimes.append(c)
            ratios.append(e / r)
        }
        var line = ResultLine()
        line["benchmark"] = "evaluate"
        line["case"] = name
        line["host"] = host
        line["policyEntries"] = policy.entries.count
        line["spkiBytes"] = spkis.map(\.count)
        line["referenceNs"] = median(referenceTimes)
        line["lookupNs"] = median(lookupTimes)
        line["connectionNs"] = median(connectionTimes)
        line["ratio"] = median(ratios)
        line["ratios"] = ratios
        line["repetitions"] = repetitions
        line.print()
    }
}

/// `profile-evaluate DIR ITERATIONS`: the lookup of the second case only, for callgrind.
func profileEvaluation(directory: String, iterations: Int) {
    let pinion = PinionRefresh(
        root: readFile(directory + "/root.json"), manifest: readFile(directory + "/manifest-10000.json"))
    let policy = pinion.run().policy(at: pinion.now)
    let digests = spkiDigests((0..<3).map { readFile(directory + "/spki-\($0).der") })
    let host = "www.eu." + parentPinnedName
    for _ in 0..<iterations { blackHole(evaluate(host: host, verifiedChain: digests, policy: policy)) }
}
