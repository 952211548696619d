// Request targets of `pinion serve`: origin form (`/v1/...`) and absolute form
// (`https://host/v1/...`, RFC 9112 §3.2.2), which a server must accept.

/// The origin-form part of a request target.
///
/// - Returns: `target` itself when it starts with `/`; for an absolute-form target
///   (`http://` or `https://`, scheme case-insensitive, a non-empty authority) the path and
///   query after the authority, `/` when there is none (`https://host?x` is `/?x`).
/// - Throws: `HTTPRequestError.malformed` for any other form (authority form, asterisk
///   form, another scheme, an empty authority).
func originFormTarget(_ target: String) throws(HTTPRequestError) -> String {
    if target.hasPrefix("/") { return target }
    let lowered = target.prefix(8).lowercased()
    let schemeLength: Int
    if lowered.hasPrefix("https://") {
        schemeLength = 8
    } else if lowered.hasPrefix("http://") {
        schemeLength = 7
    } else {
        throw .malformed(reason: "request target is not in origin or absolute form")
    }
    let rest = target.dropFirst(schemeLength)
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    // The authority was validated as visible ASCII with the rest of the request line; the
    // host in it is not used (one tree per server, RFC 9112 §3.2.2 lets Host be ignored).
    guard !authority.isEmpty, !authority.contains("@") else {
        throw .malformed(reason: "absolute-form request target without a host (or with userinfo)")
    }
    let remainder = String(rest[authorityEnd...])
    return remainder.hasPrefix("/") ? remainder : "/" + remainder
}
