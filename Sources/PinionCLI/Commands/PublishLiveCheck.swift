// `pinion publish`'s look before it removes a pin: the effective-policy changes against the
// manifest being replaced, and with --check-live the live servers of every host that loses a
// pin, probed as `lint --live` probes them, after the step has fully verified.

import PinionCore
import PinionInterop
import PinionPublisher
import PinionSystem
import PinionTrust

/// The options of the live check and the decision it takes on a verified publish step.
struct PublishLiveCheck {
    /// The options, shown in `publish --help`.
    static let options: [OptionSpec] = [
        .flag("check-live"), .value("live", repeatable: true), .value("connect-to", repeatable: true),
        .value("resolve", repeatable: true), .value("cafile"), .value("allow-unreachable", repeatable: true),
        .flag("allow-removing-live-pin"), .value("baseline", repeatable: true),
    ]

    var checkLive: Bool
    var targets: [String]
    var connectTo: (all: String?, byHost: [String: String])
    var caFile: String?
    /// Lowercase host names whose failure to answer does not refuse the publish.
    var allowUnreachable: [String]
    var allowRemovingLivePin: Bool
    var baselines: [(label: String, baseline: Baseline)]

    /// Reads and checks the options before anything is published or probed.
    ///
    /// - Throws: `CLIError.usage` for a live option without --check-live, a malformed
    ///   HOST:PORT, --connect-to or --allow-unreachable value; I/O for an unreadable
    ///   --cafile or --baseline; failure for a --baseline that does not parse.
    init(_ arguments: ParsedArguments) throws(CLIError) {
        checkLive = arguments.flag("check-live")
        targets = arguments.values("live")
        caFile = arguments.value("cafile")
        allowRemovingLivePin = arguments.flag("allow-removing-live-pin")
        if !checkLive {
            let given = ["live", "connect-to", "resolve", "cafile", "allow-unreachable"].filter {
                arguments.value($0) != nil
            }
            if let option = given.first { throw .usage("--\(option) needs --check-live") }
            if allowRemovingLivePin {
                throw .usage(
                    "--allow-removing-live-pin needs --check-live: the warning names the servers that still present the pins"
                )
            }
        }
        for target in targets { _ = try SPKICommand.splitHostPort(target, option: "--live") }
        connectTo = try ConnectTo.liveMap(
            arguments.values("connect-to") + arguments.values("resolve"), option: "--connect-to")
        allowUnreachable = []
        for host in arguments.values("allow-unreachable") {
            guard let name = MergedPolicy.normalizedHost(host), (try? HostName.validate(name)) != nil else {
                throw .usage("--allow-unreachable: \"\(host)\" is not a host name (give the name, without a port)")
            }
            allowUnreachable.append(name)
        }
        if let caFile { _ = try Files.read(caFile, limit: maxInputBytes) }
        baselines = []
        for path in arguments.values("baseline") {
            let bytes = try Files.read(path, limit: maxInputBytes)
            do { baselines.append((path, try Baseline.parse(bytes))) } catch {
                throw .failure(error.inFile(path).description)
            }
        }
    }

