// Shared by every fuzz target: the libFuzzer input as bytes, and property checks that
// stop the run with a message (libFuzzer records the input as a crash).

#if canImport(Glibc)
    import Glibc
#endif

/// The input of one libFuzzer call as an array.
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Writes a line to standard error.
func report(_ message: String) {
    var line = Array((message + "\n").utf8)
    line.withUnsafeMutableBytes { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}

/// A property of the code under test that must hold for every input; a failure is a
/// finding, reported like a crash (libFuzzer saves the input).
func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        report("fuzz property failed: \(message())")
        abort()
    }
}
