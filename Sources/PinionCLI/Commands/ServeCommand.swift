// `pinion serve`: the publisher's HTTPS server for a published tree (docs/DESIGN.md §9).

import Foundation
import PinionCore
import PinionPublisher
import PinionSystem

struct ServeCommand: Command {
    static let path = ["serve"]
    static let summary = "serve the published tree over HTTPS"
    static let options: [OptionSpec] =
        [
            .value("repo"), .value("cert"), .value("key"), .value("listen"), .value("workers"),
            .value("max-connections"), .value("header-timeout"), .value("idle-timeout"), .value("write-timeout"),
            .value("max-requests"), .value("drain-timeout"), .value("access-log"), .flag("cors"),
        ] + ServeOperations.options
    static let help = """
        usage: pinion serve --repo DIR --cert CERT.pem --key KEY.pem [--listen ADDRESS:PORT]
                            [--workers N] [--max-connections N] [--header-timeout T]
                            [--idle-timeout T] [--write-timeout T] [--max-requests N]
                            [--drain-timeout T] [--access-log FILE|-|off] [--cors]
                            [--metrics-listen [ADDRESS:]PORT] [--reports DB.sqlite
                             [--reports-retention 30d] [--reports-max-bytes N]
                             [--reports-queue N] [--reports-burst N] [--reports-per-minute N]
                             [--trusted-proxy RANGE,...] [--baseline FILE]]

        Serves the tree written by `pinion publish --repo DIR` over HTTPS (TLS 1.2 and 1.3).
        When ready it prints one line, `listening on https://ADDRESS:PORT`, to standard
        output. Only GET and HEAD of DIR's /v1/... .json files, manifest.proof, log/checkpoint
        and log/tile/... (a scope with a transparency log) and /healthz are answered;
        hidden files, symbolic links, directories and anything outside the tree give 404.
        A new publish is visible at once: each request opens the current file.

        Signals: SIGHUP loads the certificate and key again (open connections keep the
        old ones; on failure the old ones stay and the error is logged). SIGTERM and
        SIGINT stop accepting, let requests in flight finish, then exit 0.

        options:
          --repo DIR             the published tree
          --cert CERT.pem        certificate chain, leaf first (sent as given)
          --key KEY.pem          its private key, unencrypted PEM
          --listen ADDRESS:PORT  IP literal and port (default 127.0.0.1:8443; port 0
                                 picks a free port; IPv6 as [::1]:8443)
          --workers N            event loop threads (default: one per core)
          --max-connections N    connections open at once; more are closed at accept
                                 (default 4096)
          --header-timeout T     from connect (or a kept-alive request's first byte) to a
                                 complete request head, TLS handshake included (default 10s)
          --idle-timeout T       keep-alive wait for the next request (default 30s)
          --write-timeout T      time to send one response (default 30s)
          --max-requests N       requests per connection (default 1000)
          --drain-timeout T      wait for requests in flight on SIGTERM (default 30s)
          --access-log FILE      one line per request (default -, standard error; off)
          --cors                 add Access-Control-Allow-Origin: * to GET and HEAD
                                 answers (404 included), for a browser-based auditor
        Times are seconds with an optional unit: 500ms, 10s, 2m.

        Files are sent with ETag, Last-Modified and Cache-Control; If-None-Match and
        If-Modified-Since give 304. Errors are {"error": "<reason>"} JSON, as the nginx
        configuration in deploy/nginx/ answers. ALPN: http/1.1 (or http/1.0); a client
        offering neither (h2 only) gets the no_application_protocol alert.

        operations (docs/OPERATIONS.md):
        \(ServeOperations.help)
        """

