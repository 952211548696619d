// `pinion import android-nsc` following Android's semantics: lenient base64 pins as Android
// decodes them, subdomains Android leaves unpinned, and what to do about a single pin.

import Foundation
import PinionCore
import PinionInterop
import PinionTestSupport
import Testing

private func config(_ body: String) -> String {
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<network-security-config>\n\(body)\n</network-security-config>\n"
}

@Suite struct AndroidImportSemanticsTests {
    @Test func nonZeroUnusedBitsAreImportedCanonicalWithBothSpellings() throws {
        let canonical = testBase64(0x00)  // "AAAA...AAA="
        #expect(canonical.hasSuffix("A="))
        let lenient = String(canonical.dropLast(2)) + "B="  // the same 32 bytes for Android
        let unpadded = String(canonical.dropLast(2)) + "D"  // no padding and unused bits set
        let workspace = try Workspace.interop()
        try workspace.write(
            "nsc.xml",
            config(
                """
                <domain-config>
                  <domain>api.example.com</domain>
                  <pin-set>
                    <pin digest="SHA-256">\(lenient)</pin>
                    <pin digest="SHA-256">\(testBase64(0x11))</pin>
                  </pin-set>
                </domain-config>
                <domain-config>
                  <domain>cdn.example.com</domain>
                  <pin-set>
                    <pin digest="SHA-256">\(unpadded)</pin>
                    <pin digest="SHA-256">\(testBase64(0x11))</pin>
                  </pin-set>
                </domain-config>
                """))
        let result = workspace.ok(["import", "android-nsc", "@nsc.xml", "--scope", "com.example.app", "-o", "@p.json"])
        let payload = try workspace.payload("p.json")
        #expect(payload.domains.map(\.name) == ["api.example.com", "cdn.example.com"])
        for domain in payload.domains { #expect(domain.pins.first?.description == "sha256/" + canonical) }
        #expect(
            result.out.contains(
                "normalised: pin \"\(lenient)\" written as sha256/\(canonical) (non-zero unused bits in the last character; Android reads both spellings as the same key)"
            ))
        #expect(result.out.contains("missing padding, non-zero unused bits in the last character"))
        #expect(!result.out.contains("not 32 bytes"))
    }

    @Test(arguments: [
        String(repeating: "A", count: 42) + "==",  // 31 bytes
        String(repeating: "A", count: 44) + "=",  // too long
        String(repeating: "A", count: 42) + "-=",  // URL-safe alphabet
        String(repeating: "A", count: 21) + " " + String(repeating: "A", count: 21) + "=",  // space inside
        String(repeating: "A", count: 43) + "==",  // too much padding
        "",
    ])
    func pinsAndroidWouldGuessAtAreStillRefused(text: String) throws {
        let result = try AndroidNSC.importPins(
            Array(
                config(
                    """
                    <domain-config><domain>api.example.com</domain><pin-set>
                    <pin digest="SHA-256">\(text)</pin><pin digest="SHA-256">\(testBase64(1))</pin>
                    </pin-set></domain-config>
                    """
                ).utf8), now: t0)
        #expect(result.domains.first?.pins.count == 1)
        #expect(result.notes.contains { $0.kind == .rejected && $0.message.contains("is not 32 bytes of base64") })
    }

    static let parentWithFreeSubdomains = config(
        """
        <domain-config>
          <domain includeSubdomains="true">example.com</domain>
          <pin-set>
            <pin digest="SHA-256">\(testBase64(1))</pin>
            <pin digest="SHA-256">\(testBase64(2))</pin>
          </pin-set>
          <domain-config>
            <domain>free.example.com</domain>
            <pin-set></pin-set>
          </domain-config>
          <domain-config>
            <domain>api.example.com</domain>
          </domain-config>
        </domain-config>
        <domain-config>
          <domain>open.example.com</domain>
        </domain-config>
        <domain-config>
          <domain>other.test</domain>
        </domain-config>
        """)

