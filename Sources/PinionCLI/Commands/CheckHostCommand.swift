// `pinion check-host`: whether a live server's verified chain passes a manifest's pins.

import PinionCore
import PinionCrypto
import PinionInterop
import PinionLinux
import PinionSystem

struct CheckHostCommand: Command {
    static let path = ["check-host"]
    static let summary = "connect and say whether the live chain passes a manifest's pins, and why"
    static let options: [OptionSpec] =
        VerifiedManifestFile.options + [
            .value("baseline"), .value("cafile"), .value("servername"), .value("connect-to"),
        ]
    static let help = """
        usage: pinion check-host ENVELOPE HOST:PORT [--root ROOT_ENVELOPE [--root-chain DIR]]
                                 [--baseline FILE] [--cafile F] [--servername NAME]
                                 [--connect-to ADDRESS[:PORT]] [--at TIME]

        Connects to HOST:PORT (or ADDRESS), validates the chain as the SDK does (X.509 and
        the host name against the system store or --cafile), then evaluates the verified
        chain against the policy a client would hold: the manifest ENVELOPE (or payload)
        merged with the --baseline file, revoked pins removed, expired at --at (default
        now) or not (docs/DESIGN.md sections 7 and 8). Prints the chain, then which certificate
        and pin matched which entry, or why none did.
        With --root the envelope is verified first, as pinion verify does; without it the
        signatures are not checked (a warning says so).
        Exit 0 the chain passes (or the host is not pinned), 1 it does not (rejected,
        report-only failure, or X.509 failure), 2 usage, 3 I/O or network.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let positional = try arguments.positional(["ENVELOPE", "HOST:PORT"])
        let (file, target) = (positional[0], positional[1])
        let (host, port) = try SPKICommand.splitHostPort(target, option: "HOST:PORT")
        let at = try VerifiedManifestFile.time(arguments, context: context)
        let payload: ManifestPayload
        if arguments.value("root") != nil {
            payload = try VerifiedManifestFile.load(file, arguments: arguments, context: context).payload
        } else {
            if arguments.value("root-chain") != nil { throw CLIError.usage("--root-chain needs --root") }
            switch try Load.document(file) {
            case .manifestPayload(let parsed, _): payload = parsed
            case .envelope(let envelope, _):
                guard envelope.kind == .pins else {
                    throw CLIError.usage(
                        "\(file): holds a document of type \(envelope.kind.rawValue), a manifest is needed")
                }
                payload = try Load.manifestEnvelope(file).1
            case .rootPayload: throw CLIError.usage("\(file): is a root payload, not a manifest")
            }
            context.warn("\(file): signatures not checked (give --root to verify the envelope)")
        }
        var baseline = Baseline.empty
        if let path = arguments.value("baseline") {
            do { baseline = try Baseline.parse(try Files.read(path, limit: maxInputBytes)) } catch let error
                as FormatError
            {
                throw CLIError.failure(error.inFile(path).description)
            }
        }
        let snapshot = PolicySnapshot(
            baseline: baseline, manifest: payload, manifestValid: true, revoked: Set(payload.revokedPins),
            staleGrace: 0)
        if !snapshot.isManifestCurrent(at: at) {
            context.warn(
                "\(file): expired at \(payload.expiresAt); the fail-closed merge of docs/DESIGN.md section 7 applies (baseline pins only, manifest-only domains refused)"
            )
        }
        let policy = snapshot.policy(at: at)
        let checkedName = arguments.value("servername") ?? host
        let (dial, dialPort) =
            try arguments.value("connect-to").map { (text) throws(CLIError) in
                try ConnectTo.parse(text, option: "--connect-to", defaultPort: port)
            } ?? (host, port)
        let result = try TLSProbe.chain(
            host: dial, port: dialPort, serverName: checkedName,
            caFile: arguments.value("cafile"), timeout: 10)
        context.print("chain of \(target) (\(result.protocolVersion); * on the verified path, + verified path only):")
        for line in LiveProbe.chainLines(result) { context.print(line) }
        guard result.verified else {
            throw CLIError.failure(
                "rejected: \(checkedName): X.509 validation failed: \(result.verifyError ?? "unknown error"); pins are checked only on a verified chain"
            )
        }
        let verified = result.entries.filter(\.onVerifiedPath)
        let verdict = evaluate(host: checkedName, verifiedChain: verified.map(\.object.spkiSHA256), policy: policy)
        func origin(_ entry: String) -> String {
            let sources = [
                payload.domain(named: entry) != nil ? "manifest version \(payload.version)" : nil,
                baseline.domains.contains { $0.name == entry } ? "baseline" : nil,
            ].compactMap { $0 }
            return sources.joined(separator: " + ")
        }
        switch verdict {
        case .trusted(let pin, let entry):
            let position = verified.firstIndex { $0.object.spkiSHA256 == pin.digest } ?? 0
            let certificate = verified[position].object.label
            context.print(
                "trusted: \(checkedName) passes: \(pin) is the key of \(certificate) (verified chain position \(position), 0 = leaf), pinned by entry \(entry) (\(origin(entry)))"
            )
        case .notPinned:
            context.print("not pinned: no entry covers \(checkedName); X.509 validation alone decides (it passed)")
        case .rejected(let failure), .reportOnly(let failure):
            let mode: String
            if case .rejected = verdict {
                mode = "rejected (enforced): clients refuse the connection"
            } else {
                mode = "report-only failure: clients report it and go on"
            }
            context.print(
                "\(mode): \(failure.reason) for entry \(failure.entry) (\(origin(failure.entry)))")
            let known = failure.knownPins.isEmpty ? "none" : failure.knownPins.map(\.description).joined(separator: " ")
            context.print("pins of \(failure.entry): \(known)")
            throw CLIError.failure("\(checkedName): the verified chain does not pass the pins of \(failure.entry)")
        }
    }
}
