// `pinion sign --root`: a key outside the roles that sign the document is refused, a root
// rotation's previous root role counts, and each signature says what the roles still need.

import PinionTestSupport
import Testing

@Suite struct SigningRoleTests {
    /// Root version 1 (alice, bob, carol: 2-of-3; pins 1-of-1) in root.json, a manifest
    /// payload under it in p.json.
    func workspace() throws -> Workspace {
        let w = try Workspace()
        for name in ["alice", "bob", "carol", "pins"] { w.quickKey(name) }
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@alice.pub", "--root-key", "@bob.pub",
            "--root-key", "@carol.pub", "--root-threshold", "2", "--pins-key", "@pins.pub", "--pins-threshold",
            "1", "-o", "@r1.json",
        ])
        w.ok(["sign", "--key", "@alice.key", "--key", "@bob.key", "@r1.json", "-o", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "1d", "-o", "@p.json"])
        return w
    }

    @Test func aRootKeyOnAManifestIsRefusedAndNothingIsWritten() throws {
        let w = try workspace()
        let result = w.run(["sign", "--key", "@alice.key", "--root", "@root.json", "@p.json", "-o", "@m.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("is not in the pins role of "))
        #expect(result.err.contains("--allow-foreign-key"))
        #expect(!w.exists("m.json"))
    }

    @Test func aForeignKeyAmongRightOnesRefusesTheWholeSigning() throws {
        let w = try workspace()
        let result = w.run([
            "sign", "--key", "@pins.key", "--key", "@carol.key", "--root", "@root.json", "@p.json", "-o", "@m.json",
        ])
        #expect(result.status == 1)
        #expect(!w.exists("m.json"))
    }

    @Test func allowForeignKeySignsWithAWarning() throws {
        let w = try workspace()
        let result = w.ok([
            "sign", "--key", "@alice.key", "--allow-foreign-key", "--root", "@root.json", "@p.json", "-o", "@m.json",
        ])
        #expect(result.err.contains("its signature will not count (--allow-foreign-key)"))
        #expect(result.out.contains("pins role: 0 valid signatures, 1 needed, from 1 key (1 more needed)"))
        #expect(w.exists("m.json"))
    }

    @Test func eachSignatureSaysWhatThePinsRoleStillNeeds() throws {
        let w = try workspace()
        let result = w.ok(["sign", "--key", "@pins.key", "--root", "@root.json", "@p.json", "-o", "@m.json"])
        #expect(result.out.contains("pins role: 1 valid signature, 1 needed, from 1 key (threshold met)"))
    }

    @Test func withoutRootTheRoleCouldNotBeChecked() throws {
        let w = try workspace()
        let result = w.ok(["sign", "--key", "@alice.key", "@p.json", "-o", "@m.json"])
        #expect(result.err.contains("no --root given: the role that signs"))
        #expect(result.err.contains("could not be checked"))
    }

    @Test func aRootRotationCountsThePreviousRootRoleKeys() throws {
        let w = try workspace()
        w.quickKey("frank")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@frank.pub", "--remove-root-key",
            "@carol.pub", "-o", "@r2.json",
        ])
        // carol left the root role in version 2 but still signs for the old role.
        let first = w.ok(["sign", "--key", "@carol.key", "--root", "@root.json", "@r2.json", "-o", "@r2.carol.json"])
        #expect(
            first.out.contains(
                "old root role (version 1): 1 valid signature, 2 needed, from 3 keys (1 more needed); new root role: 0 valid signatures, 2 needed, from 3 keys (2 more needed)"
            ))
        let second = w.ok([
            "sign", "--key", "@alice.key", "--key", "@frank.key", "--root", "@root.json", "@r2.carol.json", "-o",
            "@root-2.json",
        ])
        #expect(
            second.out.contains(
                "old root role (version 1): 2 valid signatures, 2 needed, from 3 keys (threshold met); new root role: 2 valid signatures, 2 needed, from 3 keys (threshold met)"
            ))
        w.ok(["verify", "--root", "@root.json", "@root-2.json"])
        // A key in neither the old nor the new root role is refused.
        w.quickKey("mallory")
        let foreign = w.run([
            "sign", "--key", "@mallory.key", "--root", "@root.json", "@r2.json", "-o", "@r2.mallory.json",
        ])
        #expect(foreign.status == 1)
        #expect(foreign.err.contains("old root role (version 1) or new root role"))
        #expect(!w.exists("r2.mallory.json"))
    }
}
