// Helpers of the metrics, health and report tests: a strict Prometheus text-format parser,
// curl as the real client, a tree of signed envelopes, and report bodies.

import Foundation
import PinionCore
import PinionCrypto
import Testing

/// One sample of a scrape.
public struct PrometheusSample: Equatable {
    public let name: String
    public let labels: [String: String]
    public let value: Double
}

/// A strict parser of the Prometheus text exposition format 0.0.4: every sample must follow
/// its family's `# HELP` and `# TYPE` lines (counter or gauge), names and label names must
/// be valid, label values may use only the `\\`, `\"` and `\n` escapes, no series repeats,
/// and the text ends with a newline.
public enum PrometheusText {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ text: String) throws -> [PrometheusSample] {
        guard text.hasSuffix("\n") else { throw Failure(description: "does not end with a newline") }
        var help: Set<String> = []
        var types: [String: String] = [:]
        var samples: [PrometheusSample] = []
        var seen: Set<String> = []
        for (number, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let location = "line \(number + 1): \(line)"
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                guard let space = rest.firstIndex(of: " ") else {
                    throw Failure(description: "\(location): HELP without text")
                }
                let name = String(rest[..<space])
                guard isMetricName(name), !help.contains(name) else {
                    throw Failure(description: "\(location): bad or repeated HELP")
                }
                help.insert(name)
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, help.contains(String(parts[0])), types[String(parts[0])] == nil,
                    ["counter", "gauge"].contains(parts[1])
                else { throw Failure(description: "\(location): TYPE without HELP first, repeated, or unknown") }
                types[String(parts[0])] = String(parts[1])
                continue
            }
            guard !line.hasPrefix("#"), !line.isEmpty else { throw Failure(description: "\(location): stray line") }
            let (sample, key) = try parseSample(String(line), context: location)
            guard help.contains(sample.name), let type = types[sample.name] else {
                throw Failure(description: "\(location): sample before its HELP and TYPE")
            }
            if type == "counter" {
                guard sample.name.hasSuffix("_total"), sample.value >= 0 else {
                    throw Failure(description: "\(location): a counter must end in _total and be >= 0")
                }
            }
            guard seen.insert(key).inserted else { throw Failure(description: "\(location): repeated series") }
            samples.append(sample)
        }
        return samples
    }

    public static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    private static func parseSample(_ line: String, context: String) throws -> (PrometheusSample, String) {
        let characters = Array(line)
        var index = 0
        var name = ""
        while index < characters.count, characters[index] != "{", characters[index] != " " {
            name.append(characters[index])
            index += 1
        }
        guard isMetricName(name) else { throw Failure(description: "\(context): bad metric name") }
        var labels: [String: String] = [:]
        if index < characters.count, characters[index] == "{" {
            index += 1
            while true {
                var labelName = ""
                while index < characters.count, characters[index] != "=" {
                    labelName.append(characters[index])
                    index += 1
                }
                guard isMetricName(labelName), !labelName.contains(":"), labels[labelName] == nil,
                    index + 1 < characters.count, characters[index + 1] == "\""
                else { throw Failure(description: "\(context): bad label") }
                index += 2
                var value = ""
                while true {
                    guard index < characters.count else { throw Failure(description: "\(context): open label value") }
                    let character = characters[index]
                    if character == "\"" { break }
                    if character == "\n" { throw Failure(description: "\(context): raw newline in a label value") }
                    if character == "\\" {
                        guard index + 1 < characters.count else {
                            throw Failure(description: "\(context): dangling escape")
                        }
                        switch characters[index + 1] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw Failure(description: "\(context): unknown escape")
                        }
                        index += 2
                        continue
                    }
                    value.append(character)
                    index += 1
                }
                labels[labelName] = value
                index += 1
                guard index < characters.count else { throw Failure(description: "\(context): unclosed labels") }
                if characters[index] == "}" {
                    index += 1
                    break
                }
                guard characters[index] == "," else {
                    throw Failure(description: "\(context): labels not separated by ,")
                }
                index += 1
            }
        }
        guard index < characters.count, characters[index] == " " else {
            throw Failure(description: "\(context): no value")
        }
        let valueText = String(characters[(index + 1)...])
        guard let value = Double(valueText), !valueText.contains(" ") else {
            throw Failure(description: "\(context): value is not a number")
        }
        let key =
            name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
        return (PrometheusSample(name: name, labels: labels, value: value), key)
    }
}

extension Array where Element == PrometheusSample {
    /// The value of the one sample with this name and these labels (nil when absent).
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        first { $0.name == name && $0.labels == labels }?.value
    }
}

/// The result of one curl run.
public struct CurlResult {
    public let status: Int
    public let body: String
    public let headers: String
}

