// SplitMix64: the deterministic generator of the property tests, so a failure replays from its
// seed. In the light helper module so the portable tests use the same generator.

/// SplitMix64 (Steele, Lea and Flood, 2014): a fixed `state` gives the same sequence on every
/// run and machine. As a `RandomNumberGenerator` it drives the standard library's
/// `random(in:using:)` and `shuffled(using:)`.
public struct SplitMix: RandomNumberGenerator {
    /// The generator's state; the seed to start from.
    public var state: UInt64

    /// - Parameter state: the seed.
    public init(state: UInt64) { self.state = state }

    /// The next 64 bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0; the modulo bias is irrelevant for tests).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A number in `range`, from one `next()` (`range.lowerBound + below(range.count)`).
    public mutating func number(in range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// A coin flip.
    public mutating func flag() -> Bool { next() & 1 == 1 }

    /// `count` bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }

    /// `items` in an order drawn from this generator (Fisher-Yates).
    public mutating func shuffle<T>(_ items: [T]) -> [T] {
        var items = items
        guard items.count > 1 else { return items }
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(index, below(index + 1))
        }
        return items
    }
}
