// `pinion import apple-plist`: NSPinnedDomains, TrustKit, XML and binary, hostile plists.

import Foundation
import PinionCore
import PinionInterop
import PinionTestSupport
import Testing

/// An Info.plist with the given inner `<dict>` body.
func plist(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    <key>CFBundleIdentifier</key><string>com.example.app</string>
    \(body)
    </dict>
    </plist>

    """
}

private let atsAndTrustKit = plist(
    """
    <key>NSAppTransportSecurity</key>
    <dict>
        <key>NSAllowsArbitraryLoads</key><false/>
        <key>NSPinnedDomains</key>
        <dict>
            <key>api.example.com</key>
            <dict>
                <key>NSIncludesSubdomains</key><true/>
                <key>NSPinnedLeafIdentities</key>
                <array><dict><key>SPKI-SHA256-BASE64</key><string>\(testBase64(1))</string></dict></array>
                <key>NSPinnedCAIdentities</key>
                <array><dict><key>SPKI-SHA256-BASE64</key><string>\(testBase64(2))</string></dict></array>
            </dict>
        </dict>
    </dict>
    <key>TSKConfiguration</key>
    <dict>
        <key>kTSKSwizzleNetworkDelegates</key><false/>
        <key>kTSKPinnedDomains</key>
        <dict>
            <key>Reports.Example.com</key>
            <dict>
                <key>kTSKEnforcePinning</key><false/>
                <key>kTSKIncludeSubdomains</key><false/>
                <key>kTSKExpirationDate</key><string>2030-01-01</string>
                <key>kTSKPublicKeyHashes</key>
                <array><string>\(testBase64(3))</string><string>\(testBase64(4))</string></array>
                <key>kTSKReportUris</key><array><string>https://report.example.com/</string></array>
            </dict>
        </dict>
    </dict>
    """)

@Suite struct ImportApplePlistTests {
    @Test func importsNSPinnedDomainsAndTrustKit() throws {
        let workspace = try Workspace.interop()
        try workspace.write("Info.plist", atsAndTrustKit)
        let result = workspace.ok([
            "import", "apple-plist", "@Info.plist", "--scope", "com.example.app", "-o", "@payload.json",
        ])
        let payload = try workspace.payload("payload.json")
        #expect(payload.domains.map(\.name) == ["api.example.com", "reports.example.com"])
        #expect(payload.domains[0].pins.map(\.description) == [testPin(2), testPin(1)])
        #expect(payload.domains[0].includeSubdomains && payload.domains[0].enforce)
        #expect(payload.domains[1].pins.map(\.description) == [testPin(3), testPin(4)])
        #expect(!payload.domains[1].includeSubdomains && !payload.domains[1].enforce)
        #expect(result.out.contains("leaf and CA identities together"))
        #expect(result.out.contains("NSIncludesSubdomains covers one label level"))
        #expect(result.out.contains("kTSKExpirationDate: not representable"))
        #expect(result.out.contains("kTSKEnforcePinning false imported as report-only"))
        #expect(result.out.contains("NSAppTransportSecurity.NSAllowsArbitraryLoads: skipped"))
        #expect(result.out.contains("domain written as reports.example.com"))
    }

    @Test func importsBinaryPlists() throws {
        let value = try PropertyListSerialization.propertyList(
            from: Data(atsAndTrustKit.utf8), options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
        #expect(binary.starts(with: Array("bplist".utf8)))
        let fromBinary = try ApplePlist.importPins([UInt8](binary))
        let fromXML = try ApplePlist.importPins(Array(atsAndTrustKit.utf8))
        #expect(fromBinary == fromXML)
        #expect(fromBinary.domains.count == 2)
    }

    @Test func excludedTrustKitSubdomainIsNotRepresentable() throws {
        let text = plist(
            """
            <key>TSKConfiguration</key><dict><key>kTSKPinnedDomains</key><dict>
            <key>example.com</key><dict><key>kTSKPublicKeyHashes</key><array><string>\(testBase64(1))</string><string>\(testBase64(2))</string></array></dict>
            <key>open.example.com</key><dict><key>kTSKExcludeSubdomainFromParentPolicy</key><true/></dict>
            </dict></dict>
            """)
        let result = try ApplePlist.importPins(Array(text.utf8))
        #expect(result.domains.map(\.name) == ["example.com"])
        // A warning: the parent's includeSubdomains now covers the excluded subdomain.
        #expect(result.notes.contains { $0.kind == .warning && $0.location.contains("open.example.com") })
    }

    @Test(arguments: [
        (
            plist(
                "<key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict><key>example.com</key><dict><key>NSIncludesSubdomains</key><string>YES</string></dict></dict></dict>"
            ),
            "NSAppTransportSecurity.NSPinnedDomains[\"example.com\"].NSIncludesSubdomains: expected a Boolean (<true/> or <false/>), found a string"
        ),
        (
            plist(
                "<key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict><key>example.com</key><dict><key>NSIncludesSubdomains</key><integer>1</integer></dict></dict></dict>"
            ),
            "expected a Boolean (<true/> or <false/>), found a number"
        ),
        (
            plist("<key>NSAppTransportSecurity</key><array/>"),
            "NSAppTransportSecurity: expected a dictionary, found an array"
        ),
        (
            plist(
                "<key>TSKConfiguration</key><dict><key>kTSKPinnedDomains</key><dict><key>example.com</key><dict><key>kTSKPublicKeyHashes</key><string>x</string></dict></dict></dict>"
            ),
            "kTSKPublicKeyHashes: expected an array, found a string"
        ),
        (
            plist(
                """
                <key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict><key>example.com</key><dict><key>NSPinnedLeafIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(testBase64(1))</string></dict></array></dict></dict></dict>
                <key>TSKConfiguration</key><dict><key>kTSKPinnedDomains</key><dict><key>Example.com</key><dict><key>kTSKPublicKeyHashes</key><array><string>\(testBase64(2))</string></array></dict></dict></dict>
                """),
            "domain example.com is already configured at NSAppTransportSecurity.NSPinnedDomains[\"example.com\"]"
        ),
        (
            "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><plist version=\"1.0\"><string>&e;</string></plist>",
            "entity declarations are refused"
        ),
        ("<plist version=\"1.0\"><dict><key>a</key></plist>", "not a property list"),
        ("{ NSAppTransportSecurity = { }; }", "an OpenStep text property list"),
        ("<plist version=\"1.0\"><array/></plist>", "(top level): expected a dictionary, found an array"),
        (plist("<key>Other</key><true/>"), "no pinned domain to import"),
        (
            "<plist version=\"1.0\">" + String(repeating: "<array>", count: 600)
                + String(repeating: "</array>", count: 600)
                + "</plist>",
            "not a property list"
        ),
    ])
    func refusesBadPlistsAndWritesNothing(text: String, message: String) throws {
        let workspace = try Workspace.interop()
        try workspace.write("Info.plist", text)
        let result = workspace.run([
            "import", "apple-plist", "@Info.plist", "--scope", "com.example.app", "-o", "@payload.json",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains(workspace.path("Info.plist")), "\(result.err)")
        #expect(result.err.contains(message), "\(result.err)")
        #expect(!workspace.exists("payload.json"))
    }

    @Test func refusesTruncatedBinaryPlists() throws {
        let value = try PropertyListSerialization.propertyList(
            from: Data(atsAndTrustKit.utf8), options: [], format: nil)
        let binary = [UInt8](try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
        for length in [8, binary.count / 2, binary.count - 1] {
            #expect(throws: InteropError.self) { try ApplePlist.importPins(Array(binary.prefix(length))) }
        }
    }
}
