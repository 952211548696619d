// `pinion root init` and `pinion root rotate`: unsigned root payloads (docs/DESIGN.md §4).

import Foundation
import PinionCore
import PinionCrypto

/// Expiry options shared by root and manifest commands.
enum Validity {
    static let options: [OptionSpec] = [
        .value("expires-in"), .value("expires-at"), .value("issued-at"),
    ]

    /// (issuedAt, expiresAt) from --issued-at (default now) and --expires-in / --expires-at.
    static func window(_ arguments: ParsedArguments, context: CLIContext, defaultLifetime: Int64?)
        throws(CLIError) -> (
            Timestamp, Timestamp
        )
    {
        let issuedAt =
            try arguments.value("issued-at").map { (text) throws(CLIError) in
                try DurationText.time(text, option: "issued-at")
            } ?? context.now()
        let expiresAt: Timestamp
        switch (arguments.value("expires-in"), arguments.value("expires-at")) {
        case (.some, .some): throw .usage("give --expires-in or --expires-at, not both")
        case (.some(let text), nil):
            expiresAt = issuedAt.adding(seconds: try DurationText.seconds(text, option: "expires-in"))
        case (nil, .some(let text)): expiresAt = try DurationText.time(text, option: "expires-at")
        case (nil, nil):
            guard let defaultLifetime else { throw .usage("--expires-in or --expires-at is required") }
            expiresAt = issuedAt.adding(seconds: defaultLifetime)
        }
        guard expiresAt > issuedAt else {
            // A lifetime rule, like the root's cap: exit 1 (DESIGN.md §11), not a usage error.
            throw .failure("the expiry \(expiresAt) is not after issuedAt \(issuedAt)")
        }
        guard expiresAt.secondsSince1970 <= 253_402_300_799 else {
            throw .usage("the expiry is after the year 9999")
        }
        if expiresAt <= context.now() {
            context.warn("the new document expires at \(expiresAt), which is already past: nothing will accept it")
        }
        return (issuedAt, expiresAt)
    }
}

/// Building roles from key files and key ids.
enum RoleBuilder {
    /// Reads `.pub` files or PKCS#11 URIs into keys, refusing the same key twice in one role.
    static func keys(_ paths: [String], option: String, module: HardwareModule) throws -> [RootPayload.Key] {
        var keys: [RootPayload.Key] = []
        for path in paths {
            let key = try Load.publicKey(path, module: module)
            guard !keys.contains(where: { $0.keyID == key.keyID }) else {
                throw CLIError.usage(
                    "--\(option): \(path) is the same key (\(key.keyID)) as an earlier one")
            }
            keys.append(RootPayload.Key(keyID: key.keyID, publicKey: key.raw))
        }
        return keys
    }

    static func threshold(_ value: Int64?, option: String, keys: Int) throws(CLIError) -> Int {
        guard let value else { throw .usage("--\(option) is required") }
        guard value >= 1, value <= Int64(keys) else {
            throw .usage("--\(option) \(value) is outside 1...\(keys) (the number of keys in the role)")
        }
        return Int(value)
    }

    static func lifetimeCap(_ arguments: ParsedArguments, default value: Int64) throws(CLIError)
        -> Int64
    {
        guard let text = arguments.value("max-manifest-lifetime") else { return value }
        return try DurationText.seconds(text, option: "max-manifest-lifetime")
    }
}

