// The review tools show every member: for each leaf of a root, a manifest and their envelopes
// (every nesting level, `x-` members included), a change shows in `pinion diff`,
// `pinion manifest show` and `sign`'s summary. A member without a case here fails the walk.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct ReviewEveryMemberTests {
    /// What a change to one member pattern is, and the word the diff line for it carries.
    enum Case {
        /// Replace the leaf with this value; the diff names `word` on a changed line.
        case change(word: String, (JSONValue) -> JSONValue)
        /// The member is fixed by the format: any other value is refused by the strict parser.
        case fixed((JSONValue) -> JSONValue)
        /// The member is the payload itself, walked member by member.
        case payloadItself
    }

    /// Fixtures: the extra keys a change swaps in.
    struct Material {
        let spareKeyID: String
        let logKeyText: String
        let witnessKeyText: String
        let otherKeyBase64: String
    }

    static func noteKey(_ name: String, _ type: NoteKeyType) throws -> NoteVerifierKey {
        try NoteVerifierKey(name: name, type: type, publicKey: try makeKey().publicKey.raw, hasher: sodium.hasher)
    }

    /// Every object in the tree gets an `x-review` member.
    static func withExtensions(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            var members = object.members.map { JSONObject.Member($0.name, withExtensions($0.value)) }
            members.append(.init("x-review", .string("reviewed")))
            return .object(JSONObject(members))
        case .array(let elements): return .array(elements.map(withExtensions))
        default: return value
        }
    }

    static func json(_ bytes: [UInt8]) throws -> JSONValue {
        try StrictJSONParser.parse(bytes, limits: Limits.standard.json)
    }

    /// A root with every member set: two keys per role plus a spare key, pinsRoleSince, a log
    /// with two witnesses, and an `x-` member in every object.
    static func sampleRoot() throws -> (JSONValue, Material) {
        let rootKeys = [try makeKey(), try makeKey()]
        let pinsKeys = [try makeKey(), try makeKey()]
        let spare = try makeKey()
        var root = rootPayload(version: 2, rootKeys: rootKeys, pinsKeys: pinsKeys)
        root.keys.append(rootKey(spare))
        root.pinsRoleSince = 1
        root.log = try LogPolicy(
            origin: "example.com/pinion-log", logKey: try noteKey("example.com/pinion-log", .ed25519),
            witnesses: [
                .init(key: try noteKey("w1.example", .cosignatureV1), url: "https://w1.example/w"),
                .init(key: try noteKey("w2.example", .cosignatureV1), url: "https://w2.example/w"),
            ], quorum: 1, maxCheckpointAge: 3600, checkpointGrace: 86_400)
        root.extensions = [.init("x-top", .string("top"))]
        let material = Material(
            spareKeyID: spare.publicKey.keyID, logKeyText: try noteKey("log2.example/log", .ed25519).text,
            witnessKeyText: try noteKey("w3.example", .cosignatureV1).text,
            otherKeyBase64: Base64.encode(try makeKey().publicKey.raw))
        return (withExtensions(try json(root.serialized())), material)
    }

    /// A manifest with every member set: previous, two domains (one report-only covering
    /// subdomains), revoked pins, and an `x-` member in every object.
    static func sampleManifest() throws -> JSONValue {
        let manifest = ManifestPayload(
            scope: "com.example.app", rootVersion: 1, version: 2, issuedAt: t0, expiresAt: t0.adding(seconds: 30 * day),
            previous: [UInt8](repeating: 0x11, count: 32),
            domains: [
                .init(name: "api.example.com", pins: [pin(1), pin(2)]),
                .init(name: "cdn.example.com", includeSubdomains: true, enforce: false, pins: [pin(3), pin(4)]),
            ], revokedPins: [pin(9)])
        return withExtensions(try json(manifest.serialized()))
    }

    /// The envelope of `payload` signed by two keys, with an `x-` member in it and in each signature.
    static func envelope(_ kind: PayloadKind, _ payload: JSONValue) throws -> JSONValue {
        let signed = try sign(kind, JSONWriter.write(payload), with: [try makeKey(), try makeKey()])
        return withExtensions(try json(signed.serialized()))
    }

    static func shiftTime(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value, let time = try? Timestamp(rfc3339: text) else { return value }
        return .string(time.adding(seconds: day).description)
    }

    static func plusOne(_ value: JSONValue) -> JSONValue {
        guard case .number(let text) = value, let number = Int64(text) else { return value }
        return .number(String(number + 1))
    }

    static func toggle(_ value: JSONValue) -> JSONValue {
        guard case .bool(let flag) = value else { return value }
        return .bool(!flag)
    }

    /// The case for each member pattern. A pattern missing here fails the walk.
    static func cases(_ material: Material) -> [String: Case] {
        let fixedString: Case = .fixed { _ in .string("changed") }
        return [
            "type": fixedString, "specVersion": .fixed { _ in .number("2") },
            "scope": .change(word: "scope") { _ in .string("org.example.other") },
            "version": .change(word: "version", plusOne), "issuedAt": .change(word: "issuedAt", shiftTime),
            "expiresAt": .change(word: "expiresAt", shiftTime),
            "maxManifestLifetime": .change(word: "lifetime", plusOne),
            "keys.*.type": fixedString,
            "keys.*.public": .fixed { _ in .string(material.otherKeyBase64) },
            "roles.root.keyids[]": .change(word: "keyid") { _ in .string(material.spareKeyID) },
            "roles.pins.keyids[]": .change(word: "keyid") { _ in .string(material.spareKeyID) },
            "roles.root.threshold": .change(word: "threshold", plusOne),
            "roles.pins.threshold": .change(word: "threshold", plusOne),
            "pinsRoleSince": .change(word: "pinsRoleSince", plusOne),
            "log.origin": .change(word: "origin") { _ in .string("example.com/other-log") },
            "log.key": .change(word: "log key") { _ in .string(material.logKeyText) },
            "log.witnesses[].key": .change(word: "witness") { _ in .string(material.witnessKeyText) },
            "log.witnesses[].url": .change(word: "url") { _ in .string("https://elsewhere.example/w") },
            "log.quorum": .change(word: "quorum", plusOne),
            "log.maxCheckpointAge": .change(word: "maxCheckpointAge") { _ in .number("0") },
            "log.checkpointGrace": .change(word: "checkpointGrace", plusOne),
            "rootVersion": .change(word: "rootVersion", plusOne),
            "previous": .change(word: "previous") { _ in .string("sha256:" + String(repeating: "22", count: 32)) },
            "domains[].name": .change(word: "example.com") { value in
                guard case .string(let name) = value else { return value }
                return .string("other-" + name)
            },
            "domains[].includeSubdomains": .change(word: "includeSubdomains", toggle),
            "domains[].enforce": .change(word: "enforce", toggle),
            "domains[].pins[]": .change(word: "pin") { _ in .string(pin(7).description) },
            "revokedPins[]": .change(word: "revok") { _ in .string(pin(8).description) },
            "payloadType": .fixed { _ in .string("application/vnd.other+json") },
            "payload": .payloadItself,
            "signatures[].keyid": .change(word: "keyid") { _ in .string(String(repeating: "ab", count: 32)) },
            "signatures[].sig": .change(word: "signature bytes") { _ in
                .string(Base64.encode([UInt8](repeating: 7, count: 64)))
            },
        ]
    }

    /// The case of `pattern`: from the table, or an `x-` member's.
    static func lookup(_ pattern: String, _ table: [String: Case]) -> Case? {
        if let found = table[pattern] { return found }
        if pattern.split(separator: ".").last.map({ $0.hasPrefix("x-") }) == true {
            return .change(word: "x-") { _ in .string("changed by the test") }
        }
        return nil
    }

    /// `value` with leaf `target` (in `DocumentMembers.leaves` order) replaced.
    static func replacingLeaf(
        _ value: JSONValue, _ target: Int, _ counter: inout Int, _ transform: (JSONValue) -> JSONValue
    )
        -> JSONValue
    {
        switch value {
        case .object(let object) where !object.members.isEmpty:
            return .object(
                JSONObject(object.members.map { .init($0.name, replacingLeaf($0.value, target, &counter, transform)) }))
        case .array(let elements) where !elements.isEmpty:
            return .array(elements.map { replacingLeaf($0, target, &counter, transform) })
        default:
            defer { counter += 1 }
            return counter == target ? transform(value) : value
        }
    }

    /// Lines of `text` that are not `payload` hash lines or the diff's file header.
    static func reviewLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.hasPrefix("payload ") && !trimmed.hasPrefix("old ") && !trimmed.hasPrefix("new ")
                && !trimmed.hasPrefix("wrote ") && !trimmed.hasPrefix("signed by ") && !trimmed.hasPrefix("review ")
        }
    }

    /// Lines of `changed` not in `baseline`.
    static func newLines(_ changed: String, _ baseline: String) -> [String] {
        let before = Set(reviewLines(baseline))
        return reviewLines(changed).filter { !before.contains($0) }
    }

    /// One document under review: its file and how to rebuild it from a changed payload.
    struct Subject {
        let name: String
        let kind: PayloadKind
        let payload: JSONValue
        let envelope: JSONValue?
    }

    static func write(_ value: JSONValue, _ path: String) throws {
        try Data(JSONWriter.write(value)).write(to: URL(fileURLWithPath: path))
    }

    /// The envelope JSON with its payload replaced by `payload` (signatures kept as they are).
    static func reenvelope(_ envelope: JSONValue, _ payload: JSONValue) -> JSONValue {
        guard case .object(var object) = envelope else { return envelope }
        object.set("payload", .string(Base64.encode(JSONWriter.write(payload))))
        return .object(object)
    }

    /// Walks every leaf of `subject` (payload, then envelope) and checks the three tools.
    static func walk(_ subject: Subject, table: [String: Case], directory: String, key: String) throws -> Int {
        let original = directory + "/\(subject.name)-original.json"
        let changed = directory + "/\(subject.name)-changed.json"
        let signed = directory + "/\(subject.name)-signed.json"
        let document = subject.envelope ?? subject.payload
        try write(document, original)
        try write(document, changed)
        let baseShow = runPinion(["manifest", "show", original])
        #expect(baseShow.status == 0, "\(baseShow.err)")
        let baseDiff = runPinion(["diff", original, changed])
        #expect(baseDiff.status == 0, "\(baseDiff.err)")
        let baseSign = runPinion(["sign", "--key", key, "--allow-single-pin", changed, "-o", signed, "--force"])
        #expect(baseSign.status == 0, "\(baseSign.err)")
        var variants: [(DocumentMember, Case, JSONValue)] = []
        let payloadLeaves = DocumentMembers.leaves(subject.payload)
        for (index, leaf) in payloadLeaves.enumerated() {
            guard let found = lookup(leaf.pattern, table) else {
                Issue.record("\(subject.name): member \(leaf.path) (\(leaf.pattern)) has no review case")
                continue
            }
            var counter = 0
            let transform: (JSONValue) -> JSONValue
            switch found {
            case .change(_, let function), .fixed(let function): transform = function
            case .payloadItself: continue
            }
            let payload = replacingLeaf(subject.payload, index, &counter, transform)
            variants.append((leaf, found, subject.envelope.map { reenvelope($0, payload) } ?? payload))
        }
        if let envelope = subject.envelope {
            for (index, leaf) in DocumentMembers.leaves(envelope).enumerated() {
                guard let found = lookup(leaf.pattern, table) else {
                    Issue.record("\(subject.name): envelope member \(leaf.path) has no review case")
                    continue
                }
                var counter = 0
                switch found {
                case .change(_, let function), .fixed(let function):
                    variants.append((leaf, found, replacingLeaf(envelope, index, &counter, function)))
                case .payloadItself: continue
                }
            }
        }
        for (leaf, found, variant) in variants {
            try write(variant, changed)
            let show = runPinion(["manifest", "show", changed])
            if case .fixed = found {
                #expect(show.status != 0, "\(subject.name): \(leaf.path) changed yet accepted by the strict parser")
                continue
            }
            guard case .change(let word, _) = found else { continue }
            let where_ = "\(subject.name): \(leaf.path)"
            #expect(show.status == 0, "\(where_): \(show.err)")
            #expect(!newLines(show.out, baseShow.out).isEmpty, "\(where_): manifest show does not show the change")
            let diff = runPinion(["diff", original, changed])
            if leaf.pattern == "scope" {
                // Two scopes are never compared: the refusal names both.
                #expect(diff.status == 2 && diff.err.contains("org.example.other"), "\(where_): \(diff.err)")
            } else {
                #expect(diff.status == 0, "\(where_): \(diff.err)")
                let lines = newLines(diff.out, baseDiff.out)
                #expect(
                    lines.contains { $0.lowercased().contains(word.lowercased()) },
                    "\(where_): pinion diff does not name the change (\(word)); new lines: \(lines)")
            }
            let sign = runPinion(["sign", "--key", key, "--allow-single-pin", changed, "-o", signed, "--force"])
            #expect(sign.status == 0, "\(where_): \(sign.err)")
            #expect(!newLines(sign.out, baseSign.out).isEmpty, "\(where_): sign's summary does not show the change")
            if leaf.pattern != "scope" {
                let previous = runPinion([
                    "sign", "--key", key, "--allow-single-pin", "--previous", original, changed, "-o", signed,
                    "--force",
                ])
                #expect(previous.status == 0, "\(where_): \(previous.err)")
                #expect(
                    newLines(previous.out, baseSign.out).contains { $0.lowercased().contains(word.lowercased()) },
                    "\(where_): sign --previous does not name the change (\(word))")
            }
        }
        return variants.count
    }

    @Test func everyMemberOfARootAManifestAndTheirEnvelopesShowsInDiffShowAndSign() throws {
        let workspace = try Workspace()
        let directory = workspace.directory
        let key = directory.path + "/signer.key"
        let generated = runPinion(["keygen", "--out", directory.path + "/signer", "--insecure-no-passphrase"])
        try #require(generated.status == 0, "\(generated.err)")
        let (root, material) = try Self.sampleRoot()
        let manifest = try Self.sampleManifest()
        let table = Self.cases(material)
        let subjects = [
            Subject(name: "root", kind: .root, payload: root, envelope: nil),
            Subject(name: "root-envelope", kind: .root, payload: root, envelope: try Self.envelope(.root, root)),
            Subject(name: "manifest", kind: .pins, payload: manifest, envelope: nil),
            Subject(
                name: "manifest-envelope", kind: .pins, payload: manifest, envelope: try Self.envelope(.pins, manifest)),
        ]
        var walked = 0
        for subject in subjects {
            walked += try Self.walk(subject, table: table, directory: directory.path, key: key)
        }
        // Every member the review tables name is present in the samples, so none is skipped.
        let patterns = Set(
            ([root, manifest, try Self.envelope(.pins, manifest)]).flatMap { DocumentMembers.leaves($0).map(\.pattern) }
        )
        for pattern in DocumentMembers.rootRendered.union(DocumentMembers.manifestRendered).union(
            DocumentMembers.envelopeRendered
        ).subtracting(DocumentMembers.emptyLists) {
            #expect(patterns.contains(pattern), "the samples lack the member \(pattern)")
        }
        #expect(walked > 60)
    }
}

