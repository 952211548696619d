// What `pinion serve` is serving, per scope: the manifest's and the newest root's versions
// and expiries, read from the tree for /metrics and /healthz (docs/DESIGN.md §14).

import Foundation
import PinionCore
import PinionCrypto

/// The served state of one scope, as read from `v1/{scope}/manifest.json` and the
/// highest-numbered `v1/{scope}/root/{n}.json`.
///
/// The payloads are decoded, not verified: `pinion publish` verified them before writing,
/// and the server holds no root of trust; `pinion audit` and `pinion status` verify.
public struct ScopeStatus: Sendable, Equatable {
    /// The scope (the directory name under `v1/`).
    public var scope: String
    /// The served manifest's version and expiry; nil when there is no `manifest.json`.
    public var manifest: (version: Int64, expiresAt: Timestamp)?
    /// The newest root's version and expiry; nil when `root/` holds no root.
    public var root: (version: Int64, expiresAt: Timestamp)?
    /// Files that exist but cannot be read or decoded, each with its reason.
    public var unreadable: [String]

    public static func == (lhs: ScopeStatus, rhs: ScopeStatus) -> Bool {
        lhs.scope == rhs.scope && lhs.manifest?.version == rhs.manifest?.version
            && lhs.manifest?.expiresAt == rhs.manifest?.expiresAt && lhs.root?.version == rhs.root?.version
            && lhs.root?.expiresAt == rhs.root?.expiresAt && lhs.unreadable == rhs.unreadable
    }

    /// Why this scope is unhealthy at `now`: an expired manifest or newest root; empty when
    /// healthy. Unreadable files do not count (docs/DESIGN.md §14 judges expiry only; they show
    /// in `pinion_tree_unreadable_files`, and clients refuse them on their own).
    ///
    /// - Parameter now: the time to judge expiry at (expired when `expiresAt <= now`).
    public func problems(at now: Timestamp) -> [String] {
        var found: [String] = []
        if let manifest, manifest.expiresAt <= now {
            found.append("\(scope): manifest version \(manifest.version) expired at \(manifest.expiresAt)")
        }
        if let root, root.expiresAt <= now {
            found.append("\(scope): root version \(root.version) expired at \(root.expiresAt)")
        }
        return found
    }
}

/// Reads the status of every scope of a tree through `PublishedFiles` (no symbolic link is
/// followed; unchanged files come from its cache).
public struct TreeStatusReader: Sendable {
    /// Most scopes read; a tree with more is reported as such.
    public static let maxScopes = 1_000

    let repository: String
    let files: PublishedFiles

    /// - Parameters:
    ///   - repository: the tree's directory (to list scopes and roots).
    ///   - files: the server's file opener over the same directory.
    public init(repository: String, files: PublishedFiles) {
        self.repository = repository
        self.files = files
    }

    /// The status of every scope, in scope order.
    public func read() -> [ScopeStatus] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: repository + "/v1")) ?? []
        let scopes = names.filter { PublishedPath("/v1/\($0)/manifest.json") != nil }.sorted()
        return scopes.prefix(Self.maxScopes).map(read(scope:))
    }

    private func read(scope: String) -> ScopeStatus {
        var status = ScopeStatus(scope: scope, manifest: nil, root: nil, unreadable: [])
        if let path = PublishedPath("/v1/\(scope)/manifest.json") {
            switch body(path) {
            case .success(let bytes?):
                do {
                    let envelope = try Envelope.parse(bytes)
                    guard envelope.kind == .pins else {
                        throw FormatError(
                            path: "payloadType",
                            rule: .wrongPayloadType(expected: PayloadKind.pins.rawValue, found: envelope.kind.rawValue))
                    }
                    let payload = try ManifestPayload.parse(envelope.payload)
                    status.manifest = (payload.version, payload.expiresAt)
                } catch {
                    status.unreadable.append("manifest.json: \(error)")
                }
            case .success(nil): break
            case .failure(let reason): status.unreadable.append("manifest.json: \(reason)")
            }
        }
        let rootNames = (try? FileManager.default.contentsOfDirectory(atPath: "\(repository)/v1/\(scope)/root")) ?? []
        let versions = rootNames.compactMap { name -> Int64? in
            guard name.hasSuffix(".json"), let first = name.first, first != "0" else { return nil }
            let digits = name.dropLast(5)
            guard !digits.isEmpty, digits.count <= 16, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return nil
            }
            return Int64(digits)
        }
        if let newest = versions.max(), let path = PublishedPath("/v1/\(scope)/root/\(newest).json") {
            switch body(path) {
            case .success(let bytes?):
                do {
                    let envelope = try Envelope.parse(bytes)
                    guard envelope.kind == .root else {
                        throw FormatError(
                            path: "payloadType",
                            rule: .wrongPayloadType(expected: PayloadKind.root.rawValue, found: envelope.kind.rawValue))
                    }
                    let payload = try RootPayload.parse(envelope.payload, crypto: .sodium)
                    status.root = (payload.version, payload.expiresAt)
                } catch {
                    status.unreadable.append("root/\(newest).json: \(error)")
                }
            case .success(nil): break
            case .failure(let reason): status.unreadable.append("root/\(newest).json: \(reason)")
            }
        }
        return status
    }

    private struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The file's bytes, nil when it does not exist, or why it cannot be read.
    private func body(_ path: PublishedPath) -> Result<[UInt8]?, Unreadable> {
        do {
            return .success(try files.file(at: path).body)
        } catch {
            switch error {
            case .notFound: return .success(nil)
            case .tooLarge: return .failure(Unreadable(description: "larger than the serving limit"))
            case .readFailed(let code), .unavailable(let code):
                return .failure(Unreadable(description: "read failed (errno \(code))"))
            }
        }
    }
}

/// The health verdict of /healthz: 200 with `ok`, or 503 with one reason per line.
public struct HealthVerdict: Sendable, Equatable {
    /// The problems found; empty when healthy.
    public var problems: [String]
    /// True when nothing is expired.
    public var isHealthy: Bool { problems.isEmpty }

    /// Judges `scopes` at `now`.
    ///
    /// - Parameters:
    ///   - scopes: the tree's status (`TreeStatusReader.read()`).
    ///   - now: the time to judge expiry at.
    public init(scopes: [ScopeStatus], at now: Timestamp) {
        problems = scopes.flatMap { $0.problems(at: now) }
    }

    /// The response body: `ok`, or the problems, one per line.
    public var text: String { isHealthy ? "ok" : problems.joined(separator: "\n") }
}
