// A domain's pin timeline as segments: runs of versions in which the domain's verified pin set
// and flags did not change, with each pin's bars and the revocations on them. This is how a
// 10,000-version history becomes a picture: one segment per change, not one row per version.

import PinionCore

/// One run of versions with the same verified entry for a domain.
public struct PinSegment: Sendable, Equatable {
    /// First and last version of the run (inclusive).
    public var from: Int64
    public var until: Int64
    /// The issuedAt of the version that started the run.
    public var date: Timestamp
    /// Whether the domain is listed in the run (false after it was removed).
    public var listed: Bool
    /// The domain's pins in the run.
    public var pins: [Pin]
    public var enforce: Bool
    public var includeSubdomains: Bool
    /// The changes made by the version that started the run (text for people).
    public var changes: [String]
}

/// One pin's presence: the versions from `from` to `until` (inclusive) listed it.
public struct PinBar: Sendable, Equatable {
    /// The pin drawn.
    public var pin: Pin
    /// The first manifest version that lists it.
    public var from: Int64
    /// The last manifest version of the run (inclusive).
    public var until: Int64

    /// A bar from version `from` to `until`, both inclusive.
    public init(pin: Pin, from: Int64, until: Int64) {
        self.pin = pin
        self.from = from
        self.until = until
    }
}

/// A domain's timeline folded into segments and bars.
public struct DomainPinSegments: Sendable, Equatable {
    public var name: String
    public var segments: [PinSegment]
    /// Each pin's presence runs, in order of first appearance.
    public var bars: [PinBar]
    /// Revocations (and lifts) of this domain's pins by verified versions.
    public var revocations: [RevocationEvent]
    /// What versions that failed verification claim for this domain: never its pins.
    public var untrusted: [DomainTimeline.Entry]

    /// Folds `timeline` over the versions `first ... last` (the manifests' range): only
    /// trusted entries change the pins; untrusted ones are kept apart.
    ///
    /// - Parameters:
    ///   - timeline: the domain's entries, in version order.
    ///   - last: the newest version audited (the last segment ends there).
    /// - Returns: the segments (none before the domain first appears) and bars.
    public init(_ timeline: DomainTimeline, last: Int64) {
        name = timeline.name
        segments = []
        revocations = []
        untrusted = timeline.entries.filter { !$0.trusted }
        var current: PinSegment?
        for entry in timeline.entries where entry.trusted {
            if case .pinRevoked(let pin) = entry.event {
                revocations.append(RevocationEvent(version: entry.version, date: entry.date, pin: pin, lifted: false))
                continue
            }
            if case .revocationLifted(let pin) = entry.event {
                revocations.append(RevocationEvent(version: entry.version, date: entry.date, pin: pin, lifted: true))
                continue
            }
            var next =
                current
                ?? PinSegment(
                    from: entry.version, until: entry.version, date: entry.date, listed: false, pins: [],
                    enforce: true, includeSubdomains: false, changes: [])
            if next.from != entry.version {
                if var done = current {
                    done.until = entry.version - 1
                    segments.append(done)
                }
                next.from = entry.version
                next.date = entry.date
                next.changes = []
            }
            switch entry.event {
            case .added(let enforce, let includeSubdomains, let pins):
                next.listed = true
                next.pins = pins
                next.enforce = enforce
                next.includeSubdomains = includeSubdomains
                next.changes.append("listed (\(enforce ? "enforce" : "report-only"))")
            case .claimed:
                // Untrusted only, and untrusted entries never shape a segment.
                break
            case .removed:
                next.listed = false
                next.pins = []
                next.changes.append("removed (the baseline applies)")
            case .pinAdded(let pin):
                if !next.pins.contains(pin) { next.pins.append(pin) }
                next.changes.append("+ \(pin)")
            case .pinRemoved(let pin):
                next.pins.removeAll { $0 == pin }
                next.changes.append("- \(pin)")
            case .enforceChanged(let value):
                next.enforce = value
                next.changes.append(value ? "enforce (was report-only)" : "report-only (was enforce)")
            case .includeSubdomainsChanged(let value):
                next.includeSubdomains = value
                next.changes.append("includeSubdomains \(value)")
            case .pinRevoked, .revocationLifted: break
            }
            current = next
        }
        if var done = current {
            done.until = max(last, done.from)
            segments.append(done)
        }
        bars = Self.bars(segments)
    }

    private static func bars(_ segments: [PinSegment]) -> [PinBar] {
        var bars: [PinBar] = []
        var open: [Pin: Int] = [:]
        for segment in segments {
            let present = Set(segment.listed ? segment.pins : [])
            open = open.filter { present.contains($0.key) }
            for pin in segment.listed ? segment.pins : [] {
                if let index = open[pin] {
                    bars[index].until = segment.until
                } else {
                    open[pin] = bars.count
                    bars.append(PinBar(pin: pin, from: segment.from, until: segment.until))
                }
            }
        }
        return bars
    }
}