    @Test func subdomainsAndroidLeavesUnpinnedAreSaidToBeEnforcedWithTheParentsPins() throws {
        let workspace = try Workspace.interop()
        try workspace.write("nsc.xml", Self.parentWithFreeSubdomains)
        let result = workspace.ok(["import", "android-nsc", "@nsc.xml", "--scope", "com.example.app", "-o", "@p.json"])
        #expect(
            result.out.contains(
                "warning: Android leaves free.example.com unpinned (it has an empty pin-set at line 11); Pinion cannot exempt a subdomain of an includeSubdomains entry, so it will be enforced with example.com's pins"
            ))
        #expect(
            result.out.contains(
                "warning: Android leaves open.example.com unpinned (it has no pin-set); Pinion cannot exempt a subdomain of an includeSubdomains entry, so it will be enforced with example.com's pins"
            ))
        #expect(result.out.contains("skipped: other.test has no pin-set (not pinned)"))
        #expect(!result.out.contains("free.example.com has no pin-set (not pinned)"))
        let payload = try workspace.payload("p.json")
        // api.example.com inherits the parent's pin-set (as on Android).
        #expect(payload.domains.map(\.name) == ["example.com", "api.example.com"])
        #expect(payload.domains[0].includeSubdomains)
    }

    @Test func droppingIncludeKeepsThemFreeAndListsWhatStaysPinned() throws {
        let workspace = try Workspace.interop()
        try workspace.write("nsc.xml", Self.parentWithFreeSubdomains)
        let result = workspace.ok([
            "import", "android-nsc", "@nsc.xml", "--scope", "com.example.app", "-o", "@p.json",
            "--exempt-subdomains-by-dropping-include",
        ])
        let payload = try workspace.payload("p.json")
        #expect(payload.domains.map(\.name) == ["example.com", "api.example.com"])
        #expect(!payload.domains[0].includeSubdomains)
        #expect(
            result.out.contains(
                "warning: --exempt-subdomains-by-dropping-include: includeSubdomains of example.com is turned off so that free.example.com, open.example.com stay unpinned; every subdomain of example.com not listed in the file is no longer pinned either; still pinned by their own entries: api.example.com"
            ))
        #expect(!result.out.contains("will be enforced with example.com's pins"))
        // Only for android-nsc.
        let plist = workspace.run([
            "import", "apple-plist", "@nsc.xml", "--scope", "com.example.app", "-o", "@q.json",
            "--exempt-subdomains-by-dropping-include",
        ])
        #expect(plist.status == 2)
    }

    @Test func aSinglePinImportSaysWhatToDoNext() throws {
        let workspace = try Workspace.interop()
        workspace.standardRoot()
        try workspace.write(
            "nsc.xml",
            config(
                """
                <domain-config><domain>api.example.com</domain><pin-set>
                <pin digest="SHA-256">\(testBase64(1))</pin></pin-set></domain-config>
                """))
        let result = workspace.ok(["import", "android-nsc", "@nsc.xml", "--scope", "com.example.app", "-o", "@p.json"])
        #expect(
            result.out.contains(
                "next: api.example.com has a single pin, which pinion sign refuses: add a backup pin (pinion manifest set-domain \(workspace.path("p.json")) NAME --pin ... --pin ...), or sign with --allow-single-pin"
            ))
        // And sign does what the summary said.
        #expect(workspace.run(["sign", "--key", "@pins.key", "@p.json", "-o", "@m.json"]).status == 1)
        workspace.ok(["sign", "--key", "@pins.key", "@p.json", "-o", "@m.json", "--allow-single-pin"])
        // Two pins: no such line.
        try workspace.write(
            "two.xml",
            config(
                """
                <domain-config><domain>api.example.com</domain><pin-set>
                <pin digest="SHA-256">\(testBase64(1))</pin><pin digest="SHA-256">\(testBase64(2))</pin>
                </pin-set></domain-config>
                """))
        let two = workspace.ok(["import", "android-nsc", "@two.xml", "--scope", "com.example.app", "-o", "@q.json"])
        #expect(!two.out.contains("next:"))
    }
}