struct RootInitCommand: Command {
    static let path = ["root", "init"]
    static let summary = "make root payload version 1 (keys, roles, thresholds)"
    static let options: [OptionSpec] =
        [
            .value("scope"), .value("root-key", repeatable: true), .value("root-threshold"),
            .value("pins-key", repeatable: true), .value("pins-threshold"),
            .value("max-manifest-lifetime"),
            .value("out", short: "o"), .flag("force"), HardwareModule.option,
        ] + Validity.options + RootLogOptions.options
    static let help = """
        usage: pinion root init --scope S --root-key A.pub [--root-key B.pub ...] --root-threshold N
                                --pins-key C.pub [--pins-key D.pub ...] --pins-threshold M
                                [--expires-in 1y | --expires-at TIME] [--issued-at TIME]
                                [--max-manifest-lifetime 90d] -o ROOT_PAYLOAD [--force]
                                [--log-origin O --log-key L.pub --witness NAME=W.pub@URL ...
                                 --witness-quorum Q --max-checkpoint-age 24h [--checkpoint-grace 7d]]

        Writes an unsigned root payload, version 1 (docs/DESIGN.md §4). Sign it with a threshold
        of the root keys (pinion sign), then embed the envelope in the app.

        options:
          --scope S                     1-128 characters of a-z 0-9 . _ - (not . or ..)
          --root-key F.pub|URI          a key of the root role (repeat for each); a PKCS#11
                                        URI (RFC 7512) reads the token's public key
          --pkcs11-module M.so          the PKCS#11 module for URIs (or PINION_PKCS11_MODULE)
          --root-threshold N            signatures needed from the root role (1...keys)
          --pins-key F.pub              a key of the pins role (repeat for each)
          --pins-threshold M            signatures needed from the pins role (1...keys)
          --expires-in D | --expires-at TIME   root expiry (default 1y); D like 30d, 12h, 1y
          --issued-at TIME              RFC 3339 UTC (default: now)
          --max-manifest-lifetime D     cap on each manifest's expiresAt - issuedAt (default 90d)
          -o, --out FILE                output payload (refuses to overwrite without --force)

        A transparency log (docs/DESIGN.md §12, docs/TRANSPARENCY.md): with the log flags the
        root lists a `log` member and every publish needs the log key and a quorum of witnesses.
        \(RootLogOptions.help)

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let scope = try arguments.required("scope")
        do { try Scope.validate(scope) } catch { throw CLIError.usage("--scope: \(error)") }
        let out = try arguments.required("out")
        let module = HardwareModule(arguments)
        let rootKeys = try RoleBuilder.keys(arguments.values("root-key"), option: "root-key", module: module)
        let pinsKeys = try RoleBuilder.keys(arguments.values("pins-key"), option: "pins-key", module: module)
        guard !rootKeys.isEmpty else { throw CLIError.usage("at least one --root-key is required") }
        guard !pinsKeys.isEmpty else { throw CLIError.usage("at least one --pins-key is required") }
        let rootThreshold = try RoleBuilder.threshold(
            arguments.integer("root-threshold", in: Int64.min...Int64.max), option: "root-threshold",
            keys: rootKeys.count)
        let pinsThreshold = try RoleBuilder.threshold(
            arguments.integer("pins-threshold", in: Int64.min...Int64.max), option: "pins-threshold",
            keys: pinsKeys.count)
        let (issuedAt, expiresAt) = try Validity.window(
            arguments, context: context, defaultLifetime: 31_536_000)
        let cap = try RoleBuilder.lifetimeCap(arguments, default: 90 * 86_400)
        let log = try RootLogOptions.policy(arguments, previous: nil)
        try RootLogOptions.checkQuorum(log, previous: nil, arguments)
        var keys = rootKeys
        for key in pinsKeys where !keys.contains(key) { keys.append(key) }
        let payload = RootPayload(
            scope: scope, version: 1, issuedAt: issuedAt, expiresAt: expiresAt, maxManifestLifetime: cap,
            keys: keys,
            rootRole: .init(keyIDs: rootKeys.map(\.keyID), threshold: rootThreshold),
            pinsRole: .init(keyIDs: pinsKeys.map(\.keyID), threshold: pinsThreshold), log: log)
        if let log { RootLogOptions.warn(log, context: context) }
        try Files.writeAtomically(payload.serialized(), to: out, replace: arguments.flag("force"))
        context.print("wrote \(out): root version 1 of scope \(scope), expires \(expiresAt)")
        context.print(
            "root role \(rootThreshold)-of-\(rootKeys.count), pins role \(pinsThreshold)-of-\(pinsKeys.count)"
        )
        if let log {
            context.print(RootLogOptions.summary(log))
            context.print(
                "a cosigned checkpoint carries \(log.witnesses.count + 1) of at most 32 signature lines (the log's and one per witness)"
            )
        }
        context.print("next: pinion sign --key ROOT_KEY.key \(out) -o ROOT_ENVELOPE")
    }
}

struct RootRotateCommand: Command {
    static let path = ["root", "rotate"]
    static let summary = "make the next root payload (add/remove keys, thresholds, expiry)"
    static let options: [OptionSpec] =
        [
            .value("previous"), .value("add-root-key", repeatable: true),
            .value("remove-root-key", repeatable: true),
            .value("add-pins-key", repeatable: true), .value("remove-pins-key", repeatable: true),
            .value("root-threshold"), .value("pins-threshold"), .value("max-manifest-lifetime"),
            .value("out", short: "o"), .flag("force"), .flag("cut-off-manifests"), HardwareModule.option,
            .flag("no-log"),
        ] + Validity.options + RootLogOptions.options
    static let help = """
        usage: pinion root rotate --previous ROOT_ENVELOPE
                                  [--add-root-key F.pub] [--remove-root-key F.pub|KEYID]
                                  [--add-pins-key F.pub] [--remove-pins-key F.pub|KEYID]
                                  [--root-threshold N] [--pins-threshold M]
                                  [--expires-in 1y | --expires-at TIME] [--issued-at TIME]
                                  [--max-manifest-lifetime D] [--cut-off-manifests]
                                  [log flags as pinion root init | --no-log]
                                  -o ROOT_PAYLOAD [--force]

