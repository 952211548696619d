// Manifest polls read from access logs for `pinion adoption` (docs/OPERATIONS.md, the switch
// gate): `pinion serve`'s own log, nginx's combined format, and JSON lines from CDN log exports.
// Only the network prefix of a client address is kept, never the address.

import Foundation
import PinionCore
import PinionSystem
import PinionTrust

/// An access log format `pinion adoption` reads.
public enum AccessLogFormat: String, Sendable, CaseIterable {
    /// `pinion serve --access-log`: `TIME PEER METHOD TARGET STATUS BYTES DURATION`, TIME in
    /// RFC 3339 UTC, PEER `ADDRESS:PORT` or `[ADDRESS]:PORT`; other lines (start, reload,
    /// drain events) begin with TIME and are not requests.
    case serve
    /// nginx's `combined` format: `ADDRESS - USER [dd/Mon/yyyy:HH:MM:SS +hhmm] "METHOD
    /// TARGET PROTOCOL" STATUS BYTES "REFERER" "USER-AGENT"`.
    case nginx
    /// One JSON object per line, as CDN log exports write them: `time` (RFC 3339), `client`
    /// (an IP address), `method`, `target` (path and query as requested) and `status` (a
    /// number); other members are ignored.
    case json
}

/// One GET of a scope's `manifest.json` answered 200 or 304, as a log recorded it.
public struct ManifestPoll: Sendable, Equatable {
    /// What the query said the client holds.
    public enum Held: Sendable, Equatable, Hashable {
        /// `have=V&base=B`.
        case token(have: Int64, base: String)
        /// No query.
        case none
        /// A query of another shape.
        case invalid
    }

    /// When the request was logged.
    public var time: Timestamp
    /// The client's network (`IPLiteral.networkPrefix`: IPv4 /24, IPv6 /64).
    public var prefix: String
    /// The scope in the path.
    public var scope: String
    /// The poll token.
    public var held: Held

    /// - Parameters:
    ///   - time: when the request was logged.
    ///   - prefix: the client's network prefix.
    ///   - scope: the scope in the path.
    ///   - held: what the poll token said.
    public init(time: Timestamp, prefix: String, scope: String, held: Held) {
        self.time = time
        self.prefix = prefix
        self.scope = scope
        self.held = held
    }
}

/// What one log line holds.
public enum AccessLogLine: Sendable, Equatable {
    /// A manifest poll.
    case poll(ManifestPoll)
    /// A well-formed line that is not a manifest poll answered 200 or 304 (another file,
    /// another method or status, a server event).
    case other
    /// A line that does not parse in the format; the reason says why.
    case malformed(String)

    /// Reads one line (without its newline).
    ///
    /// - Parameters:
    ///   - line: the line.
    ///   - format: the log's format.
    /// - Returns: the poll, `.other` or `.malformed`.
    public static func read(_ line: Substring, format: AccessLogFormat) -> AccessLogLine {
        let fields: (time: Timestamp, client: String, method: String, target: String, status: Int)
        switch format {
        case .serve:
            guard let parsed = serveFields(line) else {
                return .malformed("not TIME PEER METHOD TARGET STATUS BYTES DURATION")
            }
            guard let request = parsed else { return .other }
            fields = request
        case .nginx:
            guard let parsed = nginxFields(line) else {
                return .malformed("not nginx's combined format")
            }
            fields = parsed
        case .json:
            switch jsonFields(line) {
            case .success(let parsed): fields = parsed
            case .failure(let reason): return .malformed(reason.description)
            }
        }
        return poll(fields)
    }

    private static func poll(_ fields: (time: Timestamp, client: String, method: String, target: String, status: Int))
        -> AccessLogLine
    {
        guard fields.method == "GET", fields.status == 200 || fields.status == 304 else { return .other }
        var target = Substring(fields.target)
        // An absolute-form target (RFC 9112 §3.2.2), which servers answer like its path.
        for scheme in ["https://", "http://"] where target.lowercased().hasPrefix(scheme) {
            let authority = target.dropFirst(scheme.count)
            target = authority.firstIndex(of: "/").map { authority[$0...] } ?? ""
        }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let parts = path[0].split(separator: "/", omittingEmptySubsequences: false)
        guard path[0].hasSuffix("/manifest.json") else { return .other }
        // A manifest request a server may have answered after normalising its path (empty,
        // `.` or `..` segments, percent-encoding, a scope no tree can hold) is reported, not
        // dropped and not counted under a scope an attacker chose.
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "v1", (try? Scope.validate(String(parts[2]))) != nil
        else {
            if parts.count >= 3,
                parts.dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
                    || (parts.count == 4 && parts[1] == "v1")
            {
                return .malformed("a manifest request whose path is not /v1/SCOPE/manifest.json")
            }
            return .other
        }
        guard let prefix = IPLiteral.networkPrefix(fields.client) else {
            return .malformed("client \"\(fields.client)\" is not an IP address")
        }
        let held: ManifestPoll.Held
        if path.count == 1 || path[1].isEmpty {
            held = .none
        } else if let token = PollToken(query: path[1]) {
            held = .token(have: Int64(token.have), base: token.base)
        } else {
            held = .invalid
        }
        return .poll(ManifestPoll(time: fields.time, prefix: prefix, scope: String(parts[2]), held: held))
    }

