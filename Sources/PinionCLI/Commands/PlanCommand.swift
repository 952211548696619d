// `pinion plan` and `pinion publish --plan`: the upload plan a mirror (object store, CDN
// origin, rsync target) follows phase by phase (docs/PUBLISHING.md "Upload plans").

import Foundation
import PinionCore
import PinionPublisher

struct PlanCommand: Command {
    static let path = ["plan"]
    static let summary = "write the upload plan of publish steps already made, for a mirror or CDN"
    static let options: [OptionSpec] = [.value("since"), .value("scope"), .value("out")]
    static let help = """
        usage: pinion plan TREE --since SEQUENCE [--scope S] [--out FILE]

        Writes the upload plan of every publish step of TREE (the directory given to
        pinion publish --repo) whose index.json sequence number is SEQUENCE or later: the
        tree's identity (scope, SHA-256 of root/1.json), then phases in order, each listing
        files with SHA-256, size, Content-Type and Cache-Control (the values pinion serve
        and deploy/nginx/pinion.conf send), and the CDN paths to invalidate after it.
        Within a phase any order and parallelism is safe; start a phase only when the
        previous one is visible at the public URL. deploy/s3/upload and deploy/rsync/upload
        follow a plan; docs/PUBLISHING.md "Upload plans" gives the format. pending/ and
        hidden files are never listed.

        options:
          --since N     the first sequence number to include (index.json "sequence")
          --scope S     the scope (needed when TREE holds several)
          --out FILE    write the plan to FILE atomically (default: standard output)

        Exit codes: 0, 1 no such step or a tree needing repair, 2 usage, 3 unreadable TREE.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let repo = try arguments.positional(["TREE"])[0]
        guard let since = try arguments.integer("since", in: 1...Int64.max) else {
            throw CLIError.usage("missing --since SEQUENCE (the first index.json sequence number to include)")
        }
        let out = arguments.value("out")
        if let out { try UploadPlanOutput.checkDestination(out, repo: repo) }
        let scope = try scopeOf(repo, given: arguments.value("scope"))
        let plan: UploadPlan
        do { plan = try UploadPlan.make(repo: repo, scope: scope, since: since, crypto: crypto) } catch {
            throw PublishCommand.message(error, paths: [], envelopes: [])
        }
        try UploadPlanOutput.emit(plan, to: out, context: context)
    }

    private static func scopeOf(_ repo: String, given: String?) throws(CLIError) -> String {
        if let given {
            do { try Scope.validate(given) } catch { throw CLIError.usage("--scope: \(error)") }
            return given
        }
        try Load.existingTree(repo)
        let scopes: [String]
        do { scopes = try UploadPlan.scopes(in: repo) } catch {
            throw PublishCommand.message(error, paths: [], envelopes: [])
        }
        switch scopes.count {
        case 1: return scopes[0]
        case 0: throw CLIError.failure("\(repo): no published scope (no v1/SCOPE/root/1.json)")
        default: throw CLIError.usage("\(repo) holds several scopes (\(scopes.joined(separator: ", "))): give --scope")
        }
    }
}

/// Writing a plan, for `pinion plan --out` and `pinion publish --plan`.
enum UploadPlanOutput {
    /// Refuses a plan path inside the served part of the tree (`TREE/v1/`), where a web
    /// server or mirror would publish it, and a path whose directory does not exist; run
    /// before publishing, so a bad path never leaves a publish without its plan.
    static func checkDestination(_ path: String, repo: String) throws(CLIError) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw CLIError.usage("--plan/--out \(path): directory \(directory) does not exist")
        }
        let resolvedDirectory = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path + "/"
        let served = URL(fileURLWithPath: repo).resolvingSymlinksInPath().path + "/v1/"
        if resolvedDirectory.hasPrefix(served) {
            throw CLIError.usage("\(path) is inside the served tree (\(served)); write the plan outside v1/")
        }
    }

    /// Writes `plan` to `path` (replacing a previous plan) or to standard output.
    static func emit(_ plan: UploadPlan, to path: String?, context: CLIContext) throws(CLIError) {
        let bytes = plan.serialized()
        guard let path else {
            context.out(String(decoding: bytes, as: UTF8.self))
            return
        }
        try Files.writeAtomically(bytes, to: path, replace: true)
        let files = plan.phases.reduce(0) { $0 + $1.files.count }
        context.print(
            "wrote upload plan \(path): \(plan.phases.count) phase(s), \(files) file(s)"
                + (plan.refusalWindow.map { " (refusals possible from phase \($0.firstPhase) to \($0.lastPhase))" }
                    ?? ""))
    }

    /// `publish --plan FILE`: the plan of the step just published (only the mutable files
    /// when the step listed nothing new in index.json).
    static func afterPublish(_ outcome: PublishOutcome, repo: String, path: String, context: CLIContext)
        throws(CLIError)
    {
        let plan: UploadPlan
        do {
            plan = try UploadPlan.make(repo: repo, scope: outcome.scope, since: outcome.sequence, crypto: crypto)
        } catch {
            throw CLIError.failure("published, but the upload plan could not be made: \(error); run pinion plan")
        }
        try emit(plan, to: path, context: context)
    }
}
