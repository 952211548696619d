// The CLI's one mapping of library error categories to exit codes 1/2/3 (docs/DESIGN.md §11), per category and per library error type.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// An error of a given category, standing for a library error type the CLI has never seen.
private struct SomeLibraryError: CategorizedError {
    let category: PinionErrorCategory
    var description: String { "some library error (\(category.rawValue))" }
}

private struct UncategorizedError: Error {}

@Suite struct ErrorCategoryExitCodeTests {
    @Test func eachCategoryHasItsExitCodeAndStatusFourIsNoCategorys() throws {
        #expect(ExitCode.of(.refusal) == 1)
        #expect(ExitCode.of(.usage) == 2)
        #expect(ExitCode.of(.io) == 3)
        let codes = Set(PinionErrorCategory.allCases.map(ExitCode.of))
        #expect(codes == [1, 2, 3])
        #expect(!codes.contains(ExitCode.success))
        #expect(!codes.contains(4))  // pinion status's warning stays its own
    }

    @Test func anyCategorizedErrorMapsByItsCategoryWithItsMessage() throws {
        for category in PinionErrorCategory.allCases {
            let mapped = CLIError.from(SomeLibraryError(category: category))
            #expect(mapped.exitCode == ExitCode.of(category))
            #expect(mapped.message == "some library error (\(category.rawValue))")
        }
        // Errors outside the protocol are failures; a CLIError is kept as it is.
        #expect(CLIError.from(UncategorizedError()).exitCode == ExitCode.failure)
        let given = CLIError(exitCode: 4, "warning")
        #expect(CLIError.from(given) == given)
    }

    @Test func libraryErrorsOfEveryModuleMapAsTheirCategorySays() throws {
        let cases: [(any CategorizedError, Int32)] = [
            (KeyFileError.io(path: "k", operation: "read", errno: EIO), 3),
            (KeyFileError.publicKeyFileGiven(path: "k.pub"), 2),
            (KeyFileError.wrongPassphrase(path: "k"), 1),
            (PassphraseError.io(path: "p", operation: "open", errno: ENOENT), 3),
            (PassphraseError.mismatch, 2),
            (SPKIError.unreadable(file: "c.pem", errno: EACCES), 3),
            (SPKIError.unrecognized(file: "c.pem"), 1),
            (PKCS11Error.moduleLoad(path: "m.so", detail: "no such file"), 3),
            (PKCS11Error.noModule, 2),
            (PKCS11Error.badSignature(uri: "pkcs11:object=k"), 1),
            (TLSProbeError.invalidHost("a b"), 2),
            (TLSProbeError.connectionRefused(host: "127.0.0.1", port: 1), 3),
            (PublishFileError.io(path: "t", what: "write", reason: "ENOSPC"), 3),
            (PublishFileError.exists(path: "t"), 1),
            (HTTPSError.invalidURL(url: "x", reason: "no scheme"), 2),
            (HTTPSError.connectionRefused(host: "h", port: 443), 3),
            (HTTPSError.caFileUnreadable(path: "ca.pem", detail: "missing"), 3),
            (HTTPSError.pinningRefused(host: "h", port: 443, reason: "no pin"), 1),
            (HTTPResponseParseError.malformed("bad"), 3),
            (TreeSourceError.io(file: "index.json", detail: "gone"), 3),
            (TreeSourceError.tooLarge(file: "index.json", limit: 1), 1),
            (TrustError.wrongPayloadKind(expected: .pins, found: .root), 2),
            (CoSigningError.signatureLimit(32), 1),
        ]
        for (error, code) in cases {
            #expect(CLIError.from(error).exitCode == code, "\(error)")
            #expect(CLIError.from(error).message == error.description)
        }
    }

    @Test func commandsExitWithTheCategorysCode() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pinion-categories-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = directory + "/garbage.pem"
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: garbage))
        // SPKIError.unreadable: io.
        #expect(runPinion(["spki", directory + "/missing.pem"]).status == 3)
        // SPKIError.unrecognized: refusal.
        #expect(runPinion(["spki", garbage]).status == 1)
        // A flag the command does not have: usage.
        #expect(runPinion(["spki", "--no-such-flag", garbage]).status == 2)
    }
}
