// How `pinion serve` maps paths to files: the refused path forms, symbolic links, special
// files, cache headers, ETags, and a replaced file seen at once.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import Testing

@testable import PinionPublisher

struct PublishedFilesTests {
    @Test(arguments: [
        "/v1/s/manifest.json", "/v1/com.example.app/history/12.json", "/v1/s/root/1.json", "/v1/s/index.json",
        "/v1/s/manifest.proof", "/v1/s/log/checkpoint", "/v1/s/log/tile/0/000", "/v1/s/log/tile/0/x001/234.p/5",
        "/v1/s/log/tile/entries/000.p/17", "/v1/s/log/tile/2/x001/x234/067",
    ])
    func acceptsTreePaths(_ path: String) {
        #expect(PublishedPath(path) != nil)
    }

    @Test(arguments: [
        "/", "/v1/", "/v1/s/", "/manifest.json", "/v2/s/manifest.json", "/v1/s/../s/manifest.json",
        "/v1/s/./manifest.json", "/v1/s/%2e%2e/manifest.json", "/v1/s/%2fmanifest.json", "/v1/s/manifest%2ejson",
        "/v1/s\\manifest.json", "/v1/s//manifest.json", "/v1/s/.manifest.json", "/v1/s/.1.json.tmp-abc",
        "/v1/s/history", "/v1/s/key.pem", "/v1/s/.json", "/v1/s/m\u{0}.json", "/v1/s/manifest.json/",
        "//v1/s/manifest.json", "/v1/s/é.json", "/v1/.hidden/manifest.json",
        "/v1/s/history/manifest.proof", "/v1/s/checkpoint", "/v1/s/log/checkpoint/x", "/v1/s/log/tile/0/1",
        "/v1/s/log/tile/0/000.p/256", "/v1/s/log/tile/0/000.p/0", "/v1/s/log/tile/64/000", "/v1/s/log/tile/0/1234",
        "/v1/s/log/tile/0/x01/234", "/v1/s/log/tile/0/000/", "/v1/s/log/tile/entries", "/v1/s/log/pending",
        "/v1/s/log/.checkpoint.tmp-1-2", "/v1/s/log/tile/0/000.p/05",
    ])
    func refusesOtherPathForms(_ path: String) {
        #expect(PublishedPath(path) == nil, "\(path.debugDescription) must be refused")
    }

    @Test func cacheControlFollowsTheDesign() throws {
        #expect(PublishedPath("/v1/s/manifest.json")?.cacheControl == "no-cache")
        #expect(PublishedPath("/v1/s/manifest.proof")?.cacheControl == "no-cache")
        #expect(PublishedPath("/v1/s/log/checkpoint")?.cacheControl == "no-cache")
        #expect(PublishedPath("/v1/s/log/tile/0/000.p/3")?.cacheControl == "public, max-age=31536000, immutable")
        #expect(PublishedPath("/v1/s/log/tile/entries/000")?.contentType == "application/octet-stream")
        #expect(PublishedPath("/v1/s/manifest.proof")?.contentType == "text/plain; charset=utf-8")
        #expect(PublishedPath("/v1/s/root/1.json")?.contentType == "application/json")
        #expect(PublishedPath("/v1/s/index.json")?.cacheControl == "no-cache")
        #expect(PublishedPath("/v1/s/root/2.json")?.cacheControl == "public, max-age=31536000, immutable")
        #expect(PublishedPath("/v1/s/history/7.json")?.cacheControl == "public, max-age=31536000, immutable")
    }

