// `pinion-jvm client refresh|connect`: the JVM SDK from the shell, with the flags, output and exit codes of `pinion client`.
package org.pinion.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.pinion.cli.Arguments.UsageException;
import org.pinion.crypto.StrictEd25519;
import org.pinion.tls.PinionTrustManager;
import org.pinion.tls.PinningException;
import org.pinion.trust.Baseline;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.ClientException;
import org.pinion.trust.FormatException;
import org.pinion.trust.JsonValue;
import org.pinion.trust.JsonWriter;
import org.pinion.trust.Limits;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;
import org.pinion.trust.TerminalText;
import org.pinion.trust.Timestamp;
import org.pinion.trust.TrustedState;
import org.pinion.trust.log.LogException;
import org.pinion.trust.log.LogFreshness;
import org.pinion.trust.log.LogPolicy;
import org.pinion.trust.log.StoredCheckpoint;
import org.pinion.update.ClientConfiguration;
import org.pinion.update.PinningClient;

/** Entry point. Exit codes (DESIGN.md §11): 0 success, 1 rejected, 2 usage, 3 network or storage. */
public final class Main {
    static final int SUCCESS = 0;
    static final int FAILURE = 1;
    static final int USAGE = 2;
    static final int IO = 3;
    static final int MAX_INPUT_BYTES = 8 * 1024 * 1024;
    static final Set<String> VALUES = Set.of("root", "scope", "state", "baseline", "cafile", "publisher-pin", "stale-grace", "timeout", "url", "connect-to", "at");
    static final Set<String> REPEATABLE = Set.of("publisher-pin");
    static final Set<String> FLAGS = Set.of("json");

    static final String REFRESH_HELP = String.join("\n",
            "usage: pinion-jvm client refresh --root ROOT_ENVELOPE --scope S --url BASE_URL --state DIR",
            "                                 [--baseline FILE] [--cafile F] [--publisher-pin P ...]",
            "                                 [--stale-grace D] [--timeout SECONDS] [--at TIME] [--json]",
            "",
            "Runs one refresh exactly as the JVM SDK in an app does (DESIGN.md section 6): walks",
            "BASE_URL/v1/S/root/N.json from the root state, fetches manifest.json (conditional",
            "GET), verifies everything against ROOT_ENVELOPE (the root the app embeds), persists",
            "the state in DIR, and prints the outcome, the events and the effective policy.",
            "Exit 0 updated or unchanged, 1 rejected, 2 usage, 3 network or storage failure.",
            "--at TIME (RFC 3339 UTC) rehearses the refresh at that time and never persists state.",
            "");
    static final String CONNECT_HELP = String.join("\n",
            "usage: pinion-jvm client connect --root ROOT_ENVELOPE --scope S --state DIR [--baseline FILE]",
            "                                 [--cafile F] [--connect-to ADDRESS[:PORT]] HOST:PORT",
            "",
            "Makes one connection to HOST:PORT (or to ADDRESS when given, validating and pinning",
            "for HOST) with the SDK's policy from DIR and the baseline: normal X.509 and",
            "hostname validation first, then the pins on the verified chain, before any request",
            "byte. Prints trusted (with the matching pin), not pinned, report-only failure, or",
            "rejected with the reason. Exit 0 trusted, not pinned or report-only; 1 rejected",
            "(X.509 or pins); 3 network. It does not refresh: run pinion-jvm client refresh first.",
            "");