/// Runs the real curl (`-k` for the test certificates) and returns the status, headers and body.
public func curl(_ arguments: [String]) throws -> CurlResult {
    let directory = try makeTemporaryDirectory(prefix: "pinion-curl")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let result = try runProgram(
        "/usr/bin/curl",
        [
            "-s", "-S", "-k", "--max-time", "30", "-o", directory + "/body", "-D", directory + "/headers", "-w",
            "%{http_code}",
        ]
            + arguments)
    let body = (try? String(contentsOfFile: directory + "/body", encoding: .utf8)) ?? ""
    let headers = (try? String(contentsOfFile: directory + "/headers", encoding: .utf8)) ?? ""
    return CurlResult(
        status: Int(result.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, body: body, headers: headers)
}

/// A published tree with real envelopes: scope `com.example.app`, root 1 and manifest
/// `manifestVersion`, with chosen expiries; removed with the object.
public final class EnvelopeTree: @unchecked Sendable {
    public let directory: String
    public let scope = "com.example.app"
    public let root: RootPayload
    public let manifest: ManifestPayload

    public init(
        rootExpiresAt: Timestamp = t0.adding(seconds: 365 * day), manifestLifetime: Int64 = 30 * day,
        manifestVersion: Int64 = 3, domains: [ManifestPayload.Domain]? = nil
    )
        throws
    {
        directory = try makeTemporaryDirectory(prefix: "pinion-ops-tree")
        let setup = try Setup()
        root = rootPayload(rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey], expiresAt: rootExpiresAt)
        manifest = manifestPayload(version: manifestVersion, lifetime: manifestLifetime, domains: domains)
        let scopeDirectory = "\(directory)/v1/\(scope)"
        for sub in ["root", "history"] {
            try FileManager.default.createDirectory(
                atPath: "\(scopeDirectory)/\(sub)", withIntermediateDirectories: true)
        }
        let rootBytes = try sign(.root, root.serialized(), with: [setup.rootKey]).serialized()
        let manifestBytes = try sign(.pins, manifest.serialized(), with: [setup.pinsKey]).serialized()
        try Data(rootBytes).write(to: URL(fileURLWithPath: "\(scopeDirectory)/root/1.json"))
        try Data(manifestBytes).write(to: URL(fileURLWithPath: "\(scopeDirectory)/history/\(manifestVersion).json"))
        try Data(manifestBytes).write(to: URL(fileURLWithPath: "\(scopeDirectory)/manifest.json"))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// The manifest entry report tests pin: api.example.com and its subdomains, so reports for
/// `hN.api.example.com` (noted-hostname api.example.com) are distinct and accepted.
public let reportDomains = [
    ManifestPayload.Domain(name: "api.example.com", includeSubdomains: true, pins: [pin(1), pin(2)])
]

/// A fixed clock for the server.
public func fixedClock(_ time: Timestamp) -> @Sendable () -> Timestamp { { time } }

/// PEM certificates for reports: the two test server certificates.
public func reportCertificates() throws -> (first: String, second: String) {
    let credentials = try ServerCredentials.shared()
    let first = try String(contentsOfFile: credentials.certificate, encoding: .utf8)
    let second = try String(contentsOfFile: credentials.secondCertificate, encoding: .utf8)
    return (
        first.trimmingCharacters(in: .whitespacesAndNewlines), second.trimmingCharacters(in: .whitespacesAndNewlines)
    )
}

/// A report body (RFC 7469 §3 plus TrustKit members), as JSON text.
public func reportBody(
    hostname: String = "api.example.com", notedHostname: String = "api.example.com", port: Int = 443, chain: [String],
    knownPins: [String] = [String(repeating: "A", count: 43) + "="],
    appVersion: String? = "2.1", extra: String = ""
) -> String {
    func quoted(_ text: String) -> String {
        "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
    var members = [
        "\"date-time\": \"2026-11-30T09:00:00Z\"", "\"hostname\": \(quoted(hostname))", "\"port\": \(port)",
        "\"include-subdomains\": false",
        "\"noted-hostname\": \(quoted(notedHostname))",
        "\"served-certificate-chain\": [\(chain.map(quoted).joined(separator: ", "))]",
        "\"validated-certificate-chain\": [\(chain.map(quoted).joined(separator: ", "))]",
        "\"known-pins\": [\(knownPins.map { quoted("pin-sha256=\"\($0)\"") }.joined(separator: ", "))]",
    ]
    if let appVersion { members.append("\"app-version\": \(quoted(appVersion))") }
    if !extra.isEmpty { members.append(extra) }
    return "{" + members.joined(separator: ", ") + "}"
}

/// The base64 SPKI SHA-256 of a PEM certificate, computed by openssl alone.
public func opensslPin(ofCertificateFile path: String) throws -> String {
    let result = try runProgram(
        "/bin/sh",
        [
            "-c",
            "openssl x509 -in \"$0\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            path,
        ])
    return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Runs the sqlite3 command-line tool on `database` and returns its output lines.
public func sqlite3(_ database: String, _ sql: String) throws -> [String] {
    let result = try runProgram("/usr/bin/sqlite3", [database, sql])
    return result.out.split(separator: "\n").map(String.init)
}
