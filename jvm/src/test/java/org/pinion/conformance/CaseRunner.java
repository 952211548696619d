// Runs one conformance case (conformance/README.md) against the JVM SDK: the trust core driven through the update-channel seam.
package org.pinion.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.pinion.crypto.StrictEd25519;
import org.pinion.storage.StateStore;
import org.pinion.trust.Baseline;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.ClientException;
import org.pinion.trust.Fetch;
import org.pinion.trust.FormatException;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.Limits;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.StrictJsonParser;
import org.pinion.trust.Timestamp;
import org.pinion.trust.TrustCore;
import org.pinion.trust.TrustedState;
import org.pinion.trust.PollToken;
import org.pinion.trust.TreeFile;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateChannel;
import org.pinion.trust.UpdateFetcher;

/** One case directory: fixtures plus steps.json, run step by step against a real two-copy StateStore. */
final class CaseRunner {
    /** A step whose result differs from its expectation. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) { super(message); }
    }

    /** What the fake publisher serves for one path: bytes (with an ETag) or a status. */
    private static final class Served {
        final byte[] body;
        final String etag;
        final int status;

        Served(byte[] body, String etag, int status) {
            this.body = body;
            this.etag = etag;
            this.status = status;
        }
    }

    static final JsonLimits CASE_LIMITS = new JsonLimits(64 * 1024 * 1024, 16, 100_000, Map.of());

    final Path directory;
    private final JsonValue document;
    private TrustCore core;
    private final Baseline baseline;
    private final Path stateDirectory;
    private final StateStore store;
    private TrustedState state;
    private final Map<Long, Served> roots = new HashMap<>();
    private Served manifest;
    private Served proof;
    private PollToken expectedToken;
    /** The update channel: in memory by default, or an HTTP fetcher against a publisher whose answers are {@link #answer}. */
    private UpdateFetcher transport = request -> answer(request.file, request.ifNoneMatch, request.pollToken == null ? null : request.pollToken.query());

    CaseRunner(Path directory, Path stateDirectory) throws Exception {
        this.directory = directory;
        this.stateDirectory = stateDirectory;
        document = StrictJsonParser.parse(Files.readAllBytes(directory.resolve("steps.json")), CASE_LIMITS);
        if (!"pinion-conformance/1".equals(text(document.get("format")))) throw new Failure("not a pinion-conformance/1 case");
        String scope = text(document.get("scope"));
        core = new TrustCore(scope, fixture(text(document.get("embeddedRoot"))), StrictEd25519.INSTANCE, Limits.STANDARD);
        JsonValue baselineName = document.get("baseline");
        baseline = baselineName == null || baselineName.kind() == JsonValue.Kind.NULL ? Baseline.EMPTY
                : Baseline.parse(fixture(baselineName.text()), Limits.STANDARD);
        store = new StateStore(stateDirectory, scope, Limits.STANDARD);
        start();
    }

    /** @param transport the update channel to refresh through (its publisher answers with {@link #answer}) */
    void useTransport(UpdateFetcher transport) { this.transport = transport; }

    /**
     * What the case's publisher answers (conformance/README.md, {@code serve}): root/N.json not listed
     * is 404; manifest.json absent is 404, a listed ETag equal to If-None-Match is 304, a listed status
     * is answered as it is; manifest.proof absent is 404. A manifest request whose poll token is not
     * {@code have=V&base=B} for the state held is answered 400, which fails the step.
     *
     * @param file the file asked for
     * @param ifNoneMatch the request's If-None-Match, or null
     * @param query the manifest request's query, or null
     * @return the raw answer
     */
    UpdateAnswer answer(TreeFile file, String ifNoneMatch, String query) {
        Served s;
        switch (file.kind) {
            case ROOT: s = roots.get(file.version); break;
            case MANIFEST:
                if (expectedToken == null || !expectedToken.query().equals(query)) return new UpdateAnswer(400, null, null, -1);
                s = manifest;
                break;
            default: s = proof; break;
        }
        if (s == null) return new UpdateAnswer(404, null, null, -1);
        if (s.body == null) return new UpdateAnswer(s.status, null, null, -1);
        if (s.etag != null && s.etag.equals(ifNoneMatch)) return new UpdateAnswer(304, s.etag, null, -1);
        return new UpdateAnswer(200, s.etag, s.body, -1);
    }

    /** @return whether a pending case lists the JVM SDK in {@code supportedBy} (it must then pass) */
    boolean supportedByJvm() {
        JsonValue list = document.get("supportedBy");
        if (list == null || list.kind() != JsonValue.Kind.ARRAY) return false;
        for (JsonValue name : list.elements()) {
            if ("jvm".equals(name.text())) return true;
        }
        return false;
    }

