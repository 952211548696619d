// A published tree read over HTTPS through the SDK's client (X.509 validation against the
// system store or a CA file; no pins, as on the update channel, docs/DESIGN.md §6).

import Foundation
import PinionTrust

/// The files of `{baseURL}/v1/{scope}/` fetched with `PinnedHTTPSClient`, one GET per
/// file. HTTP 200 is the file, 404 and 410 mean absent, any other status is an I/O error.
/// Log tiles are asked for with `Accept-Encoding: gzip` and decoded within the read's limit;
/// any other coding, or gzip on a file not asked for that way, is an I/O error.
/// HTTPS cannot list a folder: `list` returns nil and the auditor probes numbered files.
public struct HTTPSTreeSource: HeaderReportingTreeSource {
    /// The server root, as a client's base URL (`https://host[:port]/[path/]`).
    public let baseURL: URL
    /// The scope whose files are read.
    public let scope: String
    /// Trust store and timeouts; `maxResponseBytes` is set per file from the limit.
    public let configuration: PinnedHTTPSClient.Configuration

    /// - Parameters:
    ///   - baseURL: an https URL; `v1/{scope}/` is appended to its path.
    ///   - scope: the root's scope.
    ///   - configuration: CA file (nil: the system store) and timeouts, in seconds.
    public init(baseURL: URL, scope: String, configuration: PinnedHTTPSClient.Configuration = .init()) {
        self.baseURL = baseURL
        self.scope = scope
        self.configuration = configuration
    }

    public var location: String { url(for: "").absoluteString }

    /// The URL of a file relative to the scope directory.
    public func url(for relativePath: String) -> URL {
        var text = baseURL.absoluteString
        if !text.hasSuffix("/") { text += "/" }
        return URL(string: text + "v1/" + scope + "/" + relativePath) ?? baseURL
    }

    public func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        try readWithHeaders(file, limit: limit).bytes
    }

    /// `read(_:limit:)` with the response's ETag and Cache-Control (for `pinion status`).
    public func readWithHeaders(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> (
        bytes: [UInt8]?, headers: PublisherHeaders
    ) {
        let url = url(for: file.path)
        // Tiles and entry bundles may come gzip-encoded (C2SP tlog-tiles); every other file is
        // a document read as sent. The encoded body may be slightly larger than the decoded
        // limit (incompressible tiles), the decoded one never.
        let gzipAccepted: Bool
        if case .logTile = file { gzipAccepted = true } else { gzipAccepted = false }
        var configuration = configuration
        configuration.maxResponseBytes = gzipAccepted ? limit + limit / 64 + 1024 : limit
        let response: HTTPSResponse
        do {
            response = try PinnedHTTPSClient(configuration: configuration).get(
                url, headers: gzipAccepted ? [ResponseBody.acceptGzip] : []
            ) { _ in .proceed }
        } catch {
            if case .responseTooLarge = error.code { throw .tooLarge(file: url.absoluteString, limit: limit) }
            throw .io(file: url.absoluteString, detail: error.description)
        }
        let headers = PublisherHeaders(
            etag: response.value(forHeader: "etag"), cacheControl: response.value(forHeader: "cache-control"))
        switch response.status {
        case 200: break
        case 404, 410: return (nil, headers)
        default: throw .io(file: url.absoluteString, detail: "HTTP status \(response.status)")
        }
        do {
            return (try ResponseBody.decode(response, gzipAccepted: gzipAccepted, maxBytes: limit), headers)
        } catch .gzip(.tooLarge) {
            throw .tooLarge(file: url.absoluteString, limit: limit)
        } catch {
            throw .io(file: url.absoluteString, detail: error.description)
        }
    }

    public func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? { nil }
}
