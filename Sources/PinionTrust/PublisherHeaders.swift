// The caching headers a publisher sent with a tree file (ETag, Cache-Control), for
// `pinion status` (docs/DESIGN.md §14); only sources that speak HTTP have them.

/// The caching header fields of one response, as received (RFC 9110 §8.8.3, RFC 9111 §5.2).
public struct PublisherHeaders: Sendable, Equatable {
    /// The `ETag` field value, quotes included (e.g. `"5f1c-1a2b"`), or nil when absent.
    public var etag: String?
    /// The `Cache-Control` field value (e.g. `max-age=300, must-revalidate`), or nil when absent.
    public var cacheControl: String?

    /// - Parameters:
    ///   - etag: the `ETag` value, or nil.
    ///   - cacheControl: the `Cache-Control` value, or nil.
    public init(etag: String? = nil, cacheControl: String? = nil) {
        self.etag = etag
        self.cacheControl = cacheControl
    }
}

/// A `TreeSource` that can also return the caching headers of a file's response
/// (`HTTPSTreeSource`). A directory has no headers and does not conform.
public protocol HeaderReportingTreeSource: TreeSource {
    /// Reads one file like `read(_:limit:)` and returns the response's caching headers.
    ///
    /// - Parameters:
    ///   - file: the file, relative to the scope directory.
    ///   - limit: the largest size accepted, in bytes.
    /// - Returns: the bytes (nil when absent: HTTP 404 or 410) and the headers of that response.
    /// - Throws: `TreeSourceError`.
    func readWithHeaders(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> (
        bytes: [UInt8]?, headers: PublisherHeaders
    )
}
