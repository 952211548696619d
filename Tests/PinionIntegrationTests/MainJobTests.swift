// The README's main-job command, `scripts/demo`, run end to end against the built
// `pinion`, so that it can never rot.

import Foundation
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct MainJobTests {
    /// `PINION_BIN=.build/debug/pinion bash scripts/demo`, in the workspace's own TMPDIR
    /// (the demo picks free ports on 127.0.0.1, so it can run beside other tests).
    @Test(.timeLimit(.minutes(15))) func theDemoRunsEveryStepAndSucceeds() throws {
        try #require(FileManager.default.isExecutableFile(atPath: pinionExecutable), "no \(pinionExecutable)")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let demo = repository.appendingPathComponent("scripts/demo").path
        let w = try Workspace(prefix: "pinion-main-job")
        // `timeout` signals the demo's whole process group, whose EXIT trap stops its servers.
        let result = try withStopSignalsUnblocked {
            try w.exec(
                "/usr/bin/env", ["timeout", "--kill-after=20", "600", "bash", demo],
                environment: ["PINION_BIN": pinionExecutable, "TMPDIR": w.directory.path])
        }
        let transcript = "exit \(result.status)\n--- stdout\n\(result.out)\n--- stderr\n\(result.err)"
        #expect(result.status == 0, "scripts/demo failed:\n\(transcript)")
        #expect(result.out.contains("\nDEMO OK: "), "no success line:\n\(transcript)")
        #expect(!result.err.contains("DEMO FAILED"), "\(transcript)")
        for step in 1...8 {
            #expect(result.out.contains("== Step \(step)/8: "), "no heading of step \(step):\n\(transcript)")
            #expect(result.out.contains("   ✓ step \(step): "), "step \(step) not checked:\n\(transcript)")
        }
        #expect(result.out.contains("listening on https://127.0.0.1:"), "\(transcript)")
        #expect(result.out.contains("pinion serve: stopped"), "\(transcript)")
        // Step 7: two witnesses cosign, the fork is refused, the target refuses the unlogged manifest.
        #expect(result.out.contains("cosigned by witness-1, witness-2"), "\(transcript)")
        // The attacker's forked publish is stopped by the witnesses' signed evidence of our log.
        #expect(
            result.out.contains(
                "refused as expected (exit 1): the log key signed a checkpoint this log never published"),
            "\(transcript)")
        #expect(result.out.contains("refused as expected (exit 1): an extension we never published"), "\(transcript)")
        #expect(result.out.contains("log reason  log-manifest-not-logged"), "\(transcript)")
        #expect(result.out.contains(": consistent (size 2)"), "the audit checked the witnesses:\n\(transcript)")
        // The EXIT trap removed the demo's temporary directory.
        let left = try FileManager.default.contentsOfDirectory(atPath: w.directory.path)
        #expect(!left.contains { $0.hasPrefix("pinion-demo.") }, "left behind: \(left)")
    }
}

/// Runs `body` with SIGTERM, SIGINT and SIGHUP unblocked on this thread. A child process
/// inherits the signal mask of the thread that starts it, and on a Swift Testing worker
/// thread SIGTERM is blocked: the demo's servers would never see the SIGTERM it sends
/// them (as started from a shell, they do). `exec` is synchronous: no other task runs on
/// this thread before the mask is restored.
private func withStopSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var stopSignals = sigset_t()
    sigemptyset(&stopSignals)
    for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&stopSignals, signal) }
    var saved = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &stopSignals, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    return try body()
}
