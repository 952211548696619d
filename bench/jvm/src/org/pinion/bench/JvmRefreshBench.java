// Benchmark 7: the JVM SDK's refresh (parse + verify + merge) against BouncyCastle Ed25519 + a Jackson tree parse.
package org.pinion.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.pinion.crypto.Sha256;
import org.pinion.crypto.StrictEd25519;
import org.pinion.trust.Baseline;
import org.pinion.trust.Envelope;
import org.pinion.trust.Fetch;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestPayload;
import org.pinion.trust.ManifestVerifier;
import org.pinion.trust.PolicySnapshot;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.Timestamp;
import org.pinion.trust.TrustCore;
import org.pinion.trust.TrustedState;

/**
 * {@code JvmRefreshBench WORK REPS WARMUP [DOMAINS...]}: for each manifest size, one JSON line for
 * bench/report.py. WORK is bench/run's work directory with the fixtures {@code pinion-bench gen}
 * wrote (root.json, manifest-{N}.json: the same files the Swift refresh benchmark reads). Each size
 * first runs WARMUP rounds of both sides (discarded: the JIT compiles the hot paths then), then REPS
 * repetitions, reference first, of at least 1 s of process CPU time each; the ratio is the median of
 * the per-repetition ratios. Exits non-zero when a fixture does not verify.
 */
public final class JvmRefreshBench {
    /** The scope bench/Sources/pinion-bench/Fixtures.swift signs for. */
    static final String SCOPE = "com.example.app";
    /** The entry of the Swift baseline that the manifest also pins (Fixtures.swift pinnedName). */
    static final String PINNED_NAME = "api.pinion-bench.example";
    /**
     * Process CPU time on Linux JDK 17 comes from times(2), in 10 ms clock ticks: a timed window of at
     * least 1 s keeps that granularity within 1% of each figure.
     */
    static final long MINIMUM_NS = 1_000_000_000L;
    /** Phases only explain the total, so their windows are shorter (granularity within 4%). */
    static final long PHASE_MINIMUM_NS = 250_000_000L;

    private JvmRefreshBench() {}

    /** The SDK's pure refresh, as PinningClient does it: TrustCore.refresh, then the fail-closed merge. */
    static final class PinionRefresh {
        final TrustCore core;
        final TrustedState initial;
        final Baseline baseline;
        final byte[] manifest;
        final Timestamp now;
        final Fetch.Source source;

        PinionRefresh(byte[] root, byte[] manifest, Baseline baseline, Timestamp now) throws Exception {
            core = new TrustCore(SCOPE, root, StrictEd25519.INSTANCE, Limits.STANDARD);
            initial = core.initialState(List.of());
            this.baseline = baseline;
            this.manifest = manifest;
            this.now = now;
            source = new Fetch.Source() {
                @Override
                public Fetch root(long version) { return Fetch.notFound(); }

                @Override
                public Fetch manifest(String ifNoneMatch) { return Fetch.found(manifest, "\"bench\"", -1); }
            };
        }

        RefreshedState refreshOnly() { return core.refresh(initial, now, source); }

        PolicySnapshot run() {
            RefreshedState result = refreshOnly();
            if (result.outcome != RefreshedState.Outcome.UPDATED) {
                throw new IllegalStateException("refresh did not update: " + result.outcome + " " + result.error);
            }
            return result.state.snapshot(baseline, 0);
        }
    }

    /** The reference: BouncyCastle's RFC 8032 verify of the PAE, then Jackson's tree parse of the payload. */
    static final class ReferenceRefresh {
        final byte[] pae;
        final byte[] signature;
        final byte[] publicKey;
        final byte[] payload;
        final ObjectMapper mapper = new ObjectMapper();

        ReferenceRefresh(PinionRefresh pinion) throws Exception {
            Envelope envelope = Envelope.parse(pinion.manifest, Limits.STANDARD);
            Envelope.Signature first = envelope.signatures.get(0);
            pae = envelope.signingInput();
            signature = first.signature();
            publicKey = pinion.core.anchor().newest().payload.publicKey(first.keyId);
            if (publicKey == null) throw new IllegalStateException("the manifest's key is not in the root");
            payload = envelope.payload();
        }

        boolean verify() { return Ed25519.verify(signature, 0, publicKey, 0, pae, 0, pae.length); }

