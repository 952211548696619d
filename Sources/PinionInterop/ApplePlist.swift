// Apple property lists: App Transport Security's NSPinnedDomains and TrustKit's TSKConfiguration.

import Foundation
import PinionCore

/// Whether an Apple pinned identity is the server's own key or a CA's key on its chain.
public enum PinRole: String, Sendable, Equatable, CaseIterable {
    /// `NSPinnedLeafIdentities`: the key of the server's certificate.
    case leaf
    /// `NSPinnedCAIdentities`: the key of an intermediate or root CA certificate.
    case ca
}

/// Pins in an Info.plist: `NSAppTransportSecurity` / `NSPinnedDomains` (Apple, "Identity
/// Pinning: How to configure server certificates for your app") and TrustKit's
/// `TSKConfiguration` / `kTSKPinnedDomains`.
public enum ApplePlist {
    /// Largest property list read, in bytes.
    public static let maxBytes = 1 << 20

    /// Reads the pinned domains of a property list (XML or binary).
    ///
    /// NSPinnedDomains: one enforced entry per domain key, `NSIncludesSubdomains`, and the
    /// `SPKI-SHA256-BASE64` values of `NSPinnedLeafIdentities` and `NSPinnedCAIdentities`
    /// as one pin set (noted as looser when both are given: Apple requires a leaf and a CA
    /// match, Pinion one pin anywhere on the verified chain). TrustKit: `kTSKPublicKeyHashes`,
    /// `kTSKIncludeSubdomains`, and `kTSKEnforcePinning` false as report-only;
    /// `kTSKExpirationDate` is not representable (noted); report URIs and other settings are
    /// noted and skipped. Unknown keys inside the pinning dictionaries are noted.
    ///
    /// - Parameter bytes: the property list, at most `maxBytes` bytes; XML without entity
    ///   declarations, or binary. OpenStep text plists are refused.
    /// - Returns: the entries, sorted by name, and the notes.
    /// - Throws: `InteropError`: `.tooLarge`, `.documentTypeRefused`, `.malformed` (not a
    ///   property list, or OpenStep), `.wrongType` (a value of the wrong type, named by its key
    ///   path), `.invalidValue`, `.duplicateDomain` (one domain in both sections, or twice
    ///   after lowercasing).
    public static func importPins(_ bytes: [UInt8]) throws(InteropError) -> ImportResult {
        guard bytes.count <= maxBytes else {
            throw InteropError(.tooLarge, "larger than the limit of \(maxBytes) bytes")
        }
        if bytes.starts(with: Array("bplist".utf8)) == false {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw InteropError(.notUTF8, "neither a binary property list nor UTF-8 XML")
            }
            if text.contains("<!ENTITY") {
                throw InteropError(.documentTypeRefused, "<!ENTITY found: entity declarations are refused")
            }
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
        } catch {
            throw InteropError(.malformed, "not a property list (XML or binary)")
        }
        guard format == .xml || format == .binary else {
            throw InteropError(.malformed, "an OpenStep text property list; only XML and binary are accepted")
        }
        let top = try dictionary(value, at: "(top level)")
        var reader = Reader()
        if let ats = top["NSAppTransportSecurity"] {
            try reader.appTransportSecurity(try dictionary(ats, at: "NSAppTransportSecurity"))
        }
        if let trustKit = top["TSKConfiguration"] {
            try reader.trustKit(try dictionary(trustKit, at: "TSKConfiguration"))
        }
        if top["NSAppTransportSecurity"] == nil, top["TSKConfiguration"] == nil {
            reader.notes.append(
                ImportNote(.skipped, at: "(top level)", "neither NSAppTransportSecurity nor TSKConfiguration: no pins"))
        }
        return ImportResult(domains: reader.domains.sorted { $0.name < $1.name }, notes: reader.notes)
    }

    /// Writes domain entries as an XML property list.
    ///
    /// Enforced entries go to `NSAppTransportSecurity` / `NSPinnedDomains`, each pin under
    /// `NSPinnedLeafIdentities` or `NSPinnedCAIdentities` by its role. Report-only entries go
    /// to TrustKit's `TSKConfiguration` / `kTSKPinnedDomains` with `kTSKEnforcePinning` false
    /// (ATS cannot report without refusing).
    ///
    /// - Parameters:
    ///   - domains: entries with at least one pin each.
    ///   - roles: the role of each pin of an enforced entry.
    ///   - assume: the role of pins missing from `roles`; nil to refuse them.
    ///   - comment: lines of a leading XML comment.
    /// - Returns: the plist text (UTF-8, tabs, final newline) and warnings for the operator.
    /// - Throws: `InteropError.unknownRole` naming every pin of an enforced entry whose role is
    ///   unknown.
    public static func export(
        _ domains: [ManifestPayload.Domain], roles: [Pin: PinRole], assume: PinRole?, comment: [String]
    ) throws(InteropError) -> (text: String, warnings: [String]) {
        var unknown: [String] = []
        for domain in domains where domain.enforce {
            for pin in domain.pins where roles[pin] == nil && assume == nil {
                unknown.append("\(domain.name) \(pin)")
            }
        }
        if !unknown.isEmpty {
            throw InteropError(
                .unknownRole,
                "the role (leaf or CA) of these pins is unknown: \(unknown.joined(separator: ", ")); give the certificates, CSRs or keys they came from with --certs, or --assume leaf|ca"
            )
        }
        var warnings: [String] = []
        let enforced = domains.filter(\.enforce)
        let reportOnly = domains.filter { !$0.enforce }
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">

            """
        text += XMLText.comment(comment, indent: "")
        text += "<plist version=\"1.0\">\n<dict>\n"
        if !enforced.isEmpty {
            text += "\t<key>NSAppTransportSecurity</key>\n\t<dict>\n\t\t<key>NSPinnedDomains</key>\n\t\t<dict>\n"
            for domain in enforced {
                let leaf = domain.pins.filter { (roles[$0] ?? assume) == .leaf }
                let ca = domain.pins.filter { (roles[$0] ?? assume) == .ca }
                if !leaf.isEmpty, !ca.isEmpty {
                    warnings.append(
                        "\(domain.name): has leaf and CA pins; Apple then requires a leaf match AND a CA match, Pinion one match of any pin"
                    )
                }
                text += "\t\t\t<key>\(MarkupText.escape(domain.name))</key>\n\t\t\t<dict>\n"
                text += "\t\t\t\t<key>NSIncludesSubdomains</key>\n\t\t\t\t<\(domain.includeSubdomains)/>\n"
                for (key, pins) in [("NSPinnedLeafIdentities", leaf), ("NSPinnedCAIdentities", ca)] where !pins.isEmpty
                {
                    text += "\t\t\t\t<key>\(key)</key>\n\t\t\t\t<array>\n"
                    for pin in pins {
                        text += "\t\t\t\t\t<dict>\n\t\t\t\t\t\t<key>SPKI-SHA256-BASE64</key>\n"
                        text += "\t\t\t\t\t\t<string>\(Base64.encode(pin.digest))</string>\n\t\t\t\t\t</dict>\n"
                    }
                    text += "\t\t\t\t</array>\n"
                }
                text += "\t\t\t</dict>\n"
            }
            text += "\t\t</dict>\n\t</dict>\n"
        }
        if !reportOnly.isEmpty {
            text += "\t<key>TSKConfiguration</key>\n\t<dict>\n\t\t<key>kTSKPinnedDomains</key>\n\t\t<dict>\n"
            for domain in reportOnly {
                if domain.pins.count < 2 {
                    warnings.append("\(domain.name): TrustKit refuses a domain with fewer than two pins")
                }
                text += "\t\t\t<key>\(MarkupText.escape(domain.name))</key>\n\t\t\t<dict>\n"
                text += "\t\t\t\t<key>kTSKEnforcePinning</key>\n\t\t\t\t<false/>\n"
                text += "\t\t\t\t<key>kTSKIncludeSubdomains</key>\n\t\t\t\t<\(domain.includeSubdomains)/>\n"
                text += "\t\t\t\t<key>kTSKPublicKeyHashes</key>\n\t\t\t\t<array>\n"
                for pin in domain.pins { text += "\t\t\t\t\t<string>\(Base64.encode(pin.digest))</string>\n" }
                text += "\t\t\t\t</array>\n\t\t\t</dict>\n"
            }
            text += "\t\t</dict>\n\t</dict>\n"
        }
        text += "</dict>\n</plist>\n"
        return (text, warnings)
    }

    /// A dictionary with string keys, or `.wrongType` naming `path`.
    static func dictionary(_ value: Any, at path: String) throws(InteropError) -> [String: Any] {
        guard let dictionary = value as? [String: Any] else {
            throw InteropError(.wrongType, at: path, "expected a dictionary, found \(typeName(value))")
        }
        return dictionary
    }

    static func array(_ value: Any, at path: String) throws(InteropError) -> [Any] {
        guard let array = value as? [Any] else {
            throw InteropError(.wrongType, at: path, "expected an array, found \(typeName(value))")
        }
        return array
    }

    static func string(_ value: Any, at path: String) throws(InteropError) -> String {
        guard let string = value as? String else {
            throw InteropError(.wrongType, at: path, "expected a string, found \(typeName(value))")
        }
        return string
    }

    /// A `<true/>` or `<false/>`; integers (which Foundation also bridges to Bool) are refused.
    static func boolean(_ value: Any, at path: String) throws(InteropError) -> Bool {
        guard type(of: value) == Bool.self, let flag = value as? Bool else {
            throw InteropError(
                .wrongType, at: path, "expected a Boolean (<true/> or <false/>), found \(typeName(value))")
        }
        return flag
    }

    static func typeName(_ value: Any) -> String {
        if type(of: value) == Bool.self { return "a Boolean" }
        switch value {
        case is String: return "a string"
        case is [Any]: return "an array"
        case is [String: Any], is [AnyHashable: Any]: return "a dictionary"
        case is Date: return "a date"
        case is Data: return "data"
        case is NSNumber: return "a number"
        default: return "another type"
        }
    }

    private struct Reader {
        var domains: [ManifestPayload.Domain] = []
        var notes: [ImportNote] = []
        var seen: [String: String] = [:]

        mutating func appTransportSecurity(_ ats: [String: Any]) throws(InteropError) {
            for key in ats.keys.sorted() where key != "NSPinnedDomains" {
                notes.append(ImportNote(.skipped, at: "NSAppTransportSecurity.\(key)", "not a pinning setting"))
            }
            guard let pinned = ats["NSPinnedDomains"] else { return }
            let base = "NSAppTransportSecurity.NSPinnedDomains"
            for (key, value) in try ApplePlist.dictionary(pinned, at: base).sorted(by: { $0.key < $1.key }) {
                let path = "\(base)[\(ForeignText.quoted(key))]"
                let entry = try ApplePlist.dictionary(value, at: path)
                var includeSubdomains = false
                var pins: [Pin] = []
                var kinds: [String] = []
                for (member, memberValue) in entry.sorted(by: { $0.key < $1.key }) {
                    let memberPath = "\(path).\(member)"
                    switch member {
                    case "NSIncludesSubdomains":
                        includeSubdomains = try ApplePlist.boolean(memberValue, at: memberPath)
                    case "NSPinnedLeafIdentities", "NSPinnedCAIdentities":
                        let before = pins.count
                        for (index, identity) in try ApplePlist.array(memberValue, at: memberPath).enumerated() {
                            let identityPath = "\(memberPath)[\(index)]"
                            let fields = try ApplePlist.dictionary(identity, at: identityPath)
                            for field in fields.keys.sorted() where field != "SPKI-SHA256-BASE64" {
                                notes.append(ImportNote(.unknown, at: "\(identityPath).\(field)", "key \(field)"))
                            }
                            guard let hash = fields["SPKI-SHA256-BASE64"] else {
                                notes.append(ImportNote(.rejected, at: identityPath, "no SPKI-SHA256-BASE64"))
                                continue
                            }
                            addPin(
                                try ApplePlist.string(hash, at: identityPath + ".SPKI-SHA256-BASE64"),
                                at: identityPath + ".SPKI-SHA256-BASE64", to: &pins)
                        }
                        if pins.count > before { kinds.append(member) }
                    default:
                        notes.append(ImportNote(.unknown, at: memberPath, "key \(member)"))
                    }
                }
                if kinds.count == 2 {
                    notes.append(
                        ImportNote(
                            .warning, at: path,
                            "leaf and CA identities together: Apple requires a match of each, Pinion accepts any one pin on the verified chain (looser)"
                        ))
                }
                if includeSubdomains {
                    notes.append(
                        ImportNote(
                            .warning, at: path,
                            "NSIncludesSubdomains covers one label level; Pinion's includeSubdomains covers every level below"
                        ))
                }
                try add(key, at: path, includeSubdomains: includeSubdomains, enforce: true, pins: pins)
            }
        }

        mutating func trustKit(_ configuration: [String: Any]) throws(InteropError) {
            for key in configuration.keys.sorted() where key != "kTSKPinnedDomains" {
                let kind: ImportNote.Kind =
                    key == "kTSKIgnorePinningForUserDefinedTrustAnchors" ? .notRepresentable : .skipped
                notes.append(ImportNote(kind, at: "TSKConfiguration.\(key)", "not imported"))
            }
            guard let pinned = configuration["kTSKPinnedDomains"] else { return }
            let base = "TSKConfiguration.kTSKPinnedDomains"
            for (key, value) in try ApplePlist.dictionary(pinned, at: base).sorted(by: { $0.key < $1.key }) {
                let path = "\(base)[\(ForeignText.quoted(key))]"
                let entry = try ApplePlist.dictionary(value, at: path)
                var includeSubdomains = false
                var enforce = true
                var excluded = false
                var pins: [Pin] = []
                for (member, memberValue) in entry.sorted(by: { $0.key < $1.key }) {
                    let memberPath = "\(path).\(member)"
                    switch member {
                    case "kTSKIncludeSubdomains":
                        includeSubdomains = try ApplePlist.boolean(memberValue, at: memberPath)
                    case "kTSKEnforcePinning":
                        enforce = try ApplePlist.boolean(memberValue, at: memberPath)
                    case "kTSKExcludeSubdomainFromParentPolicy":
                        excluded = try ApplePlist.boolean(memberValue, at: memberPath)
                    case "kTSKPublicKeyHashes":
                        for (index, hash) in try ApplePlist.array(memberValue, at: memberPath).enumerated() {
                            let hashPath = "\(memberPath)[\(index)]"
                            addPin(try ApplePlist.string(hash, at: hashPath), at: hashPath, to: &pins)
                        }
                    case "kTSKExpirationDate":
                        notes.append(
                            ImportNote(
                                .notRepresentable, at: memberPath,
                                "TrustKit stops pinning after this date (fails open); Pinion never does, the pins are imported without it"
                            ))
                    case "kTSKReportUris", "kTSKDisableDefaultReportUri":
                        notes.append(
                            ImportNote(.skipped, at: memberPath, "reports go to the SDK's callback and report URI"))
                    case "kTSKPublicKeyAlgorithms":
                        notes.append(ImportNote(.skipped, at: memberPath, "not needed: pins cover the whole SPKI"))
                    default:
                        notes.append(ImportNote(.unknown, at: memberPath, "key \(member)"))
                    }
                }
                if excluded {
                    notes.append(
                        ImportNote(
                            .warning, at: path,
                            "kTSKExcludeSubdomainFromParentPolicy: Pinion cannot unpin a subdomain of a pinned parent; not imported, so a parent with includeSubdomains now pins this subdomain too (check its server presents a pinned key)"
                        ))
                    continue
                }
                if !enforce {
                    notes.append(ImportNote(.normalised, at: path, "kTSKEnforcePinning false imported as report-only"))
                }
                try add(key, at: path, includeSubdomains: includeSubdomains, enforce: enforce, pins: pins)
            }
        }

        mutating func addPin(_ text: String, at path: String, to pins: inout [Pin]) {
            guard let (pin, normalised) = ForeignText.pin(text) else {
                notes.append(ImportNote(.rejected, at: path, "\(ForeignText.quoted(text)) is not 32 bytes of base64"))
                return
            }
            if normalised {
                notes.append(ImportNote(.normalised, at: path, "\(ForeignText.quoted(text)) written as \(pin)"))
            }
            if pins.contains(pin) {
                notes.append(ImportNote(.skipped, at: path, "\(pin) is listed twice for this domain"))
                return
            }
            pins.append(pin)
        }

        mutating func add(_ key: String, at path: String, includeSubdomains: Bool, enforce: Bool, pins: [Pin])
            throws(InteropError)
        {
            let name: String
            do {
                let parsed = try ForeignText.hostName(key)
                name = parsed.name
                if parsed.normalised {
                    notes.append(ImportNote(.normalised, at: path, "domain written as \(name)"))
                }
            } catch {
                notes.append(ImportNote(.rejected, at: path, "domain \(ForeignText.quoted(key)): \(error)"))
                return
            }
            if let first = seen[name] {
                throw InteropError(.duplicateDomain, at: path, "domain \(name) is already configured at \(first)")
            }
            seen[name] = path
            guard !pins.isEmpty else {
                notes.append(ImportNote(.rejected, at: path, "\(name) has no usable pin"))
                return
            }
            if enforce, pins.count < 2 {
                notes.append(
                    ImportNote(.warning, at: path, "\(name) has one pin; signing needs a backup pin (RFC 7469 §4.3)"))
            }
            domains.append(
                ManifestPayload.Domain(name: name, includeSubdomains: includeSubdomains, enforce: enforce, pins: pins))
        }
    }
}
