// The auditor's manifest.json check: what clients fetch is the index's latest, byte for byte.

import PinionCore
import PinionTrust

extension AuditRun {
    mutating func auditManifestJSON(latestHistoryBytes latest: (version: Int64, bytes: [UInt8]?)?) throws(AuditError) {
        let file = TreeFile.manifest
        guard case .bytes(let bytes) = try read(file, limit: options.limits.maxEnvelopeBytes, version: nil) else {
            if let latest {
                violation(
                    .manifestMissing, latest.version, file,
                    "missing (or refused), but the history's latest version is \(latest.version): clients get no manifest"
                )
            }
            return
        }
        if let latest, let latestBytes = latest.bytes, latestBytes == bytes {
            report.manifestJSONVersion = latest.version
            return
        }
        // What clients fetch must verify, whatever else is wrong with it; findings about its
        // content follow from a signature that does not verify.
        let claimed = (try? Envelope.parse(bytes, limits: options.limits)).flatMap {
            Self.looseInteger("version", of: $0.payload, limits: options.limits)
        }
        let checked = checkManifest(bytes, file: file, version: claimed)
        defer { unverifiedContent = false }
        guard let hash = checked.hash, let payload = checked.payload else { return }
        report.manifestJSONVersion = payload.version
        guard let latest else {
            violation(
                .manifestAheadOfIndex, payload.version, file,
                "holds version \(payload.version), but no history file or index entry holds any manifest")
            return
        }
        let latestHash = seenPayloads[latest.version]?.hash ?? indexByVersion[latest.version]?.payloadSHA256
        let latestFile = TreeFile.history(latest.version).path
        if payload.version < latest.version {
            violation(
                .manifestNotLatest, payload.version, file,
                payload.version == latest.version - 1
                    ? "holds version \(payload.version), not the latest version \(latest.version) of the history (if the publish of version \(latest.version) died before replacing manifest.json, running it again completes it)"
                    : "holds version \(payload.version), not the latest version \(latest.version) of the history")
            notePayload(version: payload.version, hash: hash, file: file)
        } else if payload.version > latest.version {
            violation(
                .manifestAheadOfIndex, payload.version, file,
                "holds version \(payload.version), beyond the latest version \(latest.version) of index.json (manifest.json must be written last)"
            )
            notePayload(version: payload.version, hash: hash, file: file)
        } else if let latestHash, latestHash != hash {
            violation(
                .versionPublishedTwice, payload.version, file,
                "holds another payload for version \(payload.version) than \(latestFile) or index.json (sha256:\(Hex.encode(hash)) vs sha256:\(Hex.encode(latestHash)))"
            )
        } else {
            violation(
                .manifestNotIdentical, payload.version, file,
                "holds version \(payload.version) but is not byte-identical to \(latestFile) (other signatures or formatting)"
            )
        }
    }
}
