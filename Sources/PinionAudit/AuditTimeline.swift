// The auditor's pin timeline: each domain's and each revocation's changes, version by version.
// A version that failed verification shows its changes marked untrusted, relative to the last
// verified version, and never becomes the baseline of the next.

import PinionCore
import PinionTrust

extension AuditRun {
    mutating func timelineStep(from old: ManifestPayload?, to new: ManifestPayload, version: Int64, trusted: Bool) {
        let date = new.issuedAt
        func event(_ name: String, _ version: Int64, _ date: Timestamp, _ change: DomainEvent) {
            self.event(name, version, date, change, trusted: trusted)
        }
        guard let old else {
            for domain in new.domains {
                let listed: DomainEvent =
                    trusted
                    ? .added(enforce: domain.enforce, includeSubdomains: domain.includeSubdomains, pins: domain.pins)
                    : .claimed(enforce: domain.enforce, includeSubdomains: domain.includeSubdomains, pins: domain.pins)
                event(domain.name, version, date, listed)
            }
            revocationEvents(
                revoked: new.revokedPins, lifted: [], old: nil, new: new, version: version, trusted: trusted)
            return
        }
        let diff = ManifestDiff.unchecked(old, new)
        for domain in diff.domainsRemoved { event(domain.name, version, date, .removed) }
        for domain in diff.domainsAdded {
            event(
                domain.name, version, date,
                .added(enforce: domain.enforce, includeSubdomains: domain.includeSubdomains, pins: domain.pins))
        }
        for change in diff.domainsChanged {
            for pin in change.pinsAdded { event(change.name, version, date, .pinAdded(pin)) }
            for pin in change.pinsRemoved { event(change.name, version, date, .pinRemoved(pin)) }
            if let enforce = change.enforce { event(change.name, version, date, .enforceChanged(enforce.new)) }
            if let include = change.includeSubdomains {
                event(change.name, version, date, .includeSubdomainsChanged(include.new))
            }
        }
        revocationEvents(
            revoked: diff.revocationsAdded, lifted: diff.revocationsLifted, old: old, new: new, version: version,
            trusted: trusted)
    }

    mutating func revocationEvents(
        revoked: [Pin], lifted: [Pin], old: ManifestPayload?, new: ManifestPayload, version: Int64, trusted: Bool
    ) {
        guard !revoked.isEmpty || !lifted.isEmpty else { return }
        let date = new.issuedAt
        let changed = Set(revoked + lifted)
        // Which domains list each changed pin, before or after the step.
        var holders: [Pin: [String]] = [:]
        for domain in (old?.domains ?? []) + new.domains {
            for pin in domain.pins where changed.contains(pin) && !(holders[pin]?.contains(domain.name) ?? false) {
                holders[pin, default: []].append(domain.name)
            }
        }
        // The revocations list holds only what verified versions did.
        for pin in revoked {
            if trusted {
                report.revocations.append(RevocationEvent(version: version, date: date, pin: pin, lifted: false))
            }
            for name in holders[pin] ?? [] { event(name, version, date, .pinRevoked(pin), trusted: trusted) }
        }
        for pin in lifted {
            if trusted {
                report.revocations.append(RevocationEvent(version: version, date: date, pin: pin, lifted: true))
            }
            for name in holders[pin] ?? [] { event(name, version, date, .revocationLifted(pin), trusted: trusted) }
        }
    }

    mutating func event(_ name: String, _ version: Int64, _ date: Timestamp, _ event: DomainEvent, trusted: Bool) {
        let slot: Int
        if let existing = domainSlots[name] {
            slot = existing
        } else {
            slot = report.domains.count
            domainSlots[name] = slot
            report.domains.append(DomainTimeline(name: name, entries: []))
        }
        report.domains[slot].entries.append(
            DomainTimeline.Entry(version: version, date: date, event: event, trusted: trusted))
    }
}