/// `sign --previous` and `diff` between a signed version and the next bare payload (the usual
/// co-signing step) report the payload's changes and no envelope member that is not there.
@Suite struct ReviewAgainstASignedPreviousTests {
    @Test func aBarePayloadAgainstAnEnvelopeShowsNoPhantomEnvelopeMember() throws {
        let directory = try makeTemporaryDirectory(prefix: "pinion-review-previous")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func run(_ arguments: [String]) throws -> CommandResult {
            let result = runPinion(arguments)
            try #require(result.status == 0, "\(arguments): \(result.err)")
            return result
        }
        let path = { (name: String) in directory + "/" + name }
        for key in ["root", "pins"] {
            _ = try run(["keygen", "--out", path(key), "--insecure-no-passphrase"])
        }
        _ = try run([
            "root", "init", "--scope", "com.example.app", "--root-key", path("root.pub"), "--root-threshold", "1",
            "--pins-key", path("pins.pub"), "--pins-threshold", "1", "-o", path("r.json"),
        ])
        _ = try run(["sign", "--key", path("root.key"), path("r.json"), "-o", path("root.json")])
        _ = try run(["manifest", "init", "--root", path("root.json"), "--expires-in", "30d", "-o", path("p1.json")])
        _ = try run([
            "manifest", "set-domain", path("p1.json"), "api.example.com", "--pin", pin(1).description, "--pin",
            pin(2).description,
        ])
        _ = try run(["sign", "--key", path("pins.key"), path("p1.json"), "-o", path("m1.json")])
        _ = try run(["manifest", "init", "--previous", path("m1.json"), "--expires-in", "30d", "-o", path("p2.json")])
        _ = try run([
            "manifest", "set-domain", path("p2.json"), "api.example.com", "--pin", pin(1).description, "--pin",
            pin(2).description, "--pin", pin(3).description,
        ])
        let signed = try run([
            "sign", "--key", path("pins.key"), "--previous", path("m1.json"), path("p2.json"), "-o", path("m2.json"),
        ])
        let diff = try run(["diff", path("m1.json"), path("p2.json")])
        for output in [signed.out, diff.out] {
            #expect(output.contains("+ pin \(pin(3))"), "\(output)")
            #expect(!output.contains("envelope."), "a phantom envelope member: \(output)")
        }
    }
}
