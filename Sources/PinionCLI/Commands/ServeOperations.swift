// The operations options of `pinion serve`: the metrics listener and report collection
// (docs/DESIGN.md §14), kept apart from the serving options.

import PinionCore
import PinionPublisher
import PinionSystem

enum ServeOperations {
    static let options: [OptionSpec] = [
        .value("metrics-listen"), .value("reports"), .value("reports-retention"), .value("reports-max-bytes"),
        .value("reports-queue"), .value("reports-burst"), .value("reports-per-minute"), .value("trusted-proxy"),
    ]

    static let help = """
          --metrics-listen [ADDRESS:]PORT
                                 plain-HTTP listener for GET /metrics (Prometheus text
                                 format) and /healthz; a bare PORT binds 127.0.0.1; port 0
                                 picks a free one (printed as `metrics on http://...`)
          --reports DB.sqlite    accept POST /v1/{scope}/reports (RFC 7469 §3 JSON, at most
                                 64 KiB) into this SQLite file, which must be outside --repo;
                                 204 only once committed, 400/413/429 with the reason, 503
                                 while the write queue is full
          --reports-retention T  delete reports last seen longer ago (default 30d; they
                                 hold client addresses)
          --reports-max-bytes N  size cap of the database and its WAL (default 268435456)
          --reports-queue N      reports waiting to be written at most (default 1024)
          --reports-burst N      reports one client address may send at once (default 20)
          --reports-per-minute N then this many a minute (default 10)
          --trusted-proxy IP     believe the last X-Forwarded-For address on connections
                                 from this one proxy (a CDN or load balancer)
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
            "reports-per-minute", "trusted-proxy",
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
        if let value = try arguments.integer("reports-max-bytes", in: 65_536...(1 << 40)) {
            settings.storeLimits.maxBytes = value
        }
        if let value = try arguments.integer("reports-queue", in: 1...1_000_000) { settings.queueCapacity = Int(value) }
        if let value = try arguments.integer("reports-burst", in: 1...1_000_000) { settings.rateBurst = Int(value) }
        if let value = try arguments.integer("reports-per-minute", in: 1...1_000_000) {
            settings.ratePerMinute = Double(value)
        }
        if let text = arguments.value("trusted-proxy") {
            guard let canonical = IPLiteral.canonical(text) else {
                throw .usage("--trusted-proxy: \(text) is not an IPv4 or IPv6 address")
            }
            settings.trustedProxy = canonical
        }
        configuration.reports = settings
    }
}
