// Fuzz target 11: the access-log reader of `pinion adoption` (PinionAudit's
// AccessLogLine.read), over one line of pinion serve's, nginx's or a CDN's log, any of
// which a client shapes through the request it sends.
//
// Properties: every line gives a poll, `other` or a reason; a poll's scope is a valid scope
// name and its prefix is an IPv4 /24 or IPv6 /64 in CIDR notation (never a whole address);
// a poll token read back prints as a token that reads again to the same values; the same
// line gives the same answer twice.

import PinionAudit
import PinionCore
import PinionTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAccessLog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let line = Substring(String(decoding: bytes, as: UTF8.self))
    for format in AccessLogFormat.allCases {
        let answer = AccessLogLine.read(line, format: format)
        expect(answer == AccessLogLine.read(line, format: format), "\(format): two readings differ")
        switch answer {
        case .other: break
        case .malformed(let reason):
            expect(!reason.isEmpty, "\(format): a malformed line without a reason")
        case .poll(let poll):
            expect((try? PinionCore.Scope.validate(poll.scope)) != nil, "\(format): scope \(poll.scope) is not valid")
            expect(
                poll.prefix.hasSuffix("/24") && !poll.prefix.contains(":") || poll.prefix.hasSuffix("/64"),
                "\(format): prefix \(poll.prefix) is not a /24 or a /64")
            if case .token(let have, let base) = poll.held {
                expect(have >= 0, "\(format): negative held version \(have)")
                let reread = PollToken(query: Substring("have=\(have)&base=\(base)"))
                expect(
                    reread.map { (Int64($0.have), $0.base) } ?? (-1, "") == (have, base),
                    "\(format): token have=\(have)&base=\(base) does not read back")
            }
        }
    }
    return 0
}
