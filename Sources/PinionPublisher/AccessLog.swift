// The publisher's access log: one line per response, written with one write(2) each so
// lines from several workers never interleave.

import PinionCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where access log lines go. A line is
/// `TIME PEER METHOD PATH STATUS BYTES DURATION`, e.g.
/// `2026-11-30T09:00:00Z 127.0.0.1:50312 GET /v1/com.example/manifest.json 200 1834 0.412ms`;
/// TIME is RFC 3339 UTC, BYTES the body bytes sent, DURATION from the request's first
/// byte to its last response byte. Peer-controlled text is escaped (no control
/// characters reach a terminal or a log parser). `-` stands for an unknown field.
public final class AccessLog: Sendable {
    private let descriptor: Int32
    private let owned: Bool

    /// A log to standard error.
    public static let standardError = AccessLog(descriptor: 2, owned: false)
    /// No log.
    public static let disabled = AccessLog(descriptor: -1, owned: false)

    private init(descriptor: Int32, owned: Bool) {
        self.descriptor = descriptor
        self.owned = owned
    }

    /// Appends to the file at `path`, creating it (mode 0640) if needed.
    ///
    /// - Throws: `PublisherError.system` naming the file and the system error.
    public convenience init(path: String) throws(PublisherError) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard descriptor >= 0 else {
            throw .system("\(path): cannot open the access log: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .system("\(path): the access log must be a regular file")
        }
        self.init(descriptor: descriptor, owned: true)
    }

    deinit { if owned { close(descriptor) } }

    /// Writes one record; a failed write is ignored (serving matters more than logging).
    func record(
        time: String, peer: String, method: String, path: String, status: Int, bytes: Int, nanoseconds: UInt64
    ) {
        guard descriptor >= 0 else { return }
        let micros = nanoseconds / 1000
        let fraction = String(micros % 1000)
        let duration = "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)ms"
        let line =
            "\(time) \(peer) \(TerminalText.escape(method)) \(TerminalText.escape(path)) \(status) \(bytes) \(duration)\n"
        write(line)
    }

    /// Writes one free-form event line (start, reload, drain), prefixed with `time`.
    func event(time: String, _ text: String) {
        guard descriptor >= 0 else { return }
        write("\(time) pinion-serve: \(TerminalText.escape(text))\n")
    }

    private func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
