// Hostile input to import, lint and audit: an encoding declaration
// hidden behind a line break, NSC shapes Android refuses, a FIFO given as --certs, lint
// against another scope, and a root folder that is not a folder.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct HostileInteropInputTests {
    private func wrap(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<network-security-config>\n\(body)\n</network-security-config>\n"
    }

    @Test func anEncodingDeclarationSplitByALineBreakIsStillRefused() throws {
        let workspace = try Workspace.interop()
        try workspace.write(
            "u7.xml",
            "<?xml version=\"1.0\" encoding\n=\"UTF-7\"?>\n<network-security-config><domain-config><domain>+AGE-pi.example.com</domain><pin-set><pin digest=\"SHA-256\">\(testBase64(1))</pin></pin-set></domain-config></network-security-config>\n"
        )
        let result = workspace.run(["import", "android-nsc", "@u7.xml", "--scope", "s.example", "-o", "@out.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("only UTF-8 is accepted"))
        #expect(!workspace.exists("out.json"))
    }

    @Test func twoPinSetsInOneDomainConfigAreRefused() throws {
        let workspace = try Workspace.interop()
        try workspace.write(
            "two.xml",
            wrap(
                """
                <domain-config><domain>api.example.com</domain>
                <pin-set><pin digest="SHA-256">\(testBase64(1))</pin><pin digest="SHA-256">\(testBase64(2))</pin></pin-set>
                <pin-set><pin digest="SHA-256">\(testBase64(3))</pin></pin-set>
                </domain-config>
                """))
        let result = workspace.run(["import", "android-nsc", "@two.xml", "--scope", "s.example", "-o", "@out.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("a second <pin-set>"))
        #expect(!workspace.exists("out.json"))
    }

    @Test(arguments: [
        "<domain>api.<b>evil</b>example.com</domain><pin-set><pin digest=\"SHA-256\">PIN</pin></pin-set>",
        "<domain>api.example.com</domain><pin-set><pin digest=\"SHA-256\">PIN<x>junk</x></pin></pin-set>",
    ])
    func elementsInsideDomainOrPinTextAreRefused(_ body: String) throws {
        let workspace = try Workspace.interop()
        try workspace.write(
            "mixed.xml",
            wrap("<domain-config>" + body.replacingOccurrences(of: "PIN", with: testBase64(1)) + "</domain-config>"))
        let result = workspace.run(["import", "android-nsc", "@mixed.xml", "--scope", "s.example", "-o", "@out.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("text only"))
        #expect(!workspace.exists("out.json"))
    }

    @Test func aFIFOGivenAsCertsDoesNotHang() throws {
        let workspace = try Workspace.interop()
        workspace.ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", "30d", "-o", "@p.json"])
        workspace.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", testPin(1), "--pin", testPin(2)])
        #expect(mkfifo(workspace.path("fifo.pem"), 0o600) == 0)
        let result = workspace.run(["lint", "@p.json", "--certs", "@fifo.pem"])
        #expect(result.status != 0)
    }

    @Test func lintRefusesAPreviousOfAnotherScopeOrNotOlder() throws {
        let workspace = try Workspace.interop()
        workspace.ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", "30d", "-o", "@p.json"])
        workspace.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", testPin(1), "--pin", testPin(2)])
        workspace.ok(["manifest", "init", "--scope", "other.example", "--expires-in", "30d", "-o", "@o.json"])
        let other = workspace.run(["lint", "@p.json", "--previous", "@o.json"])
        #expect(other.status == 2)
        #expect(other.err.contains("is of scope other.example"))
        let itself = workspace.run(["lint", "@p.json", "--previous", "@p.json"])
        #expect(itself.status == 2)
        #expect(itself.err.contains("not older than version 1"))
    }

    @Test func aRootFolderThatIsAFileIsOneFindingNotTenThousand() throws {
        let workspace = try Workspace.interop()
        workspace.standardRoot()
        workspace.ok(["publish", "--repo", "@tree", "@root.json"])
        let folder = workspace.path("tree/v1/com.example.app/root")
        try FileManager.default.removeItem(atPath: folder)
        try workspace.write("tree/v1/com.example.app/root", "not a folder")
        let result = workspace.run(["audit", "--root", "@root.json", "@tree"])
        #expect(result.status == 1)
        let refusals = result.out.split(separator: "\n").filter { $0.contains("[file-refused]") }
        #expect(refusals.count == 1, "\(refusals.count) file-refused findings")
        #expect(!result.out.contains("more than 10000 roots"))
    }
}
