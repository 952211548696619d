// The roles whose signatures a document needs under the root given to `pinion sign --root`,
// and how far the envelope is from each role's threshold.

import PinionCore

struct SigningRoles {
    /// One role that must reach its threshold, with the root document listing its keys.
    struct Entry {
        /// For people: `pins role`, `root role`, `old root role (version 1)`, `new root role`.
        var name: String
        var role: RootPayload.Role
        var keys: RootPayload
    }

    var entries: [Entry]

    /// The roles that sign `manifest` or `root` under `trusted`: the pins role of `trusted`
    /// for a manifest; for a root, its own root role, and, when it rotates from `trusted`
    /// (a later version), also `trusted`'s root role (docs/DESIGN.md: a threshold of the
    /// old root role and of the new one). Nil for neither.
    init?(manifest: ManifestPayload?, root: RootPayload?, trusted: RootPayload) {
        if manifest != nil {
            entries = [Entry(name: "pins role", role: trusted.pinsRole, keys: trusted)]
        } else if let root {
            if root.version > trusted.version {
                entries = [
                    Entry(
                        name: "old root role (version \(trusted.version))", role: trusted.rootRole, keys: trusted),
                    Entry(name: "new root role", role: root.rootRole, keys: root),
                ]
            } else {
                entries = [Entry(name: "root role", role: root.rootRole, keys: root)]
            }
        } else {
            return nil
        }
    }

    /// Whether any of the roles holds `keyID`.
    func holds(_ keyID: String) -> Bool {
        entries.contains { $0.role.keyIDs.contains(keyID) }
    }

    /// The role names, joined for a message: `pins role`, `old root role (version 1) or new root role`.
    var names: String { entries.map(\.name).joined(separator: " or ") }

    /// Each role's count in `envelope` and what it still needs, e.g. `pins role: 1 valid
    /// signature, 2 needed, from 3 keys (1 more needed)`; verified signatures only.
    func progress(_ envelope: Envelope, crypto: CryptoProvider) -> String {
        entries.map { entry in
            let valid = Signatures.check(envelope, role: entry.role, keys: entry.keys, crypto: crypto).valid.count
            let missing = entry.role.threshold - valid
            let state = missing > 0 ? "\(missing) more needed" : "threshold met"
            return "\(entry.name): \(SignatureCount.text(valid, of: entry.role)) (\(state))"
        }.joined(separator: "; ")
    }
}
