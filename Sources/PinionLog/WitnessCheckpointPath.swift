// Where a witness serves its latest checkpoint of a log (C2SP tlog-witness, "Monitoring"): `<prefix>/<origin hash>/checkpoint`.

import PinionCore

/// The tlog-witness monitoring path: `GET <prefix>/<origin hash>/checkpoint`, where the
/// origin hash is the SHA-256 of the log's origin line (its UTF-8 bytes, no newline), hex
/// encoded in lowercase. The publisher, the auditor and `pinion witness` share it.
public enum WitnessCheckpointPath {
    /// The lowercase hex SHA-256 of `origin`'s UTF-8 bytes (64 characters).
    ///
    /// - Parameters:
    ///   - origin: the log's origin.
    ///   - hasher: SHA-256.
    public static func originHash(_ origin: String, hasher: any SHA256Hasher) -> String {
        Hex.encode(hasher.sha256(Array(origin.utf8)))
    }

    /// The checkpoint URL of `origin` at a witness whose (https) prefix is `base`.
    ///
    /// - Parameters:
    ///   - base: the witness URL from the root (`https://host[:port][/path]`).
    ///   - origin: the log's origin.
    ///   - hasher: SHA-256.
    /// - Returns: `{base}/{origin hash}/checkpoint` (one slash between).
    public static func url(base: String, origin: String, hasher: any SHA256Hasher) -> String {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return trimmed + "/" + originHash(origin, hasher: hasher) + "/checkpoint"
    }

    /// The origin hash of a route `/<64 lowercase hex>/checkpoint` (the part after a
    /// witness's path prefix), or nil for any other route.
    public static func originHash(ofRoute route: Substring) -> String? {
        let parts = route.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[2] == "checkpoint", parts[1].utf8.count == 64,
            parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return String(parts[1])
    }
}
