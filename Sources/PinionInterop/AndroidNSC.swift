// Android Network Security Configuration (res/xml/network_security_config.xml): pins in, pins out.

import Foundation
import PinionCore

/// Android's Network Security Configuration file format (developer.android.com,
/// "Network security configuration"): `<network-security-config>` with `<domain-config>`
/// elements holding `<domain includeSubdomains=...>` names and a `<pin-set>` of
/// `<pin digest="SHA-256">base64</pin>`.
public enum AndroidNSC {
    /// Reads the pinned domains of a Network Security Configuration file.
    ///
    /// Every `<domain-config>` with a `<pin-set>` (its own, or inherited from an enclosing
    /// `<domain-config>`, as Android does) gives one entry per `<domain>`: enforced, with
    /// `includeSubdomains` from the attribute. Not representable, noted and left out: the
    /// pin-set `expiration` (Android stops pinning after it, Pinion never fails open on
    /// expiry) and `overridePins` (user CAs bypass pins). Noted and skipped: `base-config`,
    /// `debug-overrides`, `trust-anchors`, `cleartextTrafficPermitted`, domains without pins.
    /// Unknown elements (such as a `trustkit-config`) are tolerated with a note. A pin that
    /// is not SHA-256, or not 32 bytes of base64, is not imported (noted); unpadded base64
    /// is normalised (noted). Host names are lowercased, with one trailing dot removed.
    ///
    /// - Parameters:
    ///   - bytes: the file (UTF-8 XML without DTD; see `SafeXML.parse`).
    ///   - now: the current time, to tell whether a pin-set expiration is already past.
    ///   - limits: XML limits.
    ///   - exemptSubdomainsByDroppingInclude: when a domain Android leaves unpinned (no
    ///     pin-set, or an empty one) lies under an imported includeSubdomains entry, turn
    ///     that entry's includeSubdomains off instead of enforcing the parent's pins on it
    ///     (see `unpinnedSubdomains`).
    /// - Returns: the entries and the notes.
    /// - Throws: `InteropError`: XML problems (`SafeXML`), `.wrongRoot` when the root element
    ///   is not `network-security-config`, `.invalidValue` for an includeSubdomains other
    ///   than true/false, `.duplicateDomain` for a domain configured twice (Android refuses
    ///   such files too).
    public static func importPins(
        _ bytes: [UInt8], now: Timestamp, limits: XMLLimits = XMLLimits(),
        exemptSubdomainsByDroppingInclude: Bool = false
    )
        throws(InteropError) -> ImportResult
    {
        let root = try SafeXML.parse(bytes, limits: limits)
        guard root.name == "network-security-config" else {
            throw InteropError(
                .wrongRoot, at: root.location, "root element is <\(root.name)>, expected <network-security-config>")
        }
        var reader = Reader(now: now)
        for child in root.children {
            switch child.name {
            case "domain-config": try reader.domainConfig(child, inherited: nil)
            case "base-config":
                reader.note(.skipped, child, "<base-config>: its trust anchors and cleartext setting are not pins")
            case "debug-overrides":
                reader.note(.skipped, child, "<debug-overrides> apply to debug builds only")
            default: reader.note(.unknown, child, "<\(child.name)>")
            }
        }
        var result = ImportResult(domains: reader.domains, notes: reader.notes)
        unpinnedSubdomains(reader.unpinned, in: &result, dropInclude: exemptSubdomainsByDroppingInclude)
        return result
    }

