// An upload plan (`pinion publish --plan`, docs/PUBLISHING.md "Upload plans") as the replay
// tests read it: each phase's paths and invalidations, and the refusal window.

import Foundation
import PinionCore

/// The parts of an upload plan a replay needs.
public struct PlannedUpload: Sendable {
    /// One phase: its name, the tree-relative paths it uploads (`v1/...`), and the paths a
    /// CDN invalidates after it.
    public struct Phase: Sendable {
        public var name: String
        public var paths: [String]
        public var invalidate: [String]

        public init(name: String, paths: [String], invalidate: [String]) {
            self.name = name
            self.paths = paths
            self.invalidate = invalidate
        }
    }

    /// The phases in upload order.
    public var phases: [Phase]
    /// The refusal window's first and last phase names; nil when the plan names none.
    public var window: (first: String, last: String)?

    /// Reads a plan's JSON.
    ///
    /// - Throws: `TestSetupError` when the bytes are not JSON or not an object with `phases`.
    public init(_ bytes: [UInt8]) throws {
        guard case .object(let plan) = try StrictJSONParser.parse(bytes, limits: Limits.standard.json),
            case .array(let items) = plan["phases"]
        else { throw TestSetupError(description: "not an upload plan") }
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let items) = value else { return [] }
            return items.compactMap { if case .string(let text) = $0 { return text } else { return nil } }
        }
        phases = items.compactMap { item in
            guard case .object(let phase) = item, case .string(let name) = phase["name"],
                case .array(let files) = phase["files"]
            else { return nil }
            let paths = files.compactMap { file -> String? in
                guard case .object(let entry) = file, case .string(let path) = entry["path"] else { return nil }
                return path
            }
            return Phase(name: name, paths: paths, invalidate: strings(phase["invalidate"]))
        }
        if case .object(let window) = plan["refusalWindow"], case .string(let first) = window["firstPhase"],
            case .string(let last) = window["lastPhase"]
        {
            self.window = (first, last)
        }
    }

    /// Whether a refusal is allowed while phase `index` is being uploaded (or invalidated).
    public func refusalAllowed(during index: Int) -> Bool {
        guard let window, let first = phases.firstIndex(where: { $0.name == window.first }),
            let last = phases.firstIndex(where: { $0.name == window.last })
        else { return false }
        return index >= first && index <= last
    }
}
