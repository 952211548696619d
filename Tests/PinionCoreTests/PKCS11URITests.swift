// RFC 7512 PKCS#11 URIs as Pinion accepts them: the attributes it matches on, the PIN
// sources it refuses, and hostile spellings.

import PinionCore
import Testing

@Suite struct PKCS11URITests {
    @Test func parsesTokenAndObjectAttributes() throws {
        let uri = try PKCS11URI(
            parsing:
                "pkcs11:model=SoftHSM%20v2;manufacturer=SoftHSM%20project;serial=4fbab6fe1ce9aa35;token=pinion;object=root-2026;id=%01%A2;type=private"
        )
        #expect(uri.model == "SoftHSM v2")
        #expect(uri.manufacturer == "SoftHSM project")
        #expect(uri.serial == "4fbab6fe1ce9aa35")
        #expect(uri.token == "pinion")
        #expect(uri.object == "root-2026")
        #expect(uri.id == [0x01, 0xA2])
        #expect(uri.type == "private")
        #expect(uri.pinSourceFile == nil)
    }

    @Test func rfc7512ExamplesThatNameNoPINParse() throws {
        // RFC 7512 §3 examples (those without pin-value).
        for text in [
            "pkcs11:", "pkcs11:object=my-pubkey;type=public",
            "pkcs11:object=my-key;type=private?pin-source=file:/etc/token",
            "pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=",
            "pkcs11:slot-description=Sun%20Metaslot",
            "pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token;library-version=1",
            "pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?pin-source=file:/etc/token_pin",
            "pkcs11:object=my-sign-key;type=private?module-name=mypkcs11", "pkcs11:x-vendor-attribute=value",
        ] {
            #expect(throws: Never.self, "\(text)") { try PKCS11URI(parsing: text) }
        }
        let softtoken = try PKCS11URI(
            parsing: "pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.")
        #expect(softtoken.token == "The Software PKCS#11 Softtoken")
        #expect(softtoken.manufacturer == "Snake Oil, Inc.")
    }

    @Test func pinSourceFileIsTheOnlyPINSource() throws {
        for (text, path) in [
            ("pkcs11:token=t?pin-source=file:/run/pin", "/run/pin"),
            ("pkcs11:token=t?pin-source=file:///run/pin", "/run/pin"),
            ("pkcs11:token=t?pin-source=file://localhost/run/pin", "/run/pin"),
            ("pkcs11:token=t?pin-source=file:/a%20b/pin", "/a b/pin"),
        ] {
            #expect(try PKCS11URI(parsing: text).pinSourceFile == path, "\(text)")
        }
        #expect(throws: PKCS11URIError.pinValueRefused) { try PKCS11URI(parsing: "pkcs11:token=t?pin-value=1234") }
        for refused in [
            "|/usr/bin/echo 1234", "/run/pin", "file:relative/pin", "file://otherhost/pin", "https://x/pin", "file:/",
        ] {
            let encoded = refused.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "|", with: "%7C")
            #expect(throws: PKCS11URIError.pinSourceRefused(refused), "\(refused)") {
                try PKCS11URI(parsing: "pkcs11:token=t?pin-source=" + encoded)
            }
        }
    }

    @Test func refusesMalformedAndUnknownComponents() {
        #expect(throws: PKCS11URIError.notAPKCS11URI) { try PKCS11URI(parsing: "pkcs12:token=t") }
        #expect(throws: PKCS11URIError.notAPKCS11URI) { try PKCS11URI(parsing: "PKCS11:token=t") }
        #expect(throws: PKCS11URIError.duplicateAttribute("token")) {
            try PKCS11URI(parsing: "pkcs11:token=a;token=b")
        }
        #expect(throws: PKCS11URIError.duplicateAttribute("pin-source")) {
            try PKCS11URI(parsing: "pkcs11:token=a?pin-source=file:/a&pin-source=file:/b")
        }
        #expect(throws: PKCS11URIError.unknownAttribute("label")) { try PKCS11URI(parsing: "pkcs11:label=a") }
        #expect(throws: PKCS11URIError.unknownAttribute("token")) { try PKCS11URI(parsing: "pkcs11:?token=a") }
        #expect(throws: PKCS11URIError.malformedComponent("token")) { try PKCS11URI(parsing: "pkcs11:token") }
        #expect(throws: PKCS11URIError.malformedComponent("=x")) { try PKCS11URI(parsing: "pkcs11:=x") }
        #expect(throws: PKCS11URIError.badObjectType("secret")) { try PKCS11URI(parsing: "pkcs11:type=secret") }
        #expect(throws: PKCS11URIError.badSlotID("-1")) { try PKCS11URI(parsing: "pkcs11:slot-id=-1") }
        #expect(throws: PKCS11URIError.badSlotID("99999999999999999999999")) {
            try PKCS11URI(parsing: "pkcs11:slot-id=99999999999999999999999")
        }
        #expect(throws: PKCS11URIError.tooLong(limit: PKCS11URI.maximumLength)) {
            try PKCS11URI(parsing: "pkcs11:object=" + String(repeating: "a", count: PKCS11URI.maximumLength))
        }
    }

    @Test func refusesBadPercentEncodingAndUnescapedDelimiters() {
        for text in [
            "pkcs11:object=%", "pkcs11:object=%4", "pkcs11:object=%zz", "pkcs11:object=a%2", "pkcs11:object=a b",
            "pkcs11:object=a\u{7F}", "pkcs11:object=\u{E9}", "pkcs11:object=a#b", "pkcs11:object=%FF%FE",
            "pkcs11:object=a\"b",
        ] {
            #expect(throws: PKCS11URIError.self, "\(text)") { try PKCS11URI(parsing: text) }
        }
        // Bytes are fine in id=, which is binary.
        #expect(throws: Never.self) { try PKCS11URI(parsing: "pkcs11:id=%FF%FE%00") }
    }

    @Test func printsAURIThatParsesBackToTheSameValue() throws {
        var uri = PKCS11URI()
        uri.token = "team root; HSM #2"
        uri.manufacturer = "Yubico"
        uri.serial = "0012"
        uri.object = "root-2026/alice"
        uri.id = [0x00, 0xFF, 0x2F]
        uri.pinSourceFile = "/run/secrets/pin file"
        let text = uri.description
        #expect(text.hasPrefix("pkcs11:manufacturer=Yubico;serial=0012;token=team%20root%3B%20HSM%20%232;"))
        #expect(text.contains("id=%00%FF%2F"))
        let again = try PKCS11URI(parsing: text)
        #expect(again == uri)
    }

    @Test func isURITellsURIsFromFileNames() {
        #expect(PKCS11URI.isURI("pkcs11:token=t"))
        #expect(!PKCS11URI.isURI("./pkcs11:token=t"))
        #expect(!PKCS11URI.isURI("root.key"))
    }
}
