// `pinion import android-nsc`: real files from public apps, the NSC rules, and hostile XML.

import Foundation
import PinionCore
import PinionInterop
import PinionTestSupport
import Testing

private let threemaFile = "android-nsc/threema-ch__threema-android__app_src_main_res_xml_network_security_config.xml"
private let httptoolkitFile =
    "android-nsc/httptoolkit__android-ssl-pinning-demo__app_src_main_res_xml_network_security_config.xml"

private func nsc(_ body: String) -> String {
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<network-security-config>\n\(body)\n</network-security-config>\n"
}

@Suite struct ImportAndroidNSCTests {
    @Test func importsThreemaExactly() throws {
        let workspace = try Workspace.interop()
        try workspace.writeBytes("nsc.xml", try fixture(threemaFile))
        let result = workspace.ok([
            "import", "android-nsc", "@nsc.xml", "--scope", "ch.threema.app", "-o", "@payload.json",
        ])
        let payload = try workspace.payload("payload.json")
        #expect(payload.scope == "ch.threema.app")
        #expect(payload.version == 1 && payload.rootVersion == 1)
        #expect(payload.issuedAt == workspace.now && payload.lifetime == 30 * 86_400)
        let expected: [(String, [String])] = [
            (
                "threema.ch",
                [
                    "vGQZ8hm2h+km+q7rnJ7kF9S17BwSY0rbhwjz6nIupf0=", "3L0bKTNfTwVUCjYqqhZXJIO03qC00bSnuxZFsb09OUo=",
                    "NN6Lb+2AE7CN3HWZKoWOe6mmHROOnywWoKZYWL1oHIU=", "efJCZofFPR3oV/bBk0wmehqnhy3Vv+s9P+3sjhHem/E=",
                    "2Vpy8qUQCqc2+Lg6BgRO8G6e6vh7NmvVHTljfwP/Pfk=", "KKBJHJn1PQSdNTmoAfhxqWTO61r8O8bPi/JeGtP/6gg=",
                ]
            ),
            (
                "threema.com",
                [
                    "saKwtUPx8bCj9CW+c55nU2jb4aOpr0vBD8XMJveXq34=", "nZWRY8rNSEqxjQDQjaunWlUL+YBOTK1xN5Bb0wMq/K0=",
                    "5AfgU7xFqhx5AS69cQZlAGv6JpmLm0A+Z6yBrLPOCP8=", "GGSYKwkV3h6SRIY16Ixsh8LEKuGuhx3B4CamRde4xgY=",
                    "oD0JGdy32wZtoUT4n9ac3HLOgEosnx2kq+qaJnmtsQk=", "j4n4RTr0MLfQ3gBmONIFreXDq5/Kkb2oquVTmq0n5pI=",
                ]
            ),
            (
                "sfu.threema.ch",
                [
                    "useMPV2qPBEgxVucMPuqexG27L64zFAksHh9BehZpY0=", "88JttF0tDWrGT6g8H9uEZ0T8xosvZtZwWlsZuD4NvHA=",
                    "F82gDLif130AsVx454ZsMxPGl9EpzB5LqY39CzVKWDQ=", "Jo4Re5X+mksn/Ankgrnov07caZwkkT8NezJMQf1i8cI=",
                ]
            ),
            (
                "test.threema.ch",
                [
                    "Dvvb0s1E8Y2tG67GoyzIkmJNAebvOqQjz4TnPMq3yhI=", "/mH2CVdSxVBMuKiRHplBP2GTFWs/l+KXHriAxRFNsaw=",
                    "bmsGGaIGEs1HWAUIE082NSPYTURvChScDmE7PjL+5RQ=",
                ]
            ),
        ]
        #expect(payload.domains.map(\.name) == expected.map(\.0))
        for (domain, (_, pins)) in zip(payload.domains, expected) {
            #expect(domain.pins.map(\.description) == pins.map { "sha256/" + $0 })
            #expect(domain.includeSubdomains && domain.enforce)
        }
        #expect(result.out.contains("skipped: <base-config>"))
        #expect(result.out.contains("wrote"))
    }