        Writes the unsigned next root payload: version = previous + 1, same scope, the
        previous roles with the keys added and removed, thresholds kept unless given.
        It must then be signed by a threshold of the PREVIOUS root role AND of the NEW
        root role (docs/DESIGN.md §4). Keys in no role are dropped from `keys`.
        pinsRoleSince (docs/DESIGN.md §4, §5): kept from the previous root when the pins
        key ids and threshold are unchanged and the lifetime cap is not raised, so the
        published manifest stays valid through the rotation; otherwise (or with
        --cut-off-manifests) it is the new version, and a manifest re-signed under it must
        be published together with the root. Changing pinsRoleSince restarts the clients'
        revoked set (docs/DESIGN.md §7).

        options: as pinion root init, plus
          --previous F          the current root ENVELOPE
          --add-*-key F.pub|URI add a key to the role (repeatable; a PKCS#11 URI reads the token)
          --remove-*-key K      remove a key (a .pub file, a URI or a key id) from the role (repeatable)
          --cut-off-manifests   set pinsRoleSince to the new version even when the pins role is kept
          expiry defaults to 1y from --issued-at; the lifetime cap to the previous root's
          the log flags change the previous root's `log` member (kept unless a flag is
          given; a flag not given keeps the previous value); --no-log drops it

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let previousPath = try arguments.required("previous")
        let out = try arguments.required("out")
        let (_, previous) = try Load.rootEnvelope(previousPath, context: context)
        let module = HardwareModule(arguments)
        var allKeys: [String: RootPayload.Key] = [:]
        for key in previous.keys { allKeys[key.keyID] = key }

        func edit(_ role: RootPayload.Role, name: String) throws -> [String] {
            var ids = role.keyIDs
            for key in try RoleBuilder.keys(
                arguments.values("add-\(name)-key"), option: "add-\(name)-key", module: module)
            {
                guard !ids.contains(key.keyID) else {
                    throw CLIError.usage("--add-\(name)-key: \(key.keyID) is already in the \(name) role")
                }
                allKeys[key.keyID] = key
                ids.append(key.keyID)
            }
            for reference in arguments.values("remove-\(name)-key") {
                let id: String
                if (try? KeyID.validate(reference)) != nil {
                    id = reference
                } else if PKCS11URI.isURI(reference) || FileManager.default.fileExists(atPath: reference) {
                    id = try Load.publicKey(reference, module: module).keyID
                } else {
                    throw CLIError.usage(
                        "--remove-\(name)-key: \"\(reference)\" is neither a key id (64 lowercase hex) nor a .pub file")
                }
                guard let index = ids.firstIndex(of: id) else {
                    throw CLIError.usage("--remove-\(name)-key: \(id) is not in the \(name) role")
                }
                ids.remove(at: index)
            }
            guard !ids.isEmpty else { throw CLIError.usage("the \(name) role would have no keys") }
            return ids
        }