    /// Writes domain entries as a Network Security Configuration file.
    ///
    /// One `<domain-config>` per entry with its `<domain>` and a `<pin-set>` without
    /// `expiration` (baseline pins never expire open). The caller removes report-only
    /// entries first: NSC pins are always enforced.
    ///
    /// - Parameters:
    ///   - domains: enforced entries with at least one pin each.
    ///   - comment: text for a leading XML comment (one line per element; `--` is escaped).
    /// - Returns: the file, UTF-8, final newline.
    public static func export(_ domains: [ManifestPayload.Domain], comment: [String]) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        text += XMLText.comment(comment, indent: "")
        text += "<network-security-config>\n"
        for domain in domains {
            text += "    <domain-config>\n"
            text += "        <domain includeSubdomains=\"\(domain.includeSubdomains)\">"
            text += MarkupText.escape(domain.name) + "</domain>\n"
            text += "        <pin-set>\n"
            for pin in domain.pins {
                text += "            <pin digest=\"SHA-256\">\(Base64.encode(pin.digest))</pin>\n"
            }
            text += "        </pin-set>\n"
            text += "    </domain-config>\n"
        }
        text += "</network-security-config>\n"
        return text
    }

    private struct Reader {
        let now: Timestamp
        var domains: [ManifestPayload.Domain] = []
        var notes: [ImportNote] = []
        /// Where each imported or skipped domain name was first configured.
        var seen: [String: String] = [:]
        /// Domains Android leaves unpinned (no pin-set, or one without any `<pin>`).
        var unpinned: [UnpinnedDomain] = []

        struct PinSet {
            var pins: [Pin]
            var location: String
            /// Whether the pin-set holds any `<pin>` element (an empty one unpins on Android).
            var hasPinElements = true
        }

        mutating func note(_ kind: ImportNote.Kind, _ node: XMLNode, _ message: String) {
            notes.append(ImportNote(kind, at: node.location, message))
        }

        mutating func domainConfig(_ config: XMLNode, inherited: PinSet?) throws(InteropError) {
            for (name, _) in config.attributes.sorted(by: { $0.key < $1.key }) where name != "cleartextTrafficPermitted"
            {
                if !name.contains(":") { note(.unknown, config, "attribute \(name) of <domain-config>") }
            }
            var pinSet = inherited
            var domainNodes: [XMLNode] = []
            var nested: [XMLNode] = []
            for child in config.children {
                switch child.name {
                case "domain": domainNodes.append(child)
                case "pin-set":
                    // Android refuses the file ("Multiple pin-set elements not allowed"):
                    // importing either one would silently drop the other's pins.
                    if let own = pinSet, own.location != inherited?.location {
                        throw InteropError(
                            .invalidValue, at: child.location,
                            "a second <pin-set> in one <domain-config> (the first is at \(own.location)); Android refuses the file"
                        )
                    }
                    pinSet = try self.pinSet(child)
                case "trust-anchors":
                    trustAnchors(child)
                case "domain-config": nested.append(child)
                default: note(.unknown, child, "<\(child.name)> in <domain-config>")
                }
            }
            for node in domainNodes {
                try domain(node, pinSet: pinSet)
            }
            for child in nested {
                try domainConfig(child, inherited: pinSet)
            }
        }

        mutating func domain(_ node: XMLNode, pinSet: PinSet?) throws(InteropError) {
            let includeSubdomains: Bool
            switch node.attributes["includeSubdomains"]?.trimmingASCIIWhitespace() {
            case nil, "false": includeSubdomains = false
            case "true": includeSubdomains = true
            case let other?:
                throw InteropError(
                    .invalidValue, at: node.location,
                    "includeSubdomains=\(ForeignText.quoted(other)) is not true or false (Android refuses the file)")
            }
            if let child = node.children.first {
                // Text around a child element would be glued together into another name.
                throw InteropError(
                    .invalidValue, at: child.location, "<\(child.name)> inside <domain>: a domain is text only")
            }
            let name: String
            do {
                let parsed = try ForeignText.hostName(node.text)
                name = parsed.name
                if parsed.normalised {
                    note(.normalised, node, "domain \(ForeignText.quoted(node.text)) written as \(name)")
                }
            } catch {
                note(.rejected, node, "domain \(ForeignText.quoted(node.text)): \(error)")
                return
            }
            if let first = seen[name] {
                throw InteropError(
                    .duplicateDomain, at: node.location, "domain \(name) is already configured at \(first)")
            }
            seen[name] = node.location
            guard let pinSet else {
                unpinned.append(UnpinnedDomain(name: name, location: node.location, reason: "has no pin-set"))
                return
            }
            if pinSet.pins.isEmpty, !pinSet.hasPinElements {
                unpinned.append(
                    UnpinnedDomain(
                        name: name, location: node.location, reason: "has an empty pin-set at \(pinSet.location)"))
                return
            }
            guard !pinSet.pins.isEmpty else {
                note(.rejected, node, "\(name): the pin-set at \(pinSet.location) has no usable pin")
                return
            }
            if pinSet.pins.count < 2 {
                note(.warning, node, "\(name) has one pin; signing needs a backup pin (RFC 7469 §4.3)")
            }
            domains.append(ManifestPayload.Domain(name: name, includeSubdomains: includeSubdomains, pins: pinSet.pins))
        }

        mutating func pinSet(_ node: XMLNode) throws(InteropError) -> PinSet {
            if let expiration = node.attributes["expiration"] {
                var message =
                    "pin-set expiration \(ForeignText.quoted(expiration)): Android stops checking these pins then (fails open); Pinion never does, the pins are imported without it (the manifest's expiresAt bounds a manifest instead)"
                if let day = Self.day(expiration), day <= now {
                    // Android has stopped enforcing these pins: imported as enforced, they may
                    // no longer match what the server presents (an outage).
                    message +=
                        "; that date is already past, so Android no longer enforces these pins: check them (pinion check-host) before signing"
                    note(.warning, node, message)
                } else {
                    note(.notRepresentable, node, message)
                }
            }
            var pins: [Pin] = []
            for child in node.children {
                guard child.name == "pin" else {
                    note(.unknown, child, "<\(child.name)> in <pin-set>")
                    continue
                }
                if let inner = child.children.first {
                    throw InteropError(
                        .invalidValue, at: inner.location, "<\(inner.name)> inside <pin>: a pin is text only")
                }
                let digest = child.attributes["digest"] ?? ""
                guard digest.uppercased() == "SHA-256" else {
                    note(
                        .rejected, child,
                        "pin with digest \(ForeignText.quoted(digest)): only digest=\"SHA-256\" is supported")
                    continue
                }
                guard let (pin, changes) = AndroidBase64.pin(child.text) else {
                    note(.rejected, child, "pin \(ForeignText.quoted(child.text)) is not 32 bytes of base64")
                    continue
                }
                if !changes.isEmpty {
                    note(
                        .normalised, child,
                        "pin \(ForeignText.quoted(child.text)) written as \(pin) (\(changes.joined(separator: ", ")); Android reads both spellings as the same key)"
                    )
                }
                if pins.contains(pin) {
                    note(.skipped, child, "\(pin) is listed twice in this pin-set")
                    continue
                }
                pins.append(pin)
            }
            return PinSet(
                pins: pins, location: node.location, hasPinElements: node.children.contains { $0.name == "pin" })
        }

        mutating func trustAnchors(_ node: XMLNode) {
            note(.skipped, node, "<trust-anchors>: Pinion pins keys on top of normal X.509 validation")
            for child in node.children where child.attributes["overridePins"]?.trimmingASCIIWhitespace() == "true" {
                note(
                    .notRepresentable, child,
                    "overridePins=\"true\" (certificates from \(child.attributes["src"] ?? "?") bypass the pins); Pinion has no pin bypass"
                )
            }
        }

        /// `yyyy-MM-dd` as midnight UTC.
        static func day(_ text: String) -> Timestamp? {
            try? Timestamp(rfc3339: text.trimmingASCIIWhitespace() + "T00:00:00Z")
        }
    }
}

/// Comments for generated XML (text is escaped by `MarkupText`).
enum XMLText {
    /// An XML comment of several lines; `--` (not allowed in comments) becomes `- -`.
    static func comment(_ lines: [String], indent: String) -> String {
        guard !lines.isEmpty else { return "" }
        var text = indent + "<!--\n"
        for line in lines {
            var safe = line
            while safe.contains("--") { safe = safe.replacingOccurrences(of: "--", with: "- -") }
            if safe.hasSuffix("-") { safe += " " }
            text += indent + "  " + safe + "\n"
        }
        return text + indent + "-->\n"
    }
}
