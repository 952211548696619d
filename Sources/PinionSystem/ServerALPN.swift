// ALPN for `pinion serve` (RFC 7301): HTTP/1.1 (and 1.0) only. A client that offers ALPN
// without any of them, such as an h2-only client, gets the no_application_protocol alert
// (§3.2), as nginx sends, instead of a connection it would then misread.
// OpenSSL C code, kept apart from the HTTP logic.

import COpenSSL

enum ServerALPN {
    /// The protocols served, in preference order, as ALPN protocol names.
    static let protocols: [[UInt8]] = [Array("http/1.1".utf8), Array("http/1.0".utf8)]

    /// Installs the selection callback on `context`.
    static func install(on context: OpaquePointer) {
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, input, inputLength, _ in
                guard let out, let outLength, let input else { return SSL_TLSEXT_ERR_NOACK }
                let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
                guard let (offset, length) = ServerALPN.select(offered) else {
                    // OpenSSL turns this into a fatal no_application_protocol alert.
                    return SSL_TLSEXT_ERR_ALERT_FATAL
                }
                out.pointee = input + offset
                outLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }, nil)
    }

    /// The first of `protocols` that the client's list (length-prefixed names, RFC 7301
    /// §3.1) offers, as its offset and length inside `offered`; nil when none is offered
    /// or the list is malformed.
    static func select(_ offered: UnsafeBufferPointer<UInt8>) -> (offset: Int, length: Int)? {
        var names: [(offset: Int, length: Int)] = []
        var index = 0
        while index < offered.count {
            let length = Int(offered[index])
            guard length > 0, index + 1 + length <= offered.count else { return nil }
            names.append((index + 1, length))
            index += 1 + length
        }
        for wanted in protocols {
            if let match = names.first(where: { name in
                name.length == wanted.count && offered[name.offset..<name.offset + name.length].elementsEqual(wanted)
            }) {
                return match
            }
        }
        return nil
    }
}
