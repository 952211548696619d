// Android domains left unpinned under a pinned includeSubdomains parent: what Pinion will
// really do with them, said in the import's notes, and the opt-in way to keep them free.

import PinionCore

/// A `<domain>` that Android does not pin: no pin-set applies, or its own pin-set is empty.
struct UnpinnedDomain {
    var name: String
    var location: String
    /// `has no pin-set`, `has an empty pin-set at line N`.
    var reason: String
}

extension AndroidNSC {
    /// Notes each unpinned domain. Android exempts a subdomain from its parent's pins; a
    /// Pinion manifest cannot (an includeSubdomains entry covers every name below it, and
    /// a subdomain entry without pins is refused), so such a subdomain WILL be enforced
    /// with the parent's pins, and the note says so. With `dropInclude`, the parent's
    /// includeSubdomains is turned off instead: the unpinned names are then free as on
    /// Android, but so is every other subdomain not listed in the file; a warning lists
    /// the subdomains still pinned (their own entries).
    static func unpinnedSubdomains(_ unpinned: [UnpinnedDomain], in result: inout ImportResult, dropInclude: Bool) {
        var dropped: [String: [String]] = [:]
        for domain in unpinned {
            let parents = result.domains.filter { $0.includeSubdomains && domain.name.hasSuffix("." + $0.name) }
            guard let parent = parents.max(by: { $0.name.count < $1.name.count }) else {
                result.notes.append(
                    ImportNote(.skipped, at: domain.location, "\(domain.name) \(domain.reason) (not pinned)"))
                continue
            }
            if dropInclude {
                dropped[parent.name, default: []].append(domain.name)
                result.notes.append(
                    ImportNote(
                        .normalised, at: domain.location,
                        "Android leaves \(domain.name) unpinned (it \(domain.reason)); it stays unpinned because includeSubdomains of \(parent.name) is turned off"
                    ))
            } else {
                result.notes.append(
                    ImportNote(
                        .warning, at: domain.location,
                        "Android leaves \(domain.name) unpinned (it \(domain.reason)); Pinion cannot exempt a subdomain of an includeSubdomains entry, so it will be enforced with \(parent.name)'s pins (or import with --exempt-subdomains-by-dropping-include)"
                    ))
            }
        }
        for (parent, exempted) in dropped.sorted(by: { $0.key < $1.key }) {
            guard let index = result.domains.firstIndex(where: { $0.name == parent }) else { continue }
            result.domains[index].includeSubdomains = false
            let pinned = result.domains.map(\.name).filter { $0.hasSuffix("." + parent) }
            result.notes.append(
                ImportNote(
                    .warning, at: parent,
                    "--exempt-subdomains-by-dropping-include: includeSubdomains of \(parent) is turned off so that \(exempted.joined(separator: ", ")) stay unpinned; every subdomain of \(parent) not listed in the file is no longer pinned either; still pinned by their own entries: \(pinned.isEmpty ? "none" : pinned.joined(separator: ", "))"
                ))
        }
    }
}