        let rootIDs = try edit(previous.rootRole, name: "root")
        let pinsIDs = try edit(previous.pinsRole, name: "pins")
        let rootThreshold = try RoleBuilder.threshold(
            arguments.integer("root-threshold", in: Int64.min...Int64.max)
                ?? Int64(previous.rootRole.threshold),
            option: "root-threshold", keys: rootIDs.count)
        let pinsThreshold = try RoleBuilder.threshold(
            arguments.integer("pins-threshold", in: Int64.min...Int64.max)
                ?? Int64(previous.pinsRole.threshold),
            option: "pins-threshold", keys: pinsIDs.count)
        let (issuedAt, expiresAt) = try Validity.window(
            arguments, context: context, defaultLifetime: 31_536_000)
        let cap = try RoleBuilder.lifetimeCap(arguments, default: previous.maxManifestLifetime)
        let log: LogPolicy?
        if arguments.flag("no-log") {
            guard !RootLogOptions.anyGiven(arguments) else {
                throw CLIError.usage("--no-log drops the log: give it without the other log flags")
            }
            guard previous.log != nil else { throw CLIError.usage("--no-log: the previous root lists no log") }
            log = nil
        } else {
            log = try RootLogOptions.policy(arguments, previous: previous.log)
            try RootLogOptions.checkQuorum(log, previous: previous.log, arguments)
        }
        let used = Set(rootIDs + pinsIDs)
        var payload = RootPayload(
            scope: previous.scope, version: previous.version + 1, issuedAt: issuedAt,
            expiresAt: expiresAt,
            maxManifestLifetime: cap, keys: allKeys.values.filter { used.contains($0.keyID) },
            rootRole: .init(keyIDs: rootIDs, threshold: rootThreshold),
            pinsRole: .init(keyIDs: pinsIDs, threshold: pinsThreshold), log: log, extensions: previous.extensions)
        let keepsManifests = previous.pinsRoleUnchanged(in: payload) && !arguments.flag("cut-off-manifests")
        payload.pinsRoleSince = keepsManifests ? previous.effectivePinsRoleSince : payload.version
        guard payload.version <= Limits.maxInteger else {
            throw CLIError.failure("root version would exceed 2^53-1")
        }
        try Files.writeAtomically(payload.serialized(), to: out, replace: arguments.flag("force"))
        context.print(
            "wrote \(out): root version \(payload.version) of scope \(payload.scope), expires \(expiresAt)"
        )
        context.print(
            "root role \(rootThreshold)-of-\(rootIDs.count), pins role \(pinsThreshold)-of-\(pinsIDs.count)"
        )
        if keepsManifests {
            context.print(
                "pinsRoleSince \(previous.effectivePinsRoleSince): manifests signed under root \(previous.effectivePinsRoleSince) or later stay valid"
            )
        } else {
            context.print(
                "pinsRoleSince \(payload.version): the published manifest stops verifying under this root; publish it together with a manifest re-signed under it (clients restart their revoked set)"
            )
        }
        if let log, log != previous.log {
            context.print(RootLogOptions.summary(log) + " (changed)")
            RootLogOptions.warn(log, context: context)
        } else if log == nil, previous.log != nil {
            context.print("log dropped (--no-log): clients stop requiring log proofs for this scope")
        }
        context.print(
            "next: sign with \(previous.rootRole.threshold) key(s) of the previous root role AND \(rootThreshold) of the new one"
        )
    }
}
