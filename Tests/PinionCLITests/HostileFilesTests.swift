// Hostile file-system inputs and outputs found by testing: device nodes, FIFOs, symbolic
// links, gaps in a root chain, unverified roots, spellings of pins.

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct HostileFilesTests {
    @Test func forceNeverReplacesAFIFOOrASymbolicLink() throws {
        let w = try Workspace()
        #expect(mkfifo(w.path("fifo"), 0o600) == 0)
        try w.write("target.json", "keep\n")
        try FileManager.default.createSymbolicLink(
            atPath: w.path("link.json"), withDestinationPath: w.path("target.json"))
        for out in ["@fifo", "@link.json"] {
            let result = w.run(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", out, "--force"])
            #expect(result.status == 2, "\(out): \(result.err)")
        }
        var info = stat()
        #expect(lstat(w.path("fifo"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(w.path("link.json"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(try w.read("target.json") == "keep\n")
    }

    @Test func fifoWithoutWriterDoesNotHang() throws {
        let w = try Workspace()
        #expect(mkfifo(w.path("fifo"), 0o600) == 0)
        w.standardRoot()
        // coreutils timeout as a watchdog: a hang fails the test instead of the suite.
        let result = try w.exec(
            "/usr/bin/timeout", ["60", pinionExecutable, "verify", "--root", "@fifo", "@root.json"])
        #expect(result.status == 1, "\(result.err)")
        let show = try w.exec("/usr/bin/timeout", ["60", pinionExecutable, "manifest", "show", "@fifo"])
        #expect(show.status == 1)
    }

    @Test func gapInRootChainIsRefused() throws {
        let w = try Workspace()
        w.standardRoot()
        try FileManager.default.createDirectory(atPath: w.path("chain"), withIntermediateDirectories: true)
        var previous = "@root.json"
        for version in 2...4 {
            w.ok(["root", "rotate", "--previous", previous, "-o", "@r\(version).json"])
            w.ok(["sign", "--key", "@root.key", "@r\(version).json", "-o", "@chain/\(version).json"])
            previous = "@chain/\(version).json"
        }
        w.ok(["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/4.json"])
        try FileManager.default.removeItem(atPath: w.path("chain/3.json"))
        let gap = w.run(["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/2.json"])
        #expect(gap.status == 1)
        #expect(gap.err.contains("3.json is missing but 4.json exists"))
        // A dangling entry is an I/O error, not the end of the chain.
        try FileManager.default.createSymbolicLink(
            atPath: w.path("chain/3.json"), withDestinationPath: w.path("nowhere"))
        #expect(w.run(["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/2.json"]).status == 3)
    }

    /// A FIFO entry whose writer stays open does not hang the command, another root of the
    /// trusted root's own version is refused, and stray names are named.
    @Test func rootChainEntriesThatAreNotTheChainAreRefusedOrNamed() throws {
        let w = try Workspace()
        w.standardRoot()
        try FileManager.default.createDirectory(atPath: w.path("chain"), withIntermediateDirectories: true)
        w.ok(["root", "rotate", "--previous", "@root.json", "-o", "@r2.json"])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@chain/2.json"])
        let verify = ["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/2.json"]
        w.ok(verify)

        // A FIFO with a writer holding it open: refused at once as not a regular file.
        #expect(mkfifo(w.path("chain/3.json"), 0o600) == 0)
        let writer = open(w.path("chain/3.json"), O_RDWR | O_NONBLOCK)
        #expect(writer >= 0)
        defer { close(writer) }
        let fifo = w.run(verify)
        #expect(fifo.status == 3, "\(fifo.err)")
        #expect(fifo.err.contains("not a regular file"), "\(fifo.err)")
        try FileManager.default.removeItem(atPath: w.path("chain/3.json"))

        // Another root numbered 1 (another scope's, or garbage) next to the trusted root 1.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: w.path("chain/1.json")))
        let other = w.run(verify)
        #expect(other.status == 1, "\(other.err)")
        #expect(other.err.contains("differs from the trusted root of the same version"), "\(other.err)")
        // The trusted root itself there is fine.
        try FileManager.default.removeItem(atPath: w.path("chain/1.json"))
        try FileManager.default.copyItem(atPath: w.path("root.json"), toPath: w.path("chain/1.json"))
        w.ok(verify)

        // A name that is not {version}.json is ignored with a warning.
        try FileManager.default.copyItem(atPath: w.path("chain/2.json"), toPath: w.path("chain/02.json"))
        let stray = w.run(verify)
        #expect(stray.status == 0, "\(stray.err)")
        #expect(stray.err.contains("02.json: not a root file name"), "\(stray.err)")
    }

    @Test func keygenNeedsAFileName() throws {
        let w = try Workspace()
        try FileManager.default.createDirectory(atPath: w.path("dir"), withIntermediateDirectories: true)
        for out in ["", "@dir/", "@dir/.", "@dir/.."] {
            #expect(w.run(["keygen", "--out", out, "--insecure-no-passphrase"]).status == 2, "\(out)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.path("dir")).isEmpty)
    }

    @Test func inPlaceEditKeepsModeAndRefusesSymbolicLinks() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: w.path("p.json"))
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        let attributes = try FileManager.default.attributesOfItem(atPath: w.path("p.json"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try FileManager.default.createSymbolicLink(atPath: w.path("plink.json"), withDestinationPath: w.path("p.json"))
        let before = try w.readBytes("p.json")
        #expect(w.run(["manifest", "revoke-pin", "@plink.json", pinC]).status == 2)
        #expect(try w.readBytes("p.json") == before)
    }

    @Test func revokedPinIsNotABackup() throws {
        let w = try Workspace()
        w.quickKey("k")
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["manifest", "revoke-pin", "@p.json", pinB])
        let result = w.run(["sign", "--key", "@k.key", "@p.json", "-o", "@m.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("fewer than two usable (unrevoked) pins"))
    }

    @Test func otherPinSpellingsAreNormalised() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let base64 = String(pinA.dropFirst(7))
        let hex = Hex.encode(Base64.decodeCanonical(String(pinB.dropFirst(7))) ?? [])
        let result = w.ok([
            "manifest", "set-domain", "@p.json", "api.example.com", "--pin", base64, "--pin", hex.uppercased(),
            "--pin", "pin-sha256=\"\(String(pinC.dropFirst(7)))\"",
        ])
        #expect(result.err.contains("normalised to"))
        let payload = try ManifestPayload.parse(try w.readBytes("p.json"))
        #expect(payload.domains[0].pins.map(\.description) == [pinA, pinB, pinC])
    }

    @Test func buildingOnAnUnsignedRootIsRefused() throws {
        let w = try Workspace()
        w.standardRoot()
        w.quickKey("other")
        // Signed by a key outside its own root role: not a valid root to build on.
        w.ok(["sign", "--key", "@other.key", "@root-payload.json", "-o", "@unsigned-root.json"])
        let result = w.run(["manifest", "init", "--root", "@unsigned-root.json", "--expires-in", "1d", "-o", "@p.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("not a valid signed root"))
        #expect(w.run(["root", "rotate", "--previous", "@unsigned-root.json", "-o", "@r2.json"]).status == 1)
        #expect(!w.exists("p.json") && !w.exists("r2.json"))
    }

    @Test func previousMustBeASignedEnvelope() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let result = w.run(["manifest", "init", "--previous", "@p.json", "--expires-in", "1d", "-o", "@p2.json"])
        #expect(result.status == 2)
        #expect(result.err.contains("unsigned payload; a signed envelope is needed"))
    }

    @Test func alreadyExpiredDocumentsAreWarned() throws {
        let w = try Workspace()
        let result = w.ok([
            "manifest", "init", "--scope", "a.b", "--issued-at", "2020-01-01T00:00:00Z", "--expires-in", "1d", "-o",
            "@p.json",
        ])
        #expect(result.err.contains("already past"))
    }
}
