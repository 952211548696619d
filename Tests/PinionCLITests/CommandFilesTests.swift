// PinionSystem's file access for CLI commands (CommandFiles) and the one atomic writer's new-file mode: what each refuses.

import Foundation
import PinionSystem
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CommandFilesTests {
    let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("pinion-command-files-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = directory + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func readReturnsTheBytesUpToTheLimitAndRefusesMore() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try write("input.json", "12345")
        #expect(try CommandFiles.read(path, limit: 5) == Array("12345".utf8))
        #expect(throws: PublishFileError.tooLarge(path: path, limit: 4)) { try CommandFiles.read(path, limit: 4) }
        #expect(PublishFileError.tooLarge(path: path, limit: 4).category == .refusal)
    }

    @Test func readRefusesMissingFilesAndDirectoriesAsIOErrors() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/missing.json"
        do {
            _ = try CommandFiles.read(missing, limit: 10)
            Issue.record("a missing file was read")
        } catch {
            #expect(error == .io(path: missing, what: "open", reason: String(cString: strerror(ENOENT))))
            #expect(error.category == .io)
        }
        #expect(throws: PublishFileError.io(path: directory, what: "read", reason: "is a directory")) {
            try CommandFiles.read(directory, limit: 10)
        }
    }

    @Test func aFIFOWithoutAWriterReadsAsEmptyInsteadOfHanging() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(try CommandFiles.read(fifo, limit: 10) == [])
    }

    @Test func existingTellsRegularFilesLinksAndOthersApart() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try write("file.json", "x")
        #expect(chmod(file, 0o640) == 0)
        let link = directory + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        let dangling = directory + "/dangling.json"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory + "/nowhere")
        #expect(try CommandFiles.existing(file) == .regular(mode: 0o640))
        #expect(try CommandFiles.existing(link) == .symbolicLink)
        #expect(try CommandFiles.existing(dangling) == .symbolicLink)
        #expect(try CommandFiles.existing(directory) == .other)
        #expect(try CommandFiles.existing(directory + "/none.json") == .none)
        // A path through a regular file is not ENOENT: an I/O error, not "nothing there".
        #expect(throws: PublishFileError.self) { try CommandFiles.existing(file + "/below") }
    }

    @Test func theAtomicWriterUsesTheGivenModeForNewFilesOnly() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secret = directory + "/secret.txt"
        try PublishFiles.writeAtomically(Array("a".utf8), to: secret, replace: false, mode: 0o600)
        #expect(try mode(secret) == 0o600)
        // A replaced file keeps its own bits, whatever mode is given.
        #expect(chmod(secret, 0o640) == 0)
        try PublishFiles.writeAtomically(Array("b".utf8), to: secret, replace: true, mode: 0o600)
        #expect(try mode(secret) == 0o640)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "b")
        // Bits beyond 0o7777 are not passed to open(2) (the umask may narrow the rest).
        let plain = directory + "/plain.txt"
        try PublishFiles.writeAtomically([1], to: plain, replace: false, mode: 0o100644)
        #expect(try mode(plain) & ~0o644 == 0)
        // No-clobber and non-regular targets are refused, and nothing is left behind.
        #expect(throws: PublishFileError.exists(path: secret)) {
            try PublishFiles.writeAtomically([2], to: secret, replace: false, mode: 0o600)
        }
        let link = directory + "/link.txt"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: plain)
        #expect(throws: PublishFileError.wrongKind(path: link, expected: "a regular file")) {
            try PublishFiles.writeAtomically([3], to: link, replace: true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == Data([1]))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["link.txt", "plain.txt", "secret.txt"])
    }
}