    private func makeTree() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-files-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory + "/v1/s/history", withIntermediateDirectories: true)
        return directory
    }

    @Test func servesBytesWithTheirSHA256AsETag() throws {
        let tree = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: tree) }
        try Data("{\"v\":1}".utf8).write(to: URL(fileURLWithPath: tree + "/v1/s/manifest.json"))
        let files = try PublishedFiles(directory: tree)
        let file = try files.file(at: #require(PublishedPath("/v1/s/manifest.json")))
        #expect(file.body == Array("{\"v\":1}".utf8))
        #expect(file.etag == "\"" + Hex.encode(try #require(OpenSSLSupport.sha256(file.body))) + "\"")
    }

    @Test func aFileReplacedByRenameIsSeenAtOnce() throws {
        let tree = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: tree) }
        let target = tree + "/v1/s/manifest.json"
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let files = try PublishedFiles(directory: tree)
        let path = try #require(PublishedPath("/v1/s/manifest.json"))
        #expect(try files.file(at: path).body == Array("old".utf8))
        // Same size, written within the same second: the inode tells them apart.
        try Data("new".utf8).write(to: URL(fileURLWithPath: tree + "/v1/s/next"))
        #expect(rename(tree + "/v1/s/next", target) == 0)
        #expect(try files.file(at: path).body == Array("new".utf8))
    }

    /// Both ways of opening (one openat2 call, and the component walk used where the kernel
    /// lacks openat2) refuse the same links and special files.
    @Test(arguments: [true, false])
    func refusesSymbolicLinksDirectoriesAndSpecialFiles(opensInOneCall: Bool) throws {
        let tree = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: tree) }
        let outside = tree + "-outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: tree + "/v1/s/history/1.json"))
        try FileManager.default.createSymbolicLink(
            atPath: tree + "/v1/s/leak.json", withDestinationPath: outside + "/secret.json")
        try FileManager.default.createSymbolicLink(
            atPath: tree + "/v1/s/inside.json", withDestinationPath: "history/1.json")
        try FileManager.default.createSymbolicLink(atPath: tree + "/v1/t", withDestinationPath: outside)
        // A link inside the tree to a directory of the tree is refused as well.
        try FileManager.default.createSymbolicLink(atPath: tree + "/v1/u", withDestinationPath: "s")
        try FileManager.default.createDirectory(atPath: tree + "/v1/s/dir.json", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: tree + "/v1/s/plain"))
        #expect(mkfifo(tree + "/v1/s/fifo.json", 0o600) == 0)
        let files = try PublishedFiles(
            directory: tree, maxFileBytes: 64 << 20, maxCacheBytes: 256 << 20, opensInOneCall: opensInOneCall)
        for path in [
            "/v1/s/leak.json", "/v1/s/inside.json", "/v1/t/secret.json", "/v1/u/history/1.json", "/v1/s/dir.json",
            "/v1/s/fifo.json", "/v1/s/missing.json", "/v1/s/plain/1.json",
        ] {
            #expect(throws: PublishedFileError.notFound, "\(path)") {
                try files.file(at: #require(PublishedPath(path)))
            }
        }
        #expect(try files.file(at: #require(PublishedPath("/v1/s/history/1.json"))).body == Array("{}".utf8))
    }

    /// PinionSystem's one-call open: each refusal with the errno the component walk gives,
    /// and a `..` that would leave the directory refused (EXDEV) even though it names a file.
    @Test func openBeneathRefusesLinksAndEscapes() throws {
        let tree = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: tree) }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: tree + "/v1/s/history/1.json"))
        try FileManager.default.createSymbolicLink(atPath: tree + "/v1/u", withDestinationPath: "s")
        try FileManager.default.createSymbolicLink(
            atPath: tree + "/v1/s/link.json", withDestinationPath: "history/1.json")
        let root = open(tree + "/v1", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(root >= 0)
        defer { close(root) }
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        guard case .opened(let descriptor) = openBeneath(root, components: ["s", "history", "1.json"], flags: flags)
        else {
            Issue.record("a plain file below the directory was not opened")
            return
        }
        close(descriptor)
        #expect(openBeneath(root, components: ["u", "history", "1.json"], flags: flags) == .failed(errno: ELOOP))
        #expect(openBeneath(root, components: ["s", "link.json"], flags: flags) == .failed(errno: ELOOP))
        #expect(openBeneath(root, components: ["s", "missing.json"], flags: flags) == .failed(errno: ENOENT))
        #expect(
            openBeneath(root, components: ["s", "history", "1.json", "x"], flags: flags) == .failed(errno: ENOTDIR))
        #expect(
            openBeneath(root, components: ["..", "v1", "s", "history", "1.json"], flags: flags) == .failed(errno: EXDEV)
        )
        #expect(openBeneath(root, components: [], flags: flags) == .failed(errno: ENOENT))
    }

    @Test func refusesFilesOverTheSizeLimit() throws {
        let tree = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: tree) }
        try Data(repeating: 0x20, count: 2048).write(to: URL(fileURLWithPath: tree + "/v1/s/index.json"))
        let files = try PublishedFiles(directory: tree, maxFileBytes: 1024)
        #expect(throws: PublishedFileError.tooLarge) { try files.file(at: #require(PublishedPath("/v1/s/index.json"))) }
    }

    @Test func refusesAMissingTree() {
        #expect(throws: PublisherError.self) { try PublishedFiles(directory: "/nonexistent/pinion-tree") }
    }
}