    /** @return the case's pending note, or null */
    String pendingNote() {
        JsonValue note = document.get("pending");
        return note == null ? null : note.text();
    }

    private static String text(JsonValue value) { return value == null ? null : value.text(); }

    private byte[] fixture(String name) throws IOException, Failure {
        if (name == null || name.contains("/")) throw new Failure("bad fixture name " + name);
        return Files.readAllBytes(directory.resolve(name));
    }

    /** Start-up, as PinningClient does it: the two copies, then the trust core's re-verification. */
    private void start() throws Failure {
        StateStore.Load load = store.load();
        switch (load.status) {
            case LOADED: state = core.restore(load.state).state; break;
            case LOST: state = core.initialState(load.domainNames); break;
            case FRESH: state = core.initialState(List.of()); break;
            default: throw new Failure("state unavailable: " + load.notes);
        }
    }

    /** @return the number of steps run @throws Failure naming the first step that differs */
    int run() throws Exception {
        List<JsonValue> steps = document.get("steps").elements();
        for (int i = 0; i < steps.size(); i++) {
            JsonValue step = steps.get(i);
            try {
                run(step);
            } catch (Failure failure) {
                throw new Failure(directory.getFileName() + " step " + i + " (" + text(step.get("action")) + "): "
                        + failure.getMessage());
            }
        }
        return steps.size();
    }

    private static Timestamp time(JsonValue value) throws Failure {
        try {
            return Timestamp.parse(value.text());
        } catch (FormatException | RuntimeException e) {
            throw new Failure("bad time " + value);
        }
    }

    private Served served(JsonValue value) throws IOException, Failure {
        if (value == null) return null;
        if (value.kind() == JsonValue.Kind.STRING) return new Served(fixture(value.text()), null, 200);
        JsonValue status = value.get("status");
        if (status != null) return new Served(null, null, Integer.parseInt(status.text()));
        return new Served(fixture(text(value.get("file"))), text(value.get("etag")), 200);
    }

    private void run(JsonValue step) throws Exception {
        String action = text(step.get("action"));
        switch (action == null ? "" : action) {
            case "serve":
                roots.clear();
                JsonValue served = step.get("roots");
                if (served != null) {
                    for (JsonValue.Member member : served.members()) roots.put(Long.parseLong(member.name), served(member.value));
                }
                manifest = served(step.get("manifest"));
                proof = served(step.get("proof"));
                break;
            case "refresh": refresh(time(step.get("at")), step.get("expect")); break;
            case "policy": checkPolicy(time(step.get("at")), step.get("expect")); break;
            case "evaluate": evaluate(step); break;
            case "restart": start(); break;
            case "upgradeApp":
                core = new TrustCore(core.scope, fixture(text(step.get("embeddedRoot"))), StrictEd25519.INSTANCE,
                        Limits.STANDARD);
                start();
                break;
            case "deleteState":
                try (var files = Files.list(stateDirectory)) {
                    for (Path file : (Iterable<Path>) files::iterator) Files.delete(file);
                }
                start();
                break;
            case "corruptCopy": {
                Path file = stateDirectory.resolve("B".equals(text(step.get("copy"))) ? StateStore.COPY_B : StateStore.COPY_A);
                byte[] bytes = Files.readAllBytes(file);
                bytes[bytes.length / 2] ^= 0x5A;
                Files.write(file, bytes);
                start();
                break;
            }
            default: throw new Failure("unknown action");
        }
    }

