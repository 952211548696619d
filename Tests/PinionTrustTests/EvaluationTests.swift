// Connection evaluation (docs/DESIGN.md §8 steps 2-4), pin failure reports (RFC 7469 §3) and the
// once-per-24-hours report throttle (§8 step 5).

import PinionCore
import PinionTrust
import Testing

/// A distinct pin per number (its digest is 32 bytes of `byte`).
private func pin(_ byte: UInt8) throws -> Pin { try Pin(digest: [UInt8](repeating: byte, count: 32)) }

/// The SPKI digest of a certificate whose key has the pin `pin(byte)`.
private func key(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

private func policy(_ domains: [PinnedDomain]) -> MergedPolicy { MergedPolicy(domains) }

@Suite struct EvaluationTests {
    // MARK: Host matching

    @Test func subdomainUnderIncludeSubdomainsEntryIsPinned() throws {
        let policy = policy([PinnedDomain(name: "example.test", includeSubdomains: true, pins: [try pin(1)])])
        for host in ["example.test", "api.example.test", "a.b.c.example.test"] {
            #expect(
                evaluate(host: host, verifiedChain: [key(1)], policy: policy)
                    == .trusted(pin: try pin(1), entry: "example.test"))
            #expect(evaluate(host: host, verifiedChain: [key(2)], policy: policy).failureReason == .noMatchingPin)
        }
    }

    @Test func subdomainUnderExactOnlyEntryIsNotPinned() throws {
        let policy = policy([PinnedDomain(name: "example.test", includeSubdomains: false, pins: [try pin(1)])])
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(2)], policy: policy) == .notPinned)
        #expect(evaluate(host: "example.test", verifiedChain: [key(2)], policy: policy).failureReason == .noMatchingPin)
    }

    @Test func trailingDotAndUpperCaseMatch() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(1)])])
        for host in ["api.example.test.", "API.Example.TEST", "Api.Example.Test."] {
            #expect(
                evaluate(host: host, verifiedChain: [key(1)], policy: policy)
                    == .trusted(pin: try pin(1), entry: "api.example.test"))
            guard case .rejected(let failure) = evaluate(host: host, verifiedChain: [key(2)], policy: policy) else {
                Issue.record("expected a rejection for \(host)")
                continue
            }
            #expect(failure.host == "api.example.test")
        }
    }

    @Test(arguments: ["notapi.example.test", "api.example.test.evil.test", "xapi.example.test", "example.test"])
    func matchesOnlyOnLabelBoundaries(host: String) throws {
        let policy = policy([PinnedDomain(name: "api.example.test", includeSubdomains: true, pins: [try pin(1)])])
        #expect(evaluate(host: host, verifiedChain: [key(2)], policy: policy) == .notPinned)
    }

    @Test(arguments: ["", ".", "127.0.0.1", "[::1]", "::1", "0x7f.0x1", "10.0.0.1."])
    func emptyNamesAndIPLiteralsAreNotPinned(host: String) throws {
        #expect(MergedPolicy.normalizedHost(host) == nil)
        let policy = policy([PinnedDomain(name: "example.test", includeSubdomains: true, pins: [try pin(1)])])
        #expect(evaluate(host: host, verifiedChain: [], policy: policy) == .notPinned)
    }

    @Test func normalisationStripsExactlyOneTrailingDot() {
        #expect(MergedPolicy.normalizedHost("API.Example.Test.") == "api.example.test")
        #expect(MergedPolicy.normalizedHost("api.example.test..") == "api.example.test.")
    }

    // MARK: The verified chain

    @Test func pinnedLeafIsTrusted() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(1), try pin(2)])])
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(2), key(8), key(9)], policy: policy)
                == .trusted(pin: try pin(2), entry: "api.example.test"))
    }

    @Test func pinnedIntermediateIsTrusted() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(5)])])
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(1), key(5), key(9)], policy: policy)
                == .trusted(pin: try pin(5), entry: "api.example.test"))
    }

    @Test func trustedNamesTheFirstPinFromTheLeaf() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(9), try pin(1)])])
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(1), key(9)], policy: policy)
                == .trusted(pin: try pin(1), entry: "api.example.test"))
    }

    @Test func unpinnedChainIsRejected() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(1), try pin(2)])])
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(3), key(4)], policy: policy)
                == .rejected(
                    PinFailure(
                        reason: .noMatchingPin, host: "api.example.test", entry: "api.example.test",
                        includeSubdomains: false, knownPins: [try pin(1), try pin(2)])))
    }

    @Test func digestsOfOtherLengthsNeverMatch() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(1)])])
        let result = evaluate(host: "api.example.test", verifiedChain: [Array(key(1).prefix(31)), []], policy: policy)
        #expect(result.failureReason == .noMatchingPin)
    }

    @Test func emptyVerifiedChainIsRejected() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [try pin(1)])])
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [], policy: policy)
                == .rejected(
                    PinFailure(
                        reason: .noVerifiedChain, host: "api.example.test", entry: "api.example.test",
                        includeSubdomains: false, knownPins: [try pin(1)])))
    }

    @Test func enforcedEntryWithoutPinsRefusesEveryConnection() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", pins: [])])
        for chain in [[], [key(1)]] {
            guard case .rejected(let failure) = evaluate(host: "api.example.test", verifiedChain: chain, policy: policy)
            else {
                Issue.record("expected a rejection")
                continue
            }
            #expect(failure.reason == .noUsablePin)
        }
    }

    // MARK: Report-only and enforce over all matches

    @Test func reportOnlyDomainGivesReportOnly() throws {
        let policy = policy([PinnedDomain(name: "api.example.test", enforce: false, pins: [try pin(1)])])
        let failure = PinFailure(
            reason: .noMatchingPin, host: "api.example.test", entry: "api.example.test", includeSubdomains: false,
            knownPins: [try pin(1)])
        #expect(evaluate(host: "api.example.test", verifiedChain: [key(2)], policy: policy) == .reportOnly(failure))
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(1)], policy: policy)
                == .trusted(pin: try pin(1), entry: "api.example.test"))
        var noChain = failure
        noChain.reason = .noVerifiedChain
        #expect(evaluate(host: "api.example.test", verifiedChain: [], policy: policy) == .reportOnly(noChain))
    }

    @Test func longestMatchProvidesPinsWhileEnforceIsOrOfAllMatches() throws {
        let policy = policy([
            PinnedDomain(name: "example.test", includeSubdomains: true, enforce: true, pins: [try pin(1)]),
            PinnedDomain(name: "api.example.test", includeSubdomains: false, enforce: false, pins: [try pin(2)]),
        ])
        // The parent's pin does not count for the narrower entry; its enforce does.
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(1)], policy: policy)
                == .rejected(
                    PinFailure(
                        reason: .noMatchingPin, host: "api.example.test", entry: "api.example.test",
                        includeSubdomains: false, knownPins: [try pin(2)])))
        #expect(
            evaluate(host: "api.example.test", verifiedChain: [key(2)], policy: policy)
                == .trusted(pin: try pin(2), entry: "api.example.test"))
        // The narrower entry is exact-only: its subdomains fall to the parent.
        #expect(
            evaluate(host: "www.api.example.test", verifiedChain: [key(1)], policy: policy)
                == .trusted(pin: try pin(1), entry: "example.test"))
    }

    @Test func narrowerEnforcedEntryUnderReportOnlyParentIsEnforced() throws {
        let policy = policy([
            PinnedDomain(name: "example.test", includeSubdomains: true, enforce: false, pins: [try pin(1)]),
            PinnedDomain(name: "api.example.test", includeSubdomains: true, enforce: true, pins: [try pin(2)]),
        ])
        #expect(
            evaluate(host: "x.api.example.test", verifiedChain: [key(1)], policy: policy).failureReason
                == .noMatchingPin)
        guard case .rejected = evaluate(host: "x.api.example.test", verifiedChain: [key(1)], policy: policy) else {
            Issue.record("expected a rejection")
            return
        }
        guard case .reportOnly = evaluate(host: "www.example.test", verifiedChain: [key(2)], policy: policy) else {
            Issue.record("expected report-only")
            return
        }
    }

    @Test func parentWithoutIncludeSubdomainsDoesNotAddEnforce() throws {
        let policy = policy([
            PinnedDomain(name: "example.test", includeSubdomains: false, enforce: true, pins: [try pin(1)]),
            PinnedDomain(name: "api.example.test", enforce: false, pins: [try pin(2)]),
        ])
        guard case .reportOnly = evaluate(host: "api.example.test", verifiedChain: [key(1)], policy: policy) else {
            Issue.record("expected report-only")
            return
        }
    }

    @Test func hostPolicyOfLargePolicyUsesExactAndParentEntries() throws {
        var domains = (0..<10_000).map { index in
            PinnedDomain(name: "host\(index).example.test", pins: [])
        }
        domains.append(PinnedDomain(name: "example.test", includeSubdomains: true, enforce: false, pins: [try pin(1)]))
        let policy = policy(domains)
        #expect(policy.entries.count == 10_001)
        let match = try #require(policy.hostPolicy(for: "HOST9999.example.test."))
        #expect(match.host == "host9999.example.test")
        #expect(match.entry.name == "host9999.example.test")
        #expect(match.enforce == true)
        #expect(policy.hostPolicy(for: "other.example.test")?.entry.name == "example.test")
        #expect(policy.hostPolicy(for: "example.org") == nil)
    }

    // MARK: Reports (RFC 7469 §3)

    private func report(port: Int = 443, at seconds: Int64 = 1_800_000_000) throws -> PinFailureReport {
        let failure = PinFailure(
            reason: .noMatchingPin, host: "www.example.test", entry: "example.test", includeSubdomains: true,
            knownPins: [try pin(1)])
        return PinFailureReport(
            failure: failure, port: port, dateTime: Timestamp(secondsSince1970: seconds),
            servedCertificateChain: [PinFailureReport.pem(certificateDER: [1, 2, 3])],
            validatedCertificateChain: [PinFailureReport.pem(certificateDER: [1, 2, 3])],
            effectiveExpirationDate: Timestamp(secondsSince1970: 1_800_086_400))
    }

    @Test func reportHasTheFieldsOfRFC7469() throws {
        let json = try StrictJSONParser.parse(report().jsonBytes(), limits: Limits.standard.json)
        guard case .object(let object) = json else {
            Issue.record("expected an object")
            return
        }
        #expect(
            object.members.map(\.name) == [
                "date-time", "hostname", "port", "effective-expiration-date", "include-subdomains", "noted-hostname",
                "served-certificate-chain", "validated-certificate-chain", "known-pins",
            ])
        let pem = "-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----"
        #expect(object["date-time"] == .string("2027-01-15T08:00:00Z"))
        #expect(object["hostname"] == .string("www.example.test"))
        #expect(object["port"] == .number("443"))
        #expect(object["effective-expiration-date"] == .string("2027-01-16T08:00:00Z"))
        #expect(object["include-subdomains"] == .bool(true))
        #expect(object["noted-hostname"] == .string("example.test"))
        #expect(object["served-certificate-chain"] == .array([.string(pem)]))
        #expect(object["validated-certificate-chain"] == .array([.string(pem)]))
        let encoded = String(try pin(1).description.dropFirst("sha256/".count))
        #expect(object["known-pins"] == .array([.string("pin-sha256=\"\(encoded)\"")]))
    }

    @Test func reportOfBaselinePinsLeavesTheExpirationDateOut() throws {
        // RFC 7469 §3 defines effective-expiration-date as a date; baseline pins do not expire.
        var report = try report()
        report.effectiveExpirationDate = nil
        guard case .object(let object) = try StrictJSONParser.parse(report.jsonBytes(), limits: Limits.standard.json)
        else {
            Issue.record("expected an object")
            return
        }
        #expect(object["effective-expiration-date"] == nil)
        #expect(object.members.map(\.name).contains("known-pins"))
    }

    @Test func pemWrapsBase64At64Characters() {
        let pem = PinFailureReport.pem(certificateDER: [UInt8](repeating: 0, count: 100))
        let lines = pem.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.map(\.count) == [27, 64, 64, 8, 25])
        #expect(lines.first == "-----BEGIN CERTIFICATE-----")
        #expect(lines.last == "-----END CERTIFICATE-----")
    }

    // MARK: Throttle (once per 24 hours)

    @Test func identicalReportWithin24HoursIsSuppressed() throws {
        var throttle = ReportThrottle(hasher: SodiumSHA256())
        let start = Timestamp(secondsSince1970: 1_800_000_000)
        let first = throttle.shouldSend(try report(at: start.secondsSince1970), at: start)
        // The date-time differs, the report is the same.
        let later = start.adding(seconds: 86_399)
        let suppressed = throttle.isSuppressed(try report(at: later.secondsSince1970), at: later)
        let second = throttle.shouldSend(try report(at: later.secondsSince1970), at: later)
        #expect(first)
        #expect(suppressed)
        #expect(!second)
    }

    @Test func identicalReportAfter24HoursIsSentAgain() throws {
        var throttle = ReportThrottle(hasher: SodiumSHA256())
        let start = Timestamp(secondsSince1970: 1_800_000_000)
        let sent = [0, 86_400, 86_401].map { offset in
            throttle.shouldSend(failureReport, at: start.adding(seconds: Int64(offset)))
        }
        #expect(sent == [true, true, false])
    }

    @Test func differentReportIsSent() throws {
        var throttle = ReportThrottle(hasher: SodiumSHA256())
        let now = Timestamp(secondsSince1970: 1_800_000_000)
        var otherChain = try report()
        otherChain.servedCertificateChain.append(PinFailureReport.pem(certificateDER: [4]))
        let sent = [try report(port: 443), try report(port: 8443), otherChain].map { report in
            throttle.shouldSend(report, at: now)
        }
        #expect(sent == [true, true, true])
        #expect(throttle.count == 3)
    }

    @Test func clockSteppedBackDoesNotSilenceReports() throws {
        var throttle = ReportThrottle(hasher: SodiumSHA256())
        let now = Timestamp(secondsSince1970: 1_800_000_000)
        let sent = [0, -60].map { offset in throttle.shouldSend(failureReport, at: now.adding(seconds: Int64(offset))) }
        #expect(sent == [true, true])
    }

    @Test func throttleMemoryIsBoundedAndForgetsTheOldest() throws {
        var throttle = ReportThrottle(capacity: 3, hasher: SodiumSHA256())
        let start = Timestamp(secondsSince1970: 1_800_000_000)
        var sent: [Bool] = []
        for port in 1...4 {
            sent.append(throttle.shouldSend(try report(port: port), at: start.adding(seconds: Int64(port))))
        }
        #expect(sent == [true, true, true, true])
        #expect(throttle.count == 3)
        // Port 1 was the oldest and is forgotten; port 2 is still remembered.
        #expect(!throttle.isSuppressed(try report(port: 1), at: start.adding(seconds: 11)))
        #expect(throttle.isSuppressed(try report(port: 2), at: start.adding(seconds: 11)))
    }

    /// One fixed report (the default of `report()`).
    private var failureReport: PinFailureReport {
        PinFailureReport(
            dateTime: Timestamp(secondsSince1970: 1_800_000_000), hostname: "www.example.test", port: 443,
            notedHostname: "example.test", includeSubdomains: true, servedCertificateChain: [],
            validatedCertificateChain: [], knownPins: [], effectiveExpirationDate: nil)
    }
}

extension ConnectionVerdict {
    /// The failure's reason for `.rejected` and `.reportOnly`, else nil.
    fileprivate var failureReason: PinFailure.Reason? {
        switch self {
        case .rejected(let failure), .reportOnly(let failure): return failure.reason
        case .trusted, .notPinned: return nil
        }
    }
}
