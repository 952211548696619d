// The operations options of `pinion serve`: the metrics listener and report collection
// (docs/DESIGN.md §14), kept apart from the serving options.

import PinionCore
import PinionPublisher
import PinionSystem
import PinionTrust

enum ServeOperations {
    static let options: [OptionSpec] = [
        .value("metrics-listen"), .value("reports"), .value("reports-retention"), .value("reports-max-bytes"),
        .value("reports-queue"), .value("reports-burst"), .value("reports-per-minute"),
        .value("trusted-proxy", repeatable: true), .value("baseline", repeatable: true),
    ]

    static let help = """
          --metrics-listen [ADDRESS:]PORT
                                 plain-HTTP listener for GET /metrics (Prometheus text
                                 format) and /healthz; a bare PORT binds 127.0.0.1; port 0
                                 picks a free one (printed as `metrics on http://...`)
          --reports DB.sqlite    accept POST /v1/{scope}/reports (RFC 7469 §3 JSON, at most
                                 64 KiB) into this SQLite file, which must be outside --repo;
                                 204 only once committed, 400/413/429 with the reason, 422
                                 for a host no manifest or baseline pins, 503 while the
                                 write queue is full
          --reports-retention T  delete reports last seen longer ago (default 30d; they
                                 hold source networks); also how long hosts of expired
                                 manifest versions are still accepted
          --reports-max-bytes N  size cap of the database and its WAL (default 268435456,
                                 at least 1048576); near it, reports are evicted from the
                                 source network holding the most, counts per day kept
          --reports-queue N      reports waiting to be written at most (default 1024)
          --reports-burst N      reports one source network (IPv4 /24, IPv6 /64) may send
                                 at once (default 20)
          --reports-per-minute N then this many a minute (default 10)
          --trusted-proxy RANGE  believe X-Forwarded-For on connections from these
                                 proxies (a CDN's egress, a load balancer): CIDR ranges or
                                 addresses, comma-separated and/or repeated
          --baseline FILE        also accept reports for the hosts this pinion.baseline
                                 pins (the apps' compiled-in pins); repeatable
        /healthz answers 503 with the reason while a served manifest or a newest root has
        expired, 200 otherwise.

        """

    /// Fills the metrics and report settings of `configuration` from the options.
    static func configure(_ configuration: inout PublisherConfiguration, _ arguments: ParsedArguments)
        throws(CLIError)
    {
        if let text = arguments.value("metrics-listen") {
            if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
                guard let port = UInt16(text) else { throw .usage("--metrics-listen: \(text) is not a port") }
                configuration.metricsListen = ("127.0.0.1", port)
            } else {
                configuration.metricsListen = try SPKICommand.splitHostPort(
                    text, option: "--metrics-listen", allowPortZero: true)
            }
        }
        let reportOptions = [
            "reports-retention", "reports-max-bytes", "reports-queue", "reports-burst",
            "reports-per-minute", "trusted-proxy", "baseline",
        ]
        guard let database = arguments.value("reports") else {
            if let stray = reportOptions.first(where: { arguments.value($0) != nil }) {
                throw .usage("--\(stray) needs --reports DB.sqlite")
            }
            return
        }
        var settings = ReportSettings(databasePath: database)
        if let text = arguments.value("reports-retention") {
            settings.storeLimits.retentionSeconds = try DurationText.seconds(text, option: "reports-retention")
        }
        if let value = try arguments.integer("reports-max-bytes", in: 1_048_576...(1 << 40)) {
            settings.storeLimits.maxBytes = value
        }
        if let value = try arguments.integer("reports-queue", in: 1...1_000_000) { settings.queueCapacity = Int(value) }
        if let value = try arguments.integer("reports-burst", in: 1...1_000_000) { settings.rateBurst = Int(value) }
        if let value = try arguments.integer("reports-per-minute", in: 1...1_000_000) {
            settings.ratePerMinute = Double(value)
        }
        do { settings.trustedProxies = try IPRange.list(arguments.values("trusted-proxy")) } catch {
            throw .usage("--trusted-proxy: \(TerminalText.escape(error.description))")
        }
        for path in arguments.values("baseline") {
            let bytes = try Files.read(path, limit: maxInputBytes)
            do { settings.baselines.append(try Baseline.parse(bytes)) } catch {
                throw .failure("--baseline \(error.inFile(path).description)")
            }
        }
        configuration.reports = settings
    }
}