    private void refresh(Timestamp t0, JsonValue expect) throws Exception {
        expectedToken = PollToken.of(state.manifest == null ? 0 : state.manifest.version, baseline.documentBytes(), StrictEd25519.INSTANCE);
        Fetch.Source source = new UpdateChannel(transport, expectedToken, Limits.STANDARD.maxEnvelopeBytes);
        RefreshedState result = core.refresh(state, t0, source);
        if (result.stateChanged) store.save(result.state.persisted());
        state = result.state;
        String outcome;
        String reason = null;
        switch (result.outcome) {
            case UPDATED: outcome = "updated"; break;
            case UNCHANGED: outcome = "unchanged"; break;
            case REJECTED: outcome = "rejected"; reason = ReasonCodes.of(result.error); break;
            default: outcome = "network"; reason = result.error == null ? "network" : ReasonCodes.of(result.error); break;
        }
        String detail = result.error == null ? "" : " (" + result.error.getMessage() + ")";
        same("outcome", outcome, text(expect.get("outcome")), detail);
        if (expect.get("reason") != null) same("reason", reason, text(expect.get("reason")), detail);
        String floor = state.floor() == null ? null : "[" + state.floor().rootVersion + ", " + state.floor().version + "]";
        JsonValue expectedFloor = expect.get("floor");
        String wanted = expectedFloor == null || expectedFloor.kind() == JsonValue.Kind.NULL ? null
                : "[" + expectedFloor.elements().get(0).text() + ", " + expectedFloor.elements().get(1).text() + "]";
        same("floor", floor, wanted, detail);
        same("stateChanged", result.stateChanged, expect.get("stateChanged").flag(), detail);
        List<String> names = new ArrayList<>();
        for (ClientEvent event : result.events) names.add(eventName(event.kind));
        if (expect.get("events") != null) {
            for (JsonValue name : expect.get("events").elements()) {
                if (!names.contains(name.text())) throw new Failure("event " + name.text() + " missing from " + names);
            }
        }
        if (expect.get("absentEvents") != null) {
            for (JsonValue name : expect.get("absentEvents").elements()) {
                if (names.contains(name.text())) throw new Failure("event " + name.text() + " reported: " + names);
            }
        }
        if (expect.get("policy") != null) checkPolicy(t0, expect.get("policy"));
    }

    /** @return the event name of conformance/README.md: the kind in lower camel case */
    private static String eventName(ClientEvent.Kind kind) {
        StringBuilder name = new StringBuilder();
        boolean upper = false;
        for (char c : kind.name().toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                name.append(upper ? c : Character.toLowerCase(c));
                upper = false;
            }
        }
        return name.toString();
    }

    private static void same(String what, Object actual, Object expected, String detail) throws Failure {
        if (actual == null ? expected != null : !actual.equals(expected)) {
            throw new Failure(what + ": expected " + expected + ", got " + actual + detail);
        }
    }

    private MergedPolicy policy(Timestamp wall) {
        Timestamp now = state.lastKnownTime() == null ? wall : Timestamp.max(wall, state.lastKnownTime());
        return state.snapshot(baseline, 0).policy(now);
    }

    private void checkPolicy(Timestamp wall, JsonValue expect) throws Failure {
        MergedPolicy merged = policy(wall);
        Map<String, JsonValue> hosts = new TreeMap<>();
        for (JsonValue.Member member : expect.members()) hosts.put(member.name, member.value);
        for (Map.Entry<String, JsonValue> host : hosts.entrySet()) {
            MergedPolicy.HostPolicy actual = merged.hostPolicy(host.getKey());
            if (host.getValue().kind() == JsonValue.Kind.NULL) {
                if (actual != null) throw new Failure(host.getKey() + ": expected not pinned, got " + actual.entry.pins);
                continue;
            }
            if (actual == null) throw new Failure(host.getKey() + ": expected pinned, got not pinned");
            List<String> pins = new ArrayList<>();
            for (Pin pin : actual.entry.pins) pins.add(pin.toString());
            pins.sort(null);
            List<String> expected = new ArrayList<>();
            for (JsonValue pin : host.getValue().get("pins").elements()) expected.add(pin.text());
            same(host.getKey() + " pins", pins, expected, "");
            same(host.getKey() + " enforce", actual.enforce, host.getValue().get("enforce").flag(), "");
        }
    }

    private void evaluate(JsonValue step) throws Failure {
        List<byte[]> chain = new ArrayList<>();
        for (JsonValue pin : step.get("chain").elements()) {
            try {
                chain.add(Pin.parse(pin.text()).digest());
            } catch (FormatException e) {
                throw new Failure("bad pin " + pin.text());
            }
        }
        PinEvaluation result = PinEvaluation.evaluate(text(step.get("host")), chain, policy(time(step.get("at"))));
        String verdict;
        switch (result.verdict) {
            case TRUSTED: verdict = "trusted"; break;
            case NOT_PINNED: verdict = "notPinned"; break;
            case REJECTED: verdict = "rejected"; break;
            default: verdict = "reportOnly"; break;
        }
        String failure = null;
        if (result.reason != null) {
            switch (result.reason) {
                case NO_VERIFIED_CHAIN: failure = "noVerifiedChain"; break;
                case NO_USABLE_PIN: failure = "noUsablePin"; break;
                default: failure = "noMatchingPin"; break;
            }
        }
        JsonValue expect = step.get("expect");
        same("verdict", verdict, text(expect.get("verdict")), "");
        same("failure", failure, text(expect.get("failure")), "");
    }
}
