// Four clients POSTing distinct pin-failure reports to a `pinion serve --reports` child until
// it is killed with SIGKILL: what the crash tests of the report store drive, and the ledger
// they judge the database by.

import Foundation
import PinionTestSupport
import Synchronization

/// What the senders saw: hosts acknowledged with 204, and every host sent.
final class ReportLedger: Sendable {
    let acknowledged = Mutex<Set<String>>([])
    let sent = Mutex<Set<String>>([])
}

/// Starts four senders, each on its own keep-alive connection, POSTing reports for
/// `r{round}-s{sender}-{index}.api.example.com` until a request fails or is not answered 204;
/// kills `server` with SIGKILL once `killAfter` reports are acknowledged (polling every 5 ms,
/// at most `maxPolls` times), after `pauseBeforeKill` seconds more; waits for the child and
/// the senders.
///
/// - Parameters:
///   - forwardedFor: the `X-Forwarded-For` address of a sender's report, or nil for none.
/// - Returns: the ledger.
func sendReportsUntilKilled(
    _ server: ServeProcess, scope: String, round: Int, certificate: String, killAfter: Int, maxPolls: Int,
    pauseBeforeKill: TimeInterval = 0, forwardedFor: (@Sendable (_ sender: Int, _ index: Int) -> String)? = nil
) -> ReportLedger {
    let ledger = ReportLedger()
    let group = DispatchGroup()
    let port = server.port
    for sender in 0..<4 {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            guard let client = try? RawTLSClient(port: port, timeout: 10) else { return }
            for index in 0..<10_000 {
                let host = "r\(round)-s\(sender)-\(index).api.example.com"
                let body = reportBody(hostname: host, chain: [certificate])
                let forwarded = forwardedFor.map { "X-Forwarded-For: \($0(sender, index))\r\n" } ?? ""
                let request =
                    "POST /v1/\(scope)/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + forwarded + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
                ledger.sent.withLock { _ = $0.insert(host) }
                guard let response = client.request(request, timeout: 10) else { return }
                guard response.status == 204 else { return }
                ledger.acknowledged.withLock { _ = $0.insert(host) }
            }
        }
    }
    for _ in 0..<maxPolls where ledger.acknowledged.withLock({ $0.count }) < killAfter {
        Thread.sleep(forTimeInterval: 0.005)
    }
    if pauseBeforeKill > 0 { Thread.sleep(forTimeInterval: pauseBeforeKill) }
    server.signal(SIGKILL)
    _ = server.waitForExit(timeout: 30)
    group.wait()
    return ledger
}
