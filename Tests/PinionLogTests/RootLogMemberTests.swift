// The root's `log` member (docs/DESIGN.md §12): round trip, and every malformed or unsafe value refused at parse time.

import PinionCore
import PinionCrypto
import PinionTrust
import Testing

@Suite struct RootLogMemberTests {
    let fixture: LogFixture
    let base: RootPayload

    init() throws {
        fixture = try LogFixture()
        let key = try Ed25519SecretKey.generate()
        let entry = RootPayload.Key(keyID: key.publicKey.keyID, publicKey: key.publicKey.raw)
        base = RootPayload(
            scope: "example", version: 1, issuedAt: Timestamp(secondsSince1970: 1_796_029_200),
            expiresAt: Timestamp(secondsSince1970: 1_796_029_200 + 86_400 * 365), maxManifestLifetime: 86_400 * 90,
            keys: [entry], rootRole: .init(keyIDs: [entry.keyID], threshold: 1),
            pinsRole: .init(keyIDs: [entry.keyID], threshold: 1), log: fixture.policy)
    }

    /// The payload's bytes with `old` replaced by `new` once (the test fails if `old` is absent).
    func edited(_ old: String, _ new: String) throws -> [UInt8] {
        let text = String(decoding: base.serialized(), as: UTF8.self)
        try #require(text.contains(old), "\(old) not in the payload")
        guard let range = text.range(of: old) else { return [] }
        return Array(text.replacingCharacters(in: range, with: new).utf8)
    }

    func refusal(_ bytes: [UInt8]) -> FormatError? {
        do {
            _ = try RootPayload.parse(bytes, crypto: crypto)
            return nil
        } catch { return error }
    }

    @Test func roundTripKeepsEveryMember() throws {
        let parsed = try RootPayload.parse(base.serialized(), crypto: crypto)
        #expect(parsed.log == fixture.policy)
        #expect(parsed.serialized() == base.serialized())
        let text = String(decoding: base.serialized(), as: UTF8.self)
        #expect(text.contains("\"origin\": \"\(LogFixture.origin)\""))
        #expect(text.contains("\"key\": \"\(fixture.policy.logKey.text)\""))
        #expect(text.contains("\"checkpointGrace\": 604800"))
    }

    @Test func rootWithoutLogHasNone() throws {
        var plain = base
        plain.log = nil
        let parsed = try RootPayload.parse(plain.serialized(), crypto: crypto)
        #expect(parsed.log == nil)
        #expect(!String(decoding: plain.serialized(), as: UTF8.self).contains("\"log\""))
    }

    @Test func graceDefaultsToSevenDaysWhenAbsent() throws {
        let parsed = try RootPayload.parse(
            try edited("\"checkpointGrace\": 604800", "\"x-grace-note\": 1"), crypto: crypto)
        #expect(parsed.log?.checkpointGrace == LogPolicy.defaultGrace)
    }