    /// nil: malformed; .some(nil): a server event line; .some(fields): a request.
    private static func serveFields(_ line: Substring) -> (
        time: Timestamp, client: String, method: String, target: String, status: Int
    )?? {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        guard let first = words.first, let time = try? Timestamp(rfc3339: String(first)) else { return nil }
        guard words.count == 7, let status = Int(words[4]), (100...599).contains(status) else { return .some(nil) }
        var peer = String(words[1])
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            peer = String(peer[peer.index(after: peer.startIndex)..<close])
        } else if let colon = peer.lastIndex(of: ":") {
            peer = String(peer[..<colon])
        }
        return .some((time, peer, String(words[2]), String(words[3]), status))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func nginxFields(_ line: Substring) -> (
        time: Timestamp, client: String, method: String, target: String, status: Int
    )? {
        guard let space = line.firstIndex(of: " "), let open = line.firstIndex(of: "["),
            let close = line[open...].firstIndex(of: "]")
        else { return nil }
        let client = String(line[..<space])
        guard let time = nginxTime(line[line.index(after: open)..<close]) else { return nil }
        let rest = line[line.index(after: close)...]
        guard rest.hasPrefix(" \""), let end = rest.dropFirst(2).firstIndex(of: "\"") else { return nil }
        let request = rest[rest.index(rest.startIndex, offsetBy: 2)..<end].split(separator: " ")
        let after = rest[rest.index(after: end)...].split(separator: " ", maxSplits: 2)
        guard let statusText = after.first, let status = Int(statusText), (100...599).contains(status) else {
            return nil
        }
        // A request line nginx could not parse (logged as "-" or junk) is not a poll.
        guard request.count == 3 else { return (time, client, "-", "-", status) }
        return (time, client, String(request[0]), String(request[1]), status)
    }

    /// `dd/Mon/yyyy:HH:MM:SS +hhmm`.
    private static func nginxTime(_ text: Substring) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard bytes.count == 26, bytes[2] == UInt8(ascii: "/"), bytes[6] == UInt8(ascii: "/"),
            bytes[11] == UInt8(ascii: ":"), bytes[20] == UInt8(ascii: " ")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            let digits = bytes[range]
            guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(String(decoding: digits, as: UTF8.self))
        }
        guard let day = number(0..<2), let month = months.firstIndex(of: String(decoding: bytes[3..<6], as: UTF8.self)),
            let year = number(7..<11), let hour = number(12..<14), let minute = number(15..<17),
            let second = number(18..<20), let offsetHours = number(22..<24), let offsetMinutes = number(24..<26),
            bytes[21] == UInt8(ascii: "+") || bytes[21] == UInt8(ascii: "-")
        else { return nil }
        let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month + 1, day, hour, minute, second)
        guard let local = try? Timestamp(rfc3339: text) else { return nil }
        let offset = Int64((offsetHours * 60 + offsetMinutes) * 60)
        return local.adding(seconds: bytes[21] == UInt8(ascii: "+") ? -offset : offset)
    }

    private static func jsonFields(_ line: Substring) -> Result<
        (time: Timestamp, client: String, method: String, target: String, status: Int), Reason
    > {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return .failure(Reason("not a JSON object"))
        }
        guard let timeText = object["time"] as? String, let time = exportTime(timeText) else {
            return .failure(Reason("\"time\" is not an RFC 3339 UTC time"))
        }
        guard let client = object["client"] as? String else { return .failure(Reason("no \"client\" string")) }
        guard let method = object["method"] as? String else { return .failure(Reason("no \"method\" string")) }
        guard let target = object["target"] as? String else { return .failure(Reason("no \"target\" string")) }
        guard let status = object["status"] as? Int, (100...599).contains(status) else {
            return .failure(Reason("\"status\" is not a number from 100 to 599"))
        }
        return .success((time, client, method, target, status))
    }

    /// RFC 3339 UTC with or without a fraction of a second (CDN exports write milliseconds),
    /// truncated to the second.
    private static func exportTime(_ text: String) -> Timestamp? {
        if let time = try? Timestamp(rfc3339: text) { return time }
        let bytes = Array(text.utf8)
        guard bytes.count > 21, bytes[19] == UInt8(ascii: "."), bytes.last == UInt8(ascii: "Z"),
            bytes[20..<(bytes.count - 1)].allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return try? Timestamp(rfc3339: String(decoding: bytes[0..<19], as: UTF8.self) + "Z")
    }

    /// A failure text as an Error, for `Result`.
    private struct Reason: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
