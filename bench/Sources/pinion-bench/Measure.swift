// Timing helpers: thread CPU time (robust on a shared machine), medians, JSON output.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds of CPU time used by the calling thread (CLOCK_THREAD_CPUTIME_ID): time the
/// scheduler gives to other processes on a shared machine is not counted.
func threadCPUNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Nanoseconds on the monotonic clock (wall time).
func wallNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// CPU nanoseconds per call of `body`, over at least `minimumNanoseconds` and
/// `minimumIterations` calls.
func cpuNanosecondsPerCall(
    minimumNanoseconds: UInt64 = 200_000_000, minimumIterations: Int = 3, _ body: () -> Void
) -> Double {
    var iterations = 0
    let start = threadCPUNanoseconds()
    var elapsed: UInt64 = 0
    repeat {
        body()
        iterations += 1
        elapsed = threadCPUNanoseconds() - start
    } while elapsed < minimumNanoseconds || iterations < minimumIterations
    return Double(elapsed) / Double(iterations)
}

/// A benchmark result line: printed as one JSON object for `bench/report.py`.
struct ResultLine {
    var fields: [String: Any] = [:]

    subscript(key: String) -> Any? {
        get { fields[key] }
        set { fields[key] = newValue }
    }

    func print() {
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else {
            FileHandle.standardError.write("cannot encode result\n".data(using: .utf8)!)
            exit(1)
        }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}

/// Stops the benchmark with a message (bad input or a broken fixture).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("pinion-bench: \(message)\n".utf8))
    exit(1)
}

func readFile(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    return [UInt8](data)
}

func writeFile(_ path: String, _ bytes: [UInt8]) {
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fail("cannot write \(path)") }
}
