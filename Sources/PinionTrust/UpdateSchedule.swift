// When the updater polls next: the configured interval or the server's Cache-Control
// max-age within bounds, jittered; exponential back-off with a cap after failures.

import Foundation

/// Polling and back-off settings (all in seconds).
public struct UpdateSchedule: Sendable, Equatable {
    /// Time between successful refreshes when the server gives no usable max-age.
    public var interval: Double
    /// Fraction of the delay added or removed at random (0 ... 0.5), so that a fleet of
    /// clients does not poll in step.
    public var jitter: Double
    /// Bounds on a delay taken from Cache-Control max-age.
    public var minimumInterval: Double
    public var maximumInterval: Double
    /// First delay after a failure; doubles with each consecutive failure up to the cap.
    public var initialBackoff: Double
    public var maximumBackoff: Double

    public init(
        interval: Double = 3600, jitter: Double = 0.1, minimumInterval: Double = 60, maximumInterval: Double = 86_400,
        initialBackoff: Double = 30, maximumBackoff: Double = 3600
    ) {
        // Clamped so that no setting (0, negative, NaN) makes the poller hammer the publisher.
        let finite = { (value: Double, fallback: Double) in value.isFinite ? value : fallback }
        self.jitter = min(max(finite(jitter, 0.1), 0), 0.5)
        self.minimumInterval = max(finite(minimumInterval, 60), 1)
        self.maximumInterval = max(finite(maximumInterval, 86_400), self.minimumInterval)
        self.interval = min(max(finite(interval, 3600), self.minimumInterval), self.maximumInterval)
        self.initialBackoff = max(finite(initialBackoff, 30), 1)
        self.maximumBackoff = max(finite(maximumBackoff, 3600), self.initialBackoff)
    }

    /// The delay before the next refresh.
    ///
    /// - Parameters:
    ///   - consecutiveFailures: failed refreshes in a row (0 after a success).
    ///   - maxAge: the last response's Cache-Control max-age, if any (seconds).
    ///   - random: a number in 0 ... 1 (injected so tests are deterministic).
    /// - Returns: seconds, never negative.
    public func delay(consecutiveFailures: Int, maxAge: Double?, random: Double) -> Double {
        let base: Double
        if consecutiveFailures > 0 {
            let exponent = Double(min(consecutiveFailures - 1, 62))
            base = min(initialBackoff * pow2(exponent), maximumBackoff)
        } else if let maxAge {
            base = min(max(maxAge, minimumInterval), maximumInterval)
        } else {
            base = interval
        }
        let factor = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
        return max(base * factor, 0)
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            value *= 2
            remaining -= 1
        }
        return value
    }
}

/// The parts of an HTTP Cache-Control header the updater uses (RFC 9111 §5.2).
public enum CacheControl {
    /// The `max-age` of a response's Cache-Control value, in seconds; nil when absent,
    /// malformed, or when `no-store`/`no-cache` forbid reuse (then the configured interval applies).
    public static func maxAge(_ value: String?) -> Double? {
        guard let value else { return nil }
        var maxAge: Double?
        for directive in value.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard let name = parts.first else { continue }
            if name == "no-store" || name == "no-cache" { return nil }
            if name == "max-age", parts.count == 2 {
                let number = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }), let seconds = Double(number)
                else { return nil }
                maxAge = seconds
            }
        }
        return maxAge
    }
}