    /// The server settings `pinion serve` and `pinion witness` share: the TLS certificate
    /// chain (`--cert`) and key (`--KEYFLAG`), both readable (else exit 3; what OpenSSL then
    /// refuses in a readable file is a failure, exit 1), `--listen`, `--workers`,
    /// `--max-connections`, `--max-requests` and the four timeouts.
    ///
    /// - Parameters:
    ///   - repository: the served tree ("" for the witness).
    ///   - keyFlag: the private key's flag name (`key` for serve, `tls-key` for the witness).
    ///   - defaultListen: `ADDRESS:PORT` without `--listen`.
    ///   - defaultMaxConnections: the cap without `--max-connections`, or nil for the library's.
    /// - Throws: `CLIError` naming the flag.
    static func serverConfiguration(
        _ arguments: ParsedArguments, repository: String, keyFlag: String, defaultListen: String,
        defaultMaxConnections: Int? = nil
    ) throws -> PublisherConfiguration {
        var configuration = PublisherConfiguration(
            repository: repository, certificateChainFile: try arguments.required("cert"),
            privateKeyFile: try arguments.required(keyFlag))
        if let defaultMaxConnections { configuration.maxConnections = defaultMaxConnections }
        for (flag, path) in [("cert", configuration.certificateChainFile), (keyFlag, configuration.privateKeyFile)] {
            do { _ = try Files.read(path, limit: maxInputBytes) } catch {
                throw CLIError(exitCode: error.exitCode, "--\(flag) \(error.message)")
            }
        }
        (configuration.host, configuration.port) = try SPKICommand.splitHostPort(
            arguments.value("listen") ?? defaultListen, option: "--listen", allowPortZero: true)
        configuration.workers = Int(
            try arguments.integer("workers", in: 1...256)
                ?? Int64(min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 256)))
        if let value = try arguments.integer("max-connections", in: 1...1_000_000) {
            configuration.maxConnections = Int(value)
        }
        if let value = try arguments.integer("max-requests", in: 1...1_000_000_000) {
            configuration.maxRequestsPerConnection = Int(value)
        }
        for (name, keyPath) in [
            ("header-timeout", \PublisherConfiguration.headerTimeout), ("idle-timeout", \.idleTimeout),
            ("write-timeout", \.writeTimeout), ("drain-timeout", \.drainTimeout),
        ] {
            if let text = arguments.value(name) { configuration[keyPath: keyPath] = try seconds(text, option: name) }
        }
        return configuration
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        var configuration = try serverConfiguration(
            arguments, repository: try arguments.required("repo"), keyFlag: "key", defaultListen: "127.0.0.1:8443")
        configuration.cors = arguments.flag("cors")
        let log: AccessLog
        switch arguments.value("access-log") ?? "-" {
        case "-": log = .standardError
        case "off": log = .disabled
        case let path: log = try mappedServerError { () throws(HTTPServerError) in try AccessLog(path: path) }
        }

        try ServeOperations.configure(&configuration, arguments)
        let publisher = try mapped { () throws(PublisherError) in
            try HTTPSPublisher(configuration: configuration, accessLog: log)
        }
        // Signals go to a pipe before any worker thread exists, so whichever thread the
        // kernel picks, nothing is killed and the main thread learns of it.
        let signals = try mappedServerError { () throws(HTTPServerError) in try ServerSignals() }
        if publisher.maxConnections < configuration.maxConnections {
            context.err(
                "pinion serve: the connection cap is \(publisher.maxConnections), not \(configuration.maxConnections): the open files limit (ulimit -n) allows no more\n"
            )
        }
        publisher.start()
        context.print("listening on \(publisher.url)")
        if let metricsURL = publisher.metricsURL { context.print("metrics on \(metricsURL)") }
        while let signal = signals.next() {
            if signal == .reload {
                do {
                    try publisher.reloadCredentials()
                    context.err("pinion serve: SIGHUP: certificate and key reloaded\n")
                } catch {
                    context.err("pinion serve: SIGHUP: reload failed, keeping the old certificate: \(error)\n")
                }
                continue
            }
            break
        }
        context.err("pinion serve: draining (up to \(configuration.drainTimeout)s)\n")
        let clean = publisher.drain(timeout: configuration.drainTimeout)
        context.err(
            clean
                ? "pinion serve: stopped\n"
                : "pinion serve: stopped; connections still open after the drain timeout were closed\n")
    }

    /// `mapped` for the server engine's errors (through `PublisherError`); shared with
    /// `pinion witness`.
    static func mappedServerError<T>(_ body: () throws(HTTPServerError) -> T) throws(CLIError) -> T {
        try mapped { () throws(PublisherError) in
            do throws(HTTPServerError) { return try body() } catch { throw PublisherError(error) }
        }
    }

    /// The exit code of a server set-up error: usage for a bad address or setting, failure for
    /// unusable TLS credentials, I/O otherwise; shared with `pinion witness`.
    static func mapped<T>(_ body: () throws(PublisherError) -> T) throws(CLIError) -> T {
        do { return try body() } catch {
            switch error {
            case .badListenAddress, .badSetting: throw .usage(error.description)
            case .reportStore(.insideServedTree): throw .usage(error.description)
            case .tlsCredentials: throw .failure(error.description)
            default: throw .io(error.description)
            }
        }
    }

    /// Seconds from `500ms`, `10s`, `2m` or a bare number of seconds; in [0.001, 86400]: the
    /// server waits in whole milliseconds, so a shorter time would answer no connection.
    static func seconds(_ text: String, option: String) throws(CLIError) -> Double {
        var number = Substring(text)
        var scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
            scale = 0.001
        } else if number.hasSuffix("s") {
            number = number.dropLast()
        } else if number.hasSuffix("m") {
            number = number.dropLast()
            scale = 60
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(number), value * scale >= 0.001, value * scale <= 86_400
        else {
            throw .usage("--\(option) must be a time from 1ms to 86400s such as 500ms, 10s or 2m, got \"\(text)\"")
        }
        return value * scale
    }
}