    /** A failure with its exit code. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;

        Failure(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    private final PrintStream out;
    private final PrintStream err;

    Main(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** @param args command line */
    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        int code = new Main(out, err).run(List.of(args));
        out.flush();
        System.exit(out.checkError() && code == SUCCESS ? IO : code);
    }

    int run(List<String> args) {
        if (args.size() < 2 || !args.get(0).equals("client") || !(args.get(1).equals("refresh") || args.get(1).equals("connect"))) {
            err.print("pinion-jvm: error: client needs a subcommand:\n"
                    + "  pinion-jvm client refresh  run one client refresh as an app would; print the effective policy\n"
                    + "  pinion-jvm client connect  make one pinned TLS connection; print trusted / not pinned / rejected\n");
            return USAGE;
        }
        String command = args.get(1);
        try {
            Arguments arguments = new Arguments(args.subList(2, args.size()), VALUES, REPEATABLE, FLAGS);
            if (arguments.help) {
                out.print(command.equals("refresh") ? REFRESH_HELP : CONNECT_HELP);
                return SUCCESS;
            }
            if (command.equals("refresh")) {
                if (arguments.value("connect-to") != null) throw new UsageException("unknown option --connect-to");
                return refresh(arguments);
            }
            if (arguments.value("url") != null) throw new UsageException("unknown option --url");
            if (arguments.value("at") != null) throw new UsageException("unknown option --at");
            return connect(arguments);
        } catch (UsageException e) {
            err.print("pinion-jvm: error: " + TerminalText.escape(e.getMessage()) + "\nsee: pinion-jvm client " + command + " --help\n");
            return USAGE;
        } catch (Failure e) {
            err.print("pinion-jvm: error: " + TerminalText.escape(e.getMessage()) + "\n");
            return e.code;
        } catch (RuntimeException e) {
            // A bug, never an answer: reported as such, with a non-zero exit.
            err.print("pinion-jvm: internal error: " + TerminalText.escape(String.valueOf(e)) + "\n");
            return IO;
        }
    }

    static byte[] read(String path) throws Failure {
        try {
            Path p = Path.of(path);
            if (Files.size(p) > MAX_INPUT_BYTES) throw new Failure(FAILURE, path + ": over the limit of " + MAX_INPUT_BYTES + " bytes");
            return Files.readAllBytes(p);
        } catch (NoSuchFileException e) {
            throw new Failure(IO, path + ": no such file");
        } catch (IOException | java.nio.file.InvalidPathException e) {
            throw new Failure(IO, path + ": " + e.getMessage());
        }
    }

    PinningClient client(Arguments a, String baseUrl, List<ClientEvent> events) throws UsageException, Failure {
        String rootPath = a.required("root");
        ClientConfiguration c = new ClientConfiguration();
        c.scope = a.required("scope");
        try {
            c.stateDirectory = Path.of(a.required("state"));
        } catch (java.nio.file.InvalidPathException e) {
            throw new UsageException("--state: not a usable path");
        }
        c.baseUrl = baseUrl;
        c.embeddedRoot = read(rootPath);
        if (a.value("baseline") != null) {
            try {
                c.baseline = Baseline.parse(read(a.value("baseline")), Limits.STANDARD);
            } catch (FormatException e) {
                throw new Failure(FAILURE, e.inFile(a.value("baseline")).getMessage());
            }
        }
        List<Pin> pins = new ArrayList<>();
        for (String text : a.values("publisher-pin")) {
            try {
                pins.add(Pin.parse(text));
            } catch (FormatException e) {
                throw new UsageException("--publisher-pin: " + e.detail());
            }
        }
        c.publisherPins = pins;
        if (a.value("stale-grace") != null) c.staleGrace = Arguments.seconds(a.value("stale-grace"), "stale-grace");
        if (a.value("timeout") != null) {
            double t;
            try {
                t = Double.parseDouble(a.value("timeout"));
            } catch (NumberFormatException e) {
                t = -1;
            }
            if (!(t > 0 && t <= 600)) throw new UsageException("--timeout must be a number of seconds in (0, 600], got \"" + a.value("timeout") + "\"");
            c.timeoutSeconds = Math.max(1, (long) Math.ceil(t));
        }
        if (a.value("cafile") != null) {
            try {
                c.caFile = Path.of(a.value("cafile"));
            } catch (java.nio.file.InvalidPathException e) {
                throw new UsageException("--cafile: not a usable path");
            }
        }
        if (a.value("at") != null) {
            try {
                long at = org.pinion.trust.Timestamp.parse(a.value("at")).seconds;
                c.clock = () -> at;
                c.persist = false;
            } catch (FormatException e) {
                throw new UsageException("--at: \"" + a.value("at") + "\" is " + e.detail());
            }
        }
        try {
            return new PinningClient(c, events::add, null);
        } catch (ClientException e) {
            if (e.kind() == ClientException.Kind.STORAGE) throw new Failure(IO, e.getMessage());
            // An unreadable CA file keeps the exit code of the CA file's I/O (3), as the Swift CLI does.
            if (e.kind() == ClientException.Kind.CONFIGURATION) throw new Failure(IO, e.getMessage());
            throw new Failure(FAILURE, rootPath + ": " + e.getMessage());
        }
    }

    static List<String> policyLines(MergedPolicy policy) {
        List<PinnedDomain> domains = policy.domains();
        if (domains.isEmpty()) return List.of("policy      no pinned domains");
        List<String> lines = new ArrayList<>();
        lines.add("policy      " + domains.size() + " domain(s)");
        int width = 6;
        for (PinnedDomain d : domains) width = Math.max(width, d.name.length());
        width += 2;
        for (PinnedDomain d : domains) {
            List<String> pins = new ArrayList<>();
            for (Pin p : d.pins) pins.add(p.toString());
            lines.add("  " + d.name + " ".repeat(width - d.name.length()) + (d.enforce ? "enforce" : "report-only") + " "
                    + (d.includeSubdomains ? "+subdomains" : "") + "  " + (pins.isEmpty() ? "(no usable pin: refused)" : String.join(" ", pins)));
        }
        return lines;
    }

    static JsonValue policyJson(MergedPolicy policy) {
        List<JsonValue> list = new ArrayList<>();
        for (PinnedDomain d : policy.domains()) {
            List<JsonValue> pins = new ArrayList<>();
            for (Pin p : d.pins) pins.add(JsonValue.string(p.toString()));
            list.add(JsonValue.object(List.of(new JsonValue.Member("name", JsonValue.string(d.name)),
                    new JsonValue.Member("enforce", JsonValue.bool(d.enforce)),
                    new JsonValue.Member("includeSubdomains", JsonValue.bool(d.includeSubdomains)),
                    new JsonValue.Member("pins", JsonValue.array(pins)))));
        }
        return JsonValue.array(list);
    }

    int refresh(Arguments a) throws UsageException, Failure {
        a.positional(List.of());
        String url = a.required("url");
        HttpUrl parsed = HttpUrl.parse(url);
        if (parsed == null || !parsed.scheme().equals("https")) throw new UsageException("--url must be an https URL, got \"" + url + "\"");
        List<ClientEvent> events = new CopyOnWriteArrayList<>();
        PinningClient client = client(a, url, events);
        PinningClient.Report report = client.refresh();
        MergedPolicy policy = client.currentPolicy();
        TrustedState state = client.trustedState();
        String outcome;
        int code;
        switch (report.outcome) {
            case UPDATED:
                outcome = "updated to " + report.result.updatedTo;
                code = SUCCESS;
                break;
            case UNCHANGED:
                outcome = "unchanged";
                code = SUCCESS;
                break;
            case REJECTED:
                outcome = "rejected: " + report.error.getMessage();
                code = FAILURE;
                break;
            default:
                outcome = "network failure: " + report.error.getMessage();
                code = IO;
        }
        if (a.flag("json")) {
            List<JsonValue> eventTexts = new ArrayList<>();
            for (ClientEvent e : events) eventTexts.add(JsonValue.string(e.toString()));
            JsonValue doc = JsonValue.object(List.of(new JsonValue.Member("outcome", JsonValue.string(outcome)),
                    new JsonValue.Member("events", JsonValue.array(eventTexts)),
                    new JsonValue.Member("rootVersion", JsonValue.number(state.chain.newest().version())),
                    new JsonValue.Member("floor", state.floor() == null ? JsonValue.NULL : JsonValue.string(state.floor().toString())),
                    new JsonValue.Member("manifestCurrent", JsonValue.bool(client.isManifestCurrent())),
                    new JsonValue.Member("policy", policyJson(policy)),
                    // Values for machines (docs/DESIGN.md §14), next to the prose members above.
                    new JsonValue.Member("outcomeKind", JsonValue.string(outcomeKind(report.outcome))),
                    new JsonValue.Member("floorRootVersion", state.floor() == null ? JsonValue.NULL : JsonValue.number(state.floor().rootVersion)),
                    new JsonValue.Member("floorVersion", state.floor() == null ? JsonValue.NULL : JsonValue.number(state.floor().version)),
                    new JsonValue.Member("manifestExpiresAt", state.manifest == null ? JsonValue.NULL : JsonValue.string(state.manifest.expiresAt.toString())),
                    new JsonValue.Member("rootExpiresAt", JsonValue.string(state.chain.newest().payload.expiresAt.toString()))));
            List<JsonValue.Member> members = new ArrayList<>(doc.members());
            String reason = logReason(report);
            members.add(new JsonValue.Member("logReason", reason == null ? JsonValue.NULL : JsonValue.string(reason)));
            members.add(new JsonValue.Member("log", logJson(state, client)));
            doc = JsonValue.object(members);
            out.print(new String(JsonWriter.write(doc), StandardCharsets.UTF_8));
        } else {
            out.println(TerminalText.escape("outcome     " + outcome));
            for (ClientEvent e : events) out.println("event       " + e);
            out.println("root        version " + state.chain.newest().version());
            out.println("floor       " + (state.floor() == null ? "none" : state.floor().toString()));
            String reason = logReason(report);
            if (reason != null) out.println("log reason  " + reason);
            for (String line : logLines(state, client)) out.println(TerminalText.escape(line));
            for (String line : policyLines(policy)) out.println(line);
        }
        if (code != SUCCESS) throw new Failure(code, outcome);
        return SUCCESS;
    }

    /** @return the log reason code of a refusal ({@code log-quorum-not-met}), or null for another outcome */
    static String logReason(PinningClient.Report report) {
        return report.error != null && report.error.log() != null ? report.error.log().code() : null;
    }

    /**
     * The transparency log lines of the text output (docs/DESIGN.md §12), worded as {@code pinion client
     * refresh} words them: the stored checkpoint with its t_q, age and freshness, a missing one, or no log;
     * then the kept split-view evidence, if any.
     */
    static List<String> logLines(TrustedState state, PinningClient client) {
        List<String> lines = new ArrayList<>();
        LogPolicy log = state.log();
        StoredCheckpoint stored = log == null ? null : storedCheckpoint(state, log);
        if (log == null) {
            lines.add("log         none (the newest root has no log)");
        } else if (stored == null) {
            lines.add("log         no verified checkpoint yet: the manifest does not count as current");
        } else {
            LogFreshness freshness = client.logFreshness();
            String age = freshness.state == LogFreshness.State.UNCHECKED ? "" : " age " + freshness.age + "s";
            lines.add("log         " + log.origin + " checkpoint " + stored.checkpoint.size + " entries, t_q "
                    + new Timestamp(stored.quorumTime) + age + " (" + freshness.state.name().toLowerCase(java.util.Locale.ROOT) + ")");
        }
        byte[][] evidence = client.logEquivocationEvidence();
        if (log != null && evidence != null) {
            lines.add("log         EQUIVOCATION kept as evidence in " + PinningClient.EQUIVOCATION_FILE + " (two checkpoint notes)");
        }
        return lines;
    }

    /**
     * The {@code log} member of {@code --json}, with the members of {@code pinion client refresh --json}: null
     * without a log, else origin, checkpointSize, quorumTime (RFC 3339) and quorumTimeSeconds, ageSeconds,
     * freshness ({@code fresh}, {@code stale}, {@code expired}, {@code unchecked} or {@code missing}) and
     * whether split-view evidence is kept.
     */
    static JsonValue logJson(TrustedState state, PinningClient client) {
        LogPolicy log = state.log();
        if (log == null) return JsonValue.NULL;
        List<JsonValue.Member> members = new ArrayList<>();
        members.add(new JsonValue.Member("origin", JsonValue.string(log.origin)));
        StoredCheckpoint stored = storedCheckpoint(state, log);
        LogFreshness freshness = stored == null ? null : client.logFreshness();
        boolean aged = freshness != null && freshness.state != LogFreshness.State.UNCHECKED;
        members.add(new JsonValue.Member("checkpointSize", stored == null ? JsonValue.NULL : JsonValue.number(stored.checkpoint.size)));
        members.add(new JsonValue.Member("quorumTime", stored == null ? JsonValue.NULL : JsonValue.string(new Timestamp(stored.quorumTime).toString())));
        members.add(new JsonValue.Member("quorumTimeSeconds", stored == null ? JsonValue.NULL : JsonValue.number(stored.quorumTime)));
        members.add(new JsonValue.Member("ageSeconds", aged ? JsonValue.number(freshness.age) : JsonValue.NULL));
        members.add(new JsonValue.Member("freshness", JsonValue.string(freshness == null ? "missing"
                : freshness.state.name().toLowerCase(java.util.Locale.ROOT))));
        members.add(new JsonValue.Member("equivocationEvidence", JsonValue.bool(client.logEquivocationEvidence() != null)));
        return JsonValue.object(members);
    }

    private static StoredCheckpoint storedCheckpoint(TrustedState state, LogPolicy log) {
        org.pinion.trust.ClientState persisted = state.persisted();
        if (persisted.logCheckpoint == null) return null;
        try {
            return StoredCheckpoint.restore(persisted.logCheckpoint, persisted.logQuorumTime, log, StrictEd25519.INSTANCE);
        } catch (LogException e) {
            return null;
        }
    }

    /** The refresh outcome as the enum `pinion client refresh --json` writes: updated, unchanged, rejected, networkFailure. */
    static String outcomeKind(org.pinion.trust.RefreshedState.Outcome outcome) {
        switch (outcome) {
            case UPDATED: return "updated";
            case UNCHANGED: return "unchanged";
            case REJECTED: return "rejected";
            default: return "networkFailure";
        }
    }

    int connect(Arguments a) throws UsageException, Failure {
        String target = a.positional(List.of("HOST:PORT")).get(0);
        String[] hostPort = Arguments.splitHostPort(target, "HOST:PORT");
        String host = hostPort[0];
        int port = Integer.parseInt(hostPort[1]);
        String dialAddress = null;
        String connectTo = a.value("connect-to");
        if (connectTo != null) {
            boolean bareIpv6 = connectTo.chars().filter(ch -> ch == ':').count() > 1 && !connectTo.startsWith("[");
            String[] split = null;
            if (!bareIpv6) {
                try {
                    split = Arguments.splitHostPort(connectTo, "--connect-to");
                } catch (UsageException e) {
                    split = null;
                }
            }
            if (split != null) {
                dialAddress = split[0];
                port = Integer.parseInt(split[1]);
            } else if (connectTo.startsWith("[") && connectTo.endsWith("]")) {
                dialAddress = connectTo.substring(1, connectTo.length() - 1);
            } else {
                dialAddress = connectTo;
            }
        }
        List<ClientEvent> events = new CopyOnWriteArrayList<>();
        PinningClient client = client(a, null, events);
        for (ClientEvent e : events) out.println("event       " + e);
        HttpUrl url;
        try {
            url = new HttpUrl.Builder().scheme("https").host(host).port(port).build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(target + ": not a usable host name");
        }
        List<PinEvaluation> seen = new CopyOnWriteArrayList<>();
        OkHttpClient.Builder builder = new OkHttpClient.Builder().connectTimeout(30, TimeUnit.SECONDS).readTimeout(30, TimeUnit.SECONDS)
                .retryOnConnectionFailure(false).followRedirects(false);
        if (dialAddress != null) builder.dns(PinningClient.connectTo(host, dialAddress));
        OkHttpClient http = client.pinnedOkHttp(builder);
        http = http.newBuilder().addNetworkInterceptor(chain -> {
            if (chain.connection() != null && chain.connection().socket() instanceof SSLSocket) {
                Object stored = ((SSLSocket) chain.connection().socket()).getSession().getValue(PinionTrustManager.SESSION_KEY);
                List<byte[]> digests = stored instanceof PinionTrustManager.DigestList ? ((PinionTrustManager.DigestList) stored).digests : List.of();
                seen.add(PinEvaluation.evaluate(chain.request().url().host(), digests, client.currentPolicy()));
            }
            return chain.proceed(chain.request());
        }).build();
        try (Response response = http.newCall(new Request.Builder().url(url).build()).execute()) {
            PinEvaluation e = seen.isEmpty() ? null : seen.get(0);
            if (e == null || e.verdict == PinEvaluation.Verdict.NOT_PINNED) {
                out.println("not pinned: no entry covers " + host + "; normal X.509 validation passed");
            } else if (e.verdict == PinEvaluation.Verdict.TRUSTED) {
                out.println("trusted: " + host + " matches " + e.pin + " of " + e.entry.name);
            } else if (e.verdict == PinEvaluation.Verdict.REPORT_ONLY) {
                out.println("report-only failure: " + e.reason.text + " for " + e.entry.name + "; the connection went on");
            } else {
                out.println("rejected: " + e.reason.text);
            }
            out.println("HTTP status " + response.code());
            return SUCCESS;
        } catch (IOException e) {
            PinningException pinning = find(e, PinningException.class);
            if (pinning != null) throw new Failure(FAILURE, "rejected: " + host + ": " + pinning.evaluation.reason.text);
            if (e.getMessage() != null && e.getMessage().startsWith("pinning refused")) throw new Failure(FAILURE, "rejected: " + host + ": " + e.getMessage());
            java.security.cert.CertificateException x509 = find(e, java.security.cert.CertificateException.class);
            if (x509 != null || e instanceof javax.net.ssl.SSLPeerUnverifiedException) {
                throw new Failure(FAILURE, "rejected: " + host + ": X.509 validation failed: " + (x509 != null ? x509.getMessage() : e.getMessage()));
            }
            throw new Failure(IO, target + ": " + e);
        }
    }

    static <T extends Throwable> T find(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) return type.cast(t);
        }
        return null;
    }

}