        Object run() throws IOException {
            if (!verify()) throw new IllegalStateException("reference signature does not verify");
            return mapper.readTree(payload);
        }
    }

    /** A two-domain baseline like the Swift benchmark's: PINNED_NAME (subdomains) and other.example, 2 random pins each. */
    static Baseline baseline(SecureRandom random) throws Exception {
        String json = "{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": ["
                + "{\"name\": \"" + PINNED_NAME + "\", \"includeSubdomains\": true, \"pins\": [" + pin(random) + ", " + pin(random) + "]}, "
                + "{\"name\": \"other.example\", \"pins\": [" + pin(random) + ", " + pin(random) + "]}]}";
        return Baseline.parse(json.getBytes(StandardCharsets.UTF_8), Limits.STANDARD);
    }

    private static String pin(SecureRandom random) {
        byte[] digest = new byte[32];
        random.nextBytes(digest);
        return "\"sha256/" + Base64.getEncoder().encodeToString(digest) + "\"";
    }

    /**
     * Runs the benchmark ({@code WORK REPS WARMUP [DOMAINS...]}) or, with {@code profile WORK DOMAINS
     * ITERATIONS}, only the SDK side in a loop, for a profiler (bench/README.md: Java Flight Recorder).
     *
     * @param args see the class comment
     */
    public static void main(String[] args) {
        if (args.length == 4 && args[0].equals("profile")) {
            try {
                Path work = Path.of(args[1]);
                PinionRefresh pinion = new PinionRefresh(Files.readAllBytes(work.resolve("root.json")),
                        Files.readAllBytes(work.resolve("manifest-" + positive(args[2]) + ".json")), baseline(new SecureRandom()),
                        new Timestamp(System.currentTimeMillis() / 1000));
                for (int i = positive(args[3]); i > 0; i--) Measure.sink = pinion.run();
            } catch (Exception e) {
                System.err.println("JvmRefreshBench: " + e);
                System.exit(1);
            }
            return;
        }
        if (args.length < 3) {
            System.err.println("usage: JvmRefreshBench WORK REPS WARMUP [DOMAINS...] (see bench/README.md)");
            System.exit(2);
        }
        try {
            Path work = Path.of(args[0]);
            int repetitions = positive(args[1]);
            int warmup = positive(args[2]);
            List<Integer> sizes = new ArrayList<>();
            for (int i = 3; i < args.length; i++) sizes.add(positive(args[i]));
            if (sizes.isEmpty()) sizes = List.of(10, 10_000);
            byte[] root = Files.readAllBytes(work.resolve("root.json"));
            Baseline baseline = baseline(new SecureRandom());
            Timestamp now = new Timestamp(System.currentTimeMillis() / 1000);
            for (int domains : sizes) {
                byte[] manifest = Files.readAllBytes(work.resolve("manifest-" + domains + ".json"));
                System.out.println(measure(domains, new PinionRefresh(root, manifest, baseline, now), repetitions, warmup));
                System.out.flush();
            }
        } catch (Exception e) {
            System.err.println("JvmRefreshBench: " + e);
            System.exit(1);
        }
    }

    private static int positive(String text) {
        int value;
        try {
            value = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(text + " is not a positive number", e);
        }
        if (value <= 0) throw new IllegalArgumentException(text + " is not a positive number");
        return value;
    }

    static String measure(int domains, PinionRefresh pinion, int repetitions, int warmup) throws Exception {
        ReferenceRefresh reference = new ReferenceRefresh(pinion);
        // Warm-up: the same interleaved rounds as the measurement, discarded.
        long warmupStart = Measure.jitMilliseconds();
        long warmupPinionCalls = 0;
        long warmupReferenceCalls = 0;
        for (int i = 0; i < warmup; i++) {
            warmupReferenceCalls += Measure.perCall(MINIMUM_NS, 3, reference::run).calls;
            warmupPinionCalls += Measure.perCall(MINIMUM_NS, 3, pinion::run).calls;
        }
        long measureStart = Measure.jitMilliseconds();
        List<Double> pinionTimes = new ArrayList<>();
        List<Double> referenceTimes = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> threadRatios = new ArrayList<>();
        long pinionCalls = 0;
        long referenceCalls = 0;
        for (int i = 0; i < repetitions; i++) {
            Measure.PerCall r = Measure.perCall(MINIMUM_NS, 3, reference::run);
            Measure.PerCall p = Measure.perCall(MINIMUM_NS, 3, pinion::run);
            referenceTimes.add(r.processNs);
            pinionTimes.add(p.processNs);
            ratios.add(p.processNs / r.processNs);
            threadRatios.add(p.threadNs / r.threadNs);
            pinionCalls += p.calls;
            referenceCalls += r.calls;
        }
        long measureEnd = Measure.jitMilliseconds();
        Map<String, List<Double>> phases = phases(pinion, reference, repetitions);

        ObjectMapper mapper = new ObjectMapper();
        ObjectNode line = mapper.createObjectNode();
        line.put("benchmark", "jvm-refresh");
        line.put("domains", domains);
        line.put("envelopeBytes", pinion.manifest.length);
        line.put("pinionNs", Measure.median(pinionTimes));
        line.put("referenceNs", Measure.median(referenceTimes));
        line.put("ratio", Measure.median(ratios));
        ArrayNode ratioList = line.putArray("ratios");
        ratios.forEach(ratioList::add);
        line.put("threadRatio", Measure.median(threadRatios));
        ArrayNode threadList = line.putArray("threadRatios");
        threadRatios.forEach(threadList::add);
        line.put("repetitions", repetitions);
        line.put("pinionCalls", pinionCalls);
        line.put("referenceCalls", referenceCalls);
        line.put("warmupRounds", warmup);
        line.put("warmupPinionCalls", warmupPinionCalls);
        line.put("warmupReferenceCalls", warmupReferenceCalls);
        line.put("jitMsWarmup", measureStart - warmupStart);
        line.put("jitMsMeasured", measureEnd - measureStart);
        ObjectNode phaseNode = line.putObject("phasesNs");
        phases.forEach((name, values) -> phaseNode.put(name, Measure.median(values)));
        line.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        List<String> collectors = new ArrayList<>();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) collectors.add(gc.getName());
        line.put("gc", String.join(", ", collectors));
        line.put("jvmArguments", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        line.put("bouncycastle", new org.bouncycastle.jce.provider.BouncyCastleProvider().getVersionStr());
        line.put("jackson", com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString());
        return mapper.writeValueAsString(line);
    }

    /** Where the SDK's time goes (medians, same run): each step of the refresh on its own, and the two reference steps. */
    private static Map<String, List<Double>> phases(PinionRefresh pinion, ReferenceRefresh reference, int repetitions)
            throws Exception {
        byte[] manifest = pinion.manifest;
        ManifestVerifier.Verified verified = ManifestVerifier.verify(manifest, pinion.core.anchor().newest(),
                StrictEd25519.INSTANCE, Limits.STANDARD);
        TrustedState updated = pinion.refreshOnly().state;
        Map<String, Measure.Work> steps = new LinkedHashMap<>();
        steps.put("envelopeParse", () -> Envelope.parse(manifest, Limits.STANDARD));
        steps.put("strictEd25519", () -> StrictEd25519.INSTANCE.isValidSignature(reference.signature, reference.pae,
                reference.publicKey));
        steps.put("payloadParse", () -> ManifestPayload.parse(reference.payload, Limits.STANDARD));
        steps.put("payloadSha256", () -> Sha256.digest(reference.payload));
        steps.put("manifestVerify", () -> ManifestVerifier.verify(manifest, pinion.core.anchor().newest(),
                StrictEd25519.INSTANCE, Limits.STANDARD));
        steps.put("refreshOnly", pinion::refreshOnly);
        steps.put("merge", () -> updated.snapshot(pinion.baseline, 0));
        steps.put("referenceVerify", reference::verify);
        steps.put("referenceParse", () -> reference.mapper.readTree(reference.payload));
        Map<String, List<Double>> times = new LinkedHashMap<>();
        Measure.sink = verified;
        for (int i = 0; i < repetitions; i++) {
            for (Map.Entry<String, Measure.Work> step : steps.entrySet()) {
                times.computeIfAbsent(step.getKey(), k -> new ArrayList<>())
                        .add(Measure.perCall(PHASE_MINIMUM_NS, 3, step.getValue()).processNs);
            }
        }
        return times;
    }
}
