// Timing helpers of the JVM benchmark: process CPU time (GC and JIT threads included), medians, JIT activity.
package org.pinion.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.List;

/** CPU-time measurement of one piece of work, as bench/Sources/pinion-bench/Measure.swift does for Swift. */
final class Measure {
    private static final com.sun.management.OperatingSystemMXBean OS = operatingSystem();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    /** The work being timed; returns a value so that the JIT cannot drop it. */
    interface Work {
        Object run() throws Exception;
    }

    /** Keeps results reachable so that no timed work is dead code. */
    static volatile Object sink;

    private Measure() {}

    private static com.sun.management.OperatingSystemMXBean operatingSystem() {
        java.lang.management.OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
        if (!(bean instanceof com.sun.management.OperatingSystemMXBean)) {
            throw new IllegalStateException("this JVM does not report process CPU time");
        }
        return (com.sun.management.OperatingSystemMXBean) bean;
    }

    /**
     * CPU time of the whole JVM process in nanoseconds (CLOCK_PROCESS_CPUTIME_ID): the measuring
     * thread plus the garbage collector's and the JIT compiler's threads, whose work an allocation-heavy
     * parse causes; time the scheduler gives to other processes is not counted. JDK 17 reads it with
     * times(2) on Linux: its granularity is a clock tick (10 ms).
     */
    static long processCpuNanoseconds() { return OS.getProcessCpuTime(); }

    /** CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID), for comparison. */
    static long threadCpuNanoseconds() { return THREADS.getCurrentThreadCpuTime(); }

    /** Milliseconds the JIT compilers have spent so far, or -1 when the JVM does not say. */
    static long jitMilliseconds() { return JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : -1; }

    /** One timing: process and thread CPU nanoseconds per call. */
    static final class PerCall {
        final double processNs;
        final double threadNs;
        final long calls;

        PerCall(double processNs, double threadNs, long calls) {
            this.processNs = processNs;
            this.threadNs = threadNs;
            this.calls = calls;
        }
    }

    /**
     * Calls {@code work} until at least {@code minimumNs} of process CPU time and {@code minimumCalls}
     * calls have passed.
     *
     * @return CPU nanoseconds per call
     * @throws Exception what the work throws (a broken fixture stops the benchmark)
     */
    static PerCall perCall(long minimumNs, int minimumCalls, Work work) throws Exception {
        long calls = 0;
        long processStart = processCpuNanoseconds();
        long threadStart = threadCpuNanoseconds();
        long elapsed;
        do {
            sink = work.run();
            calls++;
            elapsed = processCpuNanoseconds() - processStart;
        } while (elapsed < minimumNs || calls < minimumCalls);
        long threadElapsed = threadCpuNanoseconds() - threadStart;
        return new PerCall((double) elapsed / calls, (double) threadElapsed / calls, calls);
    }

    /** @param values at least one value @return the median (mean of the middle two for an even count) */
    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        if (sorted.length == 0) return Double.NaN;
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
