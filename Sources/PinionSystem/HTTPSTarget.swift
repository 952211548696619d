// One HTTPS request hop's URL checked and split into dial host, SNI name, request target and Host header.

import Foundation
import PinionTrust

/// One hop's URL, checked and split into what the connection needs.
struct HTTPSTarget {
    let url: URL
    /// `URL.host` as given (IPv6 without brackets): reported to the pin check and in errors.
    let host: String
    let port: UInt16
    /// Lowercased, one trailing dot removed: SNI and the certificate name check.
    let checkedName: String
    let isIPLiteral: Bool
    /// What getaddrinfo gets (the host without a trailing dot).
    let dialHost: String
    let requestTarget: String
    let hostHeader: String

    init(_ url: URL) throws(HTTPSError) {
        let text = url.absoluteString
        guard let scheme = url.scheme else {
            throw HTTPSError.invalidURL(url: text, reason: "no scheme")
        }
        guard scheme.lowercased() == "https" else { throw HTTPSError.unsupportedScheme(scheme) }
        guard let host = url.host, !host.isEmpty else {
            throw HTTPSError.invalidURL(url: text, reason: "no host")
        }
        guard url.user == nil, url.password == nil else {
            throw HTTPSError.invalidURL(url: text, reason: "credentials in URLs are not supported")
        }
        let port: UInt16
        if let given = url.port {
            guard given > 0, given <= 65535 else {
                throw HTTPSError.invalidURL(url: text, reason: "port \(given) out of range")
            }
            port = UInt16(given)
        } else {
            port = 443
        }

        var name = host.lowercased()
        if name.hasSuffix("."), !name.hasSuffix("..") { name.removeLast() }
        let ipLiteral = SocketSupport.isIPLiteral(name)
        if !ipLiteral {
            // LDH names with underscores (as seen in practice); empty labels and anything
            // that could reach a header or OpenSSL in a surprising form are refused.
            let allowed = name.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x2e || $0 == 0x5f
            }
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            guard allowed, name.utf8.count <= 253, labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 }) else {
                throw HTTPSError.invalidURL(url: text, reason: "host \"\(host)\" is not a DNS name or IP literal")
            }
        }

        var path = url.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        guard path.hasPrefix("/") else {
            throw HTTPSError.invalidURL(url: text, reason: "path does not start with /")
        }
        var requestTarget = path
        if let query = url.query(percentEncoded: true) { requestTarget += "?" + query }
        guard requestTarget.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != 0x23 }) else {
            throw HTTPSError.invalidURL(url: text, reason: "path or query contains bytes that must be percent-encoded")
        }

        self.url = url
        self.host = host
        self.port = port
        self.checkedName = name
        self.isIPLiteral = ipLiteral
        self.dialHost = name
        self.requestTarget = requestTarget
        let bracketed = host.contains(":") ? "[\(host)]" : host
        self.hostHeader = port == 443 ? bracketed : "\(bracketed):\(port)"
    }
}