    @Test func importsHTTPToolkitWithItsDudPinNormalisedAndNotes() throws {
        let workspace = try Workspace.interop()
        try workspace.writeBytes("nsc.xml", try fixture(httptoolkitFile))
        let result = workspace.ok([
            "import", "android-nsc", "@nsc.xml", "--scope", "tech.httptoolkit.pinning-demo", "-o", "@payload.json",
        ])
        let payload = try workspace.payload("payload.json")
        #expect(payload.domains.map(\.name) == ["sha256.badssl.com", "rsa4096.badssl.com"])
        #expect(
            payload.domains[0].pins.map(\.description) == [
                "sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M=",
                "sha256/ABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFA=",
            ])
        #expect(payload.domains[1].pins.map(\.description) == ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M="])
        #expect(payload.domains.allSatisfy { !$0.includeSubdomains && $0.enforce })
        #expect(result.out.contains("line 17: normalised: pin \"ABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFA\""))
        #expect(result.out.contains("unknown, ignored: <trustkit-config> in <domain-config>"))
        #expect(result.out.contains("skipped: amiusing.httptoolkit.tech has no pin-set"))
        #expect(result.out.contains("skipped: <trust-anchors>"))
        #expect(result.out.contains("warning: rsa4096.badssl.com has one pin"))
    }

    @Test func nestedDomainConfigInheritsThePinSet() throws {
        let text = nsc(
            """
            <domain-config>
                <domain includeSubdomains="true">example.com</domain>
                <pin-set><pin digest="SHA-256">\(testBase64(1))</pin><pin digest="SHA-256">\(testBase64(2))</pin></pin-set>
                <domain-config>
                    <domain>Api.Example.COM.</domain>
                </domain-config>
                <domain-config>
                    <domain>cdn.example.com</domain>
                    <pin-set><pin digest="SHA-256">\(testBase64(3))</pin></pin-set>
                </domain-config>
            </domain-config>
            """)
        let result = try AndroidNSC.importPins(Array(text.utf8), now: Timestamp(secondsSince1970: 0))
        #expect(result.domains.map(\.name) == ["example.com", "api.example.com", "cdn.example.com"])
        #expect(
            result.domains.map { $0.pins.map(\.description) } == [
                [testPin(1), testPin(2)], [testPin(1), testPin(2)], [testPin(3)],
            ])
        #expect(result.domains.map(\.includeSubdomains) == [true, false, false])
        #expect(result.notes.contains { $0.kind == .normalised && $0.message.contains("written as api.example.com") })
    }

    @Test func expirationAndOverridePinsAreReportedAsNotRepresentable() throws {
        let text = nsc(
            """
            <domain-config>
                <domain>example.com</domain>
                <pin-set expiration="2020-01-01"><pin digest="SHA-256">\(testBase64(1))</pin><pin digest="SHA-256">\(testBase64(2))</pin></pin-set>
                <trust-anchors><certificates src="user" overridePins="true"/></trust-anchors>
            </domain-config>
            <debug-overrides><trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>
            """)
        let result = try AndroidNSC.importPins(Array(text.utf8), now: Timestamp(secondsSince1970: 1_796_029_200))
        #expect(result.domains.count == 1)
        // A past expiration is a warning (Android no longer enforces those pins); a future one
        // is only not representable.
        let warnings = result.notes.filter { $0.kind == .warning && $0.message.contains("expiration") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("already past") == true)
        let notRepresentable = result.notes.filter { $0.kind == .notRepresentable }
        #expect(notRepresentable.count == 1)
        #expect(notRepresentable.first?.message.contains("overridePins") == true)
        #expect(result.notes.contains { $0.kind == .skipped && $0.message.contains("debug-overrides") })
    }

    @Test func badPinsAreNotImportedAndNamed() throws {
        let text = nsc(
            """
            <domain-config>
                <domain>example.com</domain>
                <pin-set>
                    <pin digest="SHA-1">\(testBase64(1))</pin>
                    <pin digest="SHA-256">not base64!</pin>
                    <pin digest="SHA-256">AAAA</pin>
                    <pin digest="SHA-256">\(testBase64(2))</pin>
                </pin-set>
            </domain-config>
            """)
        let result = try AndroidNSC.importPins(Array(text.utf8), now: Timestamp(secondsSince1970: 0))
        #expect(result.domains.map { $0.pins.map(\.description) } == [[testPin(2)]])
        #expect(result.notes.filter { $0.kind == .rejected }.map(\.location) == ["line 6", "line 7", "line 8"])
    }

    @Test func mergesIntoAnExistingPayload() throws {
        let workspace = try Workspace.interop()
        workspace.ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", "30d", "-o", "@payload.json"])
        workspace.ok([
            "manifest", "set-domain", "@payload.json", "example.com", "--pin", testPin(9), "--pin", testPin(8),
        ])
        workspace.ok([
            "manifest", "set-domain", "@payload.json", "other.example.org", "--pin", testPin(7), "--pin", testPin(6),
        ])
        try workspace.write(
            "nsc.xml",
            nsc(
                "<domain-config><domain>example.com</domain><pin-set><pin digest=\"SHA-256\">\(testBase64(1))</pin><pin digest=\"SHA-256\">\(testBase64(2))</pin></pin-set></domain-config>"
            ))
        let result = workspace.ok(["import", "android-nsc", "@nsc.xml", "--into", "@payload.json"])
        #expect(result.out.contains("the entry of example.com is replaced"))
        let payload = try workspace.payload("payload.json")
        #expect(payload.domains.map(\.name) == ["example.com", "other.example.org"])
        #expect(payload.domains[0].pins.map(\.description) == [testPin(1), testPin(2)])
    }

    @Test(arguments: [
        (
            "<?xml version=\"1.0\"?><!DOCTYPE network-security-config [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><network-security-config><domain-config><domain>&xxe;</domain></domain-config></network-security-config>",
            "<!DOCTYPE found"
        ),
        (
            "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]><network-security-config>&lol2;</network-security-config>",
            "entity declarations are refused"
        ),
        ("<network-security-config><domain-config>", "not well-formed XML"),
        ("<network-security-config><domain-config></network-security-config>", "not well-formed XML"),
        ("<manifest/>", "root element is <manifest>, expected <network-security-config>"),
        ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><network-security-config/>", "only UTF-8 is accepted"),
        (
            "<network-security-config><domain-config><domain includeSubdomains=\"yes\">example.com</domain></domain-config></network-security-config>",
            "includeSubdomains=\"yes\" is not true or false"
        ),
        (
            "<network-security-config><domain-config><domain>a.example.com</domain></domain-config><domain-config><domain>A.example.com</domain></domain-config></network-security-config>",
            "domain a.example.com is already configured at line 1"
        ),
        ("<network-security-config><base-config/></network-security-config>", "no pinned domain to import"),
        (
            "<network-security-config>" + String(repeating: "<domain-config>", count: 40)
                + String(repeating: "</domain-config>", count: 40) + "</network-security-config>",
            "nest deeper than 32 levels"
        ),
    ])
    func refusesHostileOrInvalidFilesAndWritesNothing(text: String, message: String) throws {
        let workspace = try Workspace.interop()
        try workspace.write("nsc.xml", text)
        let result = workspace.run([
            "import", "android-nsc", "@nsc.xml", "--scope", "com.example.app", "-o", "@payload.json",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains(workspace.path("nsc.xml")), "\(result.err)")
        #expect(result.err.contains(message), "\(result.err)")
        #expect(!workspace.exists("payload.json"))
    }

    @Test func refusesNonUTF8AndOversizedFiles() throws {
        let workspace = try Workspace.interop()
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<network-security-config/>".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        try workspace.writeBytes("utf16.xml", utf16)
        try workspace.writeBytes(
            "latin1.xml", Array("<network-security-config>".utf8) + [0xE9] + Array("</network-security-config>".utf8))
        try workspace.write(
            "big.xml",
            "<network-security-config>" + String(repeating: " ", count: 1 << 20) + "</network-security-config>")
        for (file, message) in [
            ("utf16.xml", "only UTF-8"), ("latin1.xml", "not valid UTF-8"), ("big.xml", "larger than the limit"),
        ] {
            let result = workspace.run([
                "import", "android-nsc", "@" + file, "--scope", "com.example.app", "-o", "@payload.json",
            ])
            #expect(result.status == 1, "\(file)")
            #expect(result.err.contains(message), "\(file): \(result.err)")
        }
        #expect(!workspace.exists("payload.json"))
    }

    @Test func usageErrors() throws {
        let workspace = try Workspace.interop()
        try workspace.writeBytes("nsc.xml", try fixture(threemaFile))
        try workspace.write("payload.json", "{}")
        let cases: [([String], String)] = [
            (["import", "ios", "@nsc.xml", "--scope", "s", "-o", "@out.json"], "FORMAT must be"),
            (["import", "android-nsc", "@nsc.xml", "-o", "@out.json"], "--scope is required"),
            (["import", "android-nsc", "@nsc.xml", "--scope", "s"], "--out is required"),
            (["import", "android-nsc", "@nsc.xml", "--scope", "S!", "-o", "@out.json"], "--scope"),
            (["import", "android-nsc", "@nsc.xml", "--into", "@payload.json", "--scope", "s"], "cannot be combined"),
            (["import", "android-nsc", "@nsc.xml", "--scope", "s", "-o", "@payload.json"], "already exists"),
        ]
        for (arguments, message) in cases {
            let result = workspace.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
        }
        #expect(!workspace.exists("out.json"))
        #expect(try workspace.read("payload.json") == "{}")
        #expect(workspace.run(["import", "android-nsc", "@missing.xml", "--scope", "s", "-o", "@o.json"]).status == 3)
    }
}