    /// Lists what the step changes and, with --check-live, probes the hosts that lose a pin.
    ///
    /// - Parameters:
    ///   - preview: the fully verified step.
    ///   - paths: the envelope files given, by position.
    ///   - context: output.
    /// - Throws: `CLIError`: failure (`removed-pin-live`, a subdomain entry without targets,
    ///   a chain that fails X.509), I/O (a host that cannot be reached), usage (an
    ///   --allow-unreachable host that no manifest, baseline or target names).
    func look(at preview: PublishPreview, paths: [String], context: CLIContext) throws {
        guard let new = preview.published else { return }
        let liveHosts = try targets.map { (target) throws(CLIError) in
            try SPKICommand.splitHostPort(target, option: "--live").0.lowercased()
        }
        // A name no manifest, baseline or target mentions is a typo: it would excuse nothing.
        var known = Set(liveHosts + new.domains.map(\.name) + (preview.replaced?.domains.map(\.name) ?? []))
        for (_, baseline) in baselines { known.formUnion(baseline.domains.map(\.name)) }
        for host in allowUnreachable where !known.contains(host) {
            throw CLIError.usage(
                "--allow-unreachable \(host): no such host in manifest version \(new.version), the manifest it replaces, a --baseline or a --live target"
            )
        }
        let changes = PolicyChanges.compare(
            from: preview.replaced, to: new, baselines: baselines, hosts: liveHosts)
        let against =
            preview.replaced.map { "version \($0.version), the manifest being replaced" }
            ?? (baselines.isEmpty ? "no manifest (none is published yet)" : "the baseline alone")
        // A first manifest with no baseline given: every domain is "newly pinned", which says
        // nothing; what it replaces is each app's baseline, shown when --baseline names it.
        if !changes.isEmpty, preview.replaced != nil || !baselines.isEmpty {
            context.print("manifest version \(new.version) changes the effective policy against \(against):")
            for change in changes { context.print("  " + change.description) }
            if baselines.isEmpty, changes.contains(where: { !$0.namedByManifest && $0.before != nil }) {
                context.warn(
                    "no --baseline given: a dropped domain falls back to each app's baseline pins, taken as none here; give --baseline FILE (one per app release) to compare with them"
                )
            }
        }
        let removals = changes.filter { !$0.removed.isEmpty }
        let hosts = orderedUnique(removals.map(\.host))
        guard !hosts.isEmpty else { return }
        guard checkLive else {
            let file = preview.publishedInput.flatMap { paths.indices.contains($0) ? paths[$0] : nil } ?? "ENVELOPE"
            let previous = preview.replacedPath.map { " --previous \($0)" } ?? ""
            let live = hosts.flatMap(targets(for:)).map { " --live \($0)" }.joined()
            context.warn(
                "manifest version \(new.version) removes pins of \(hosts.joined(separator: ", ")); a server still presenting one is refused by every client that fetches it. Check first: pinion lint \(file)\(previous)\(live) (or publish with --check-live)"
            )
            return
        }
        var refusals: [String] = []
        // An includeSubdomains entry: its own name's server says nothing about its subdomains'.
        for change in removals where change.coversSubdomains && change.after?.entry.name == change.host {
            let under = liveHosts.filter { $0.hasSuffix("." + change.host) }
            if under.isEmpty {
                refusals.append(
                    "\(change.host) covers its subdomains (includeSubdomains): probing \(change.host) proves nothing about their servers; give --live SUBDOMAIN.\(change.host):PORT for every subdomain served"
                )
            }
        }
        let probedHosts = Set(hosts)
        for target in targets {
            let host = try SPKICommand.splitHostPort(target, option: "--live").0.lowercased()
            if !probedHosts.contains(host) { context.print("live \(target): no pin of \(host) is removed; not probed") }
        }
        var unreachable: [String] = []
        var presented: [String] = []
        var reported: [String] = []
        for host in hosts {
            for target in targets(for: host) {
                let probe = try LiveProbe.probeAll(
                    target, address: connectTo.byHost[host] ?? connectTo.all, caFile: caFile)
                for line in probe.lines { context.print(line) }
                let allowed = allowUnreachable.contains(host)
                for failure in probe.failures {
                    if allowed {
                        context.warn("\(target): \(failure); not checked (--allow-unreachable \(host))")
                    } else {
                        unreachable.append("\(target): \(failure)")
                    }
                }
                for (endpoint, family, result) in probe.completed {
                    guard result.verified else {
                        let reason =
                            "\(target) at \(endpoint) (\(family.rawValue)): X.509 validation failed: \(result.verifyError ?? "unknown error"); give --cafile for a private CA"
                        if allowed {
                            context.warn(reason + "; not checked (--allow-unreachable \(host))")
                        } else {
                            refusals.append(reason)
                        }
                        continue
                    }
                    let chain = LiveProbe.verifiedChain(result)
                    for change in removals where change.host == host {
                        let pins = change.removedPinsStillPresented(chain)
                        guard !pins.isEmpty, let after = change.after else { continue }
                        let scope =
                            change.baselines.isEmpty ? "" : " (baseline \(change.baselines.joined(separator: ", ")))"
                        let line =
                            "\(host)\(scope): \(endpoint) (\(family.rawValue)) still presents \(pins.map(\.description).joined(separator: ", ")), removed from \(after.entry.name)"
                        if after.enforce { presented.append(line) } else { reported.append(line) }
                    }
                }
                if probe.failures.isEmpty || allowed {
                    context.print(
                        "checked \(target) at \(probe.endpoints.isEmpty ? "no address" : probe.endpoints.joined(separator: ", "))"
                    )
                }
            }
        }
        for line in orderedUnique(reported) {
            context.warn("removed-pin-live (report-only): \(line); clients report failures")
        }
        let livePins = orderedUnique(presented)
        if !livePins.isEmpty, allowRemovingLivePin, refusals.isEmpty, unreachable.isEmpty {
            context.warn(
                "--allow-removing-live-pin: PUBLISHING A MANIFEST THAT CUTS OFF LIVE SERVERS: every client that fetches version \(new.version) refuses them:"
            )
            for line in livePins { context.warn("  removed-pin-live: \(line)") }
        } else if !livePins.isEmpty {
            refusals =
                livePins.map {
                    "removed-pin-live: \($0); clients taking this manifest refuse it (an outage)"
                } + refusals
        }
        if !refusals.isEmpty {
            throw CLIError.failure(
                (refusals + unreachable).joined(separator: "\n")
                    + "\nnothing written: keep a pin until no server presents it"
                    + (livePins.isEmpty || allowRemovingLivePin
                        ? "" : " (in an emergency, --allow-removing-live-pin publishes anyway)"))
        }
        if !unreachable.isEmpty {
            throw CLIError.io(
                unreachable.joined(separator: "\n")
                    + "\nnothing written: every address of a host that loses a pin must answer; --allow-unreachable HOST for a host that is gone"
            )
        }
    }

    /// The --live targets for `host`, or `host:443`.
    private func targets(for host: String) -> [String] {
        let given = targets.filter { (try? SPKICommand.splitHostPort($0, option: "--live").0.lowercased()) == host }
        return given.isEmpty ? ["\(host):443"] : given
    }

    private func orderedUnique(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }
}