    @Test func witnessKeyListedTwiceIsRefused() throws {
        let first = fixture.policy.witnesses[0].key.text
        let second = fixture.policy.witnesses[1].key.text
        let error = refusal(try edited(second, first))
        #expect(error?.path == "log")
        guard case .invalidLog(let reason)? = error?.rule else {
            Issue.record("expected invalidLog, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("repeats another witness's key"))
    }

    @Test func logKeyAsWitnessIsRefused() throws {
        // The log key re-typed as a cosignature key: same public key, type 0x04.
        let logKey = fixture.policy.logKey
        let asWitness = try NoteVerifierKey(
            name: "w1.example", type: .cosignatureV1, publicKey: logKey.publicKey, hasher: crypto.hasher)
        let error = refusal(try edited(fixture.policy.witnesses[0].key.text, asWitness.text))
        guard case .invalidLog(let reason)? = error?.rule else {
            Issue.record("expected invalidLog, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("log's own key"))
    }

    @Test func wrongKeyTypesAreRefused() throws {
        // A witness key of type 0x01 in place of 0x04, and the log key as a 0x04 key.
        let swapped = try NoteVerifierKey(
            name: "w1.example", type: .ed25519, publicKey: fixture.policy.witnesses[0].key.publicKey,
            hasher: crypto.hasher)
        guard
            case .invalidLog(let reason)? = refusal(try edited(fixture.policy.witnesses[0].key.text, swapped.text))?
                .rule
        else {
            Issue.record("expected invalidLog")
            return
        }
        #expect(reason.contains("0x04"))
        let logAs04 = try NoteVerifierKey(
            name: LogFixture.origin, type: .cosignatureV1, publicKey: fixture.policy.logKey.publicKey,
            hasher: crypto.hasher)
        #expect(refusal(try edited(fixture.policy.logKey.text, logAs04.text)) != nil)
    }

    @Test func malformedVerifierKeysAreRefusedWithTheirPath() throws {
        let key = fixture.policy.logKey.text
        // A wrong key hash, a truncated key, an unknown key type, no separators.
        var badHash = Array(key)
        let hashStart = key.distance(from: key.startIndex, to: key.firstIndex(of: "+") ?? key.startIndex) + 1
        badHash[hashStart] = badHash[hashStart] == "0" ? "1" : "0"
        for bad in [
            String(badHash), String(key.dropLast(4)), "nokeyhere", key.replacingOccurrences(of: "+", with: " "),
        ] {
            let error = refusal(try edited("\"key\": \"\(key)\"", "\"key\": \"\(bad)\""))
            #expect(error?.path == "log.key", "\(bad)")
            guard case .invalidLog? = error?.rule else {
                Issue.record("expected invalidLog for \(bad), got \(String(describing: error))")
                continue
            }
        }
        let witnessError = refusal(try edited(fixture.policy.witnesses[2].key.text, "w3.example+00000000+AQ=="))
        #expect(witnessError?.path == "log.witnesses[2].key")
    }

    @Test func quorumOutOfRangeIsRefused() throws {
        for bad in ["0", "4", "-1", "33"] {
            #expect(refusal(try edited("\"quorum\": 2", "\"quorum\": \(bad)")) != nil, "quorum \(bad)")
        }
        #expect(refusal(try edited("\"quorum\": 2", "\"quorum\": \"2\"")) != nil)
    }

    @Test func negativeAgesAndUnknownMembersAreRefused() throws {
        #expect(refusal(try edited("\"maxCheckpointAge\": 86400", "\"maxCheckpointAge\": -1")) != nil)
        #expect(refusal(try edited("\"checkpointGrace\": 604800", "\"checkpointGrace\": -5")) != nil)
        #expect(refusal(try edited("\"maxCheckpointAge\": 86400", "\"maxCheckpointAge\": 1.5")) != nil)
        let unknown = refusal(try edited("\"quorum\": 2", "\"quorum\": 2,\"witnessQuorum\": 2"))
        #expect(unknown?.rule == .unknownMember("witnessQuorum"))
        #expect(
            refusal(try edited("\"url\": \"https://w1.example\"", "\"url\": \"https://w1.example\",\"name\": \"x\""))
                != nil)
        let maxAgeZero = try RootPayload.parse(
            try edited("\"maxCheckpointAge\": 86400", "\"maxCheckpointAge\": 0"), crypto: crypto)
        #expect(maxAgeZero.log?.maxCheckpointAge == 0)
    }

    @Test func emptyOrMissingWitnessesAndOriginsAreRefused() throws {
        let text = String(decoding: base.serialized(), as: UTF8.self)
        guard let start = text.range(of: "\"witnesses\": ["), let end = text.range(of: "\"quorum\"") else {
            Issue.record("layout")
            return
        }
        let empty = text.replacingCharacters(in: start.upperBound..<end.lowerBound, with: "], ")
        #expect(refusal(Array(empty.utf8)) != nil)
        for bad in ["", "has space", "tab\there", String(repeating: "o", count: 257), "caf\u{E9}"] {
            #expect(
                refusal(try edited("\"origin\": \"\(LogFixture.origin)\"", "\"origin\": \"\(bad)\"")) != nil, "\(bad)")
        }
    }

    @Test func witnessURLsMustBePlainHTTPS() {
        for good in [
            "https://w1.example", "https://w1.example/", "https://w1.example:8443/witness", "https://127.0.0.1:4443",
            "https://[::1]:4443/w",
        ] {
            #expect(LogPolicy.isWitnessURL(good), "\(good)")
        }
        for bad in [
            "http://w1.example", "https://", "https://w1.example?x=1", "https://w1.example#f",
            "https://user@w1.example",
            "https://w1.example:0", "https://w1.example:99999", "https://w1.example:08443", "https://w1 example",
            "https://w1.example/\u{7F}", "ftp://w1.example", "https://w\u{E9}.example", "https://[::1",
            "https://[zz]:1",
            "https://a:1:2", "https://w1.example\\x", String(repeating: "h", count: 2049),
        ] {
            #expect(!LogPolicy.isWitnessURL(bad), "\(bad)")
        }
    }

    @Test func nonHTTPSWitnessURLIsRefusedInTheRoot() throws {
        let error = refusal(try edited("\"url\": \"https://w1.example\"", "\"url\": \"http://w1.example\""))
        guard case .invalidLog(let reason)? = error?.rule else {
            Issue.record("expected invalidLog, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("https://"))
    }
}
