// Plays the CLI transcripts in Tests/PinionCLITests/testdata/*.txt: each file is one command
// family's refusals and messages, written as a session a user would see (commands, standard
// output, standard error, exit status), so a refusal message reads as documentation and a change
// to one shows as a diff of that file.
//
// A transcript is read line by line:
//
//     # a comment (kept as it is)
//     setup standard-root         a fixture: standard-root, key NAME, standard-manifest
//     $ pinion ARGS...            a command, run in-process at the workspace's fixed time;
//                                 arguments split on spaces, "double quotes" group, @name is
//                                 the workspace file name
//     1> text                     one line of the command's standard output
//     2> text                     one line of its standard error
//     exit N                      its exit status (every command states one)
//     exists NAME / absent NAME   a workspace file must exist / must not exist
//     -- NAME --                  from here to the next such line or the end: the text of a
//                                 workspace file written before the first command; NAME
//                                 may name folders (tree/README), which are made
//
// Output is compared whole, after three normalisations: the workspace's path reads `$WORK`,
// runs of 64 hexadecimal digits (key ids and digests of keys made fresh for each run) read
// `<hex64>`, and 88 characters of padded base64 (an Ed25519 signature by such a key) read
// `<sig88>`. With PINION_UPDATE_TRANSCRIPTS=1 the runner rewrites each file with what the
// commands printed instead of failing, for a reviewer to read as a diff.

import Foundation
import PinionTestSupport
import Testing

/// The folder of the transcripts.
private let transcriptFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("testdata")

/// One parsed transcript file.
struct Transcript {
    /// One command and what it must print.
    struct Step {
        var arguments: [String]
        var out: [String] = []
        var err: [String] = []
        var exit: Int32?
        var checks: [(exists: Bool, name: String)] = []
    }

    /// Lines before the first command (comments and set-up), kept for rewriting.
    var preamble: [String] = []
    var fixtures: [[String]] = []
    var steps: [Step] = []
    var files: [(name: String, text: String)] = []

    /// Why a transcript file cannot be read.
    struct SyntaxError: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    init(text: String) throws {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var index = 0
        var fileName: String?
        var fileLines: [String] = []
        func closeFile() {
            if let name = fileName {
                files.append((name, fileLines.isEmpty ? "" : fileLines.joined(separator: "\n") + "\n"))
            }
            fileLines = []
        }
        while index < lines.count {
            let line = lines[index]
            index += 1
            if line.hasPrefix("-- ") && line.hasSuffix(" --") && line.count > 6 {
                closeFile()
                fileName = String(line.dropFirst(3).dropLast(3))
                continue
            }
            if fileName != nil {
                fileLines.append(line)
                continue
            }
            if line.hasPrefix("$ pinion ") || line == "$ pinion" {
                steps.append(Step(arguments: try Transcript.split(String(line.dropFirst(8)), line: index)))
                continue
            }
            if steps.isEmpty {
                preamble.append(line)
                if line.hasPrefix("setup ") {
                    fixtures.append(line.dropFirst(6).split(separator: " ").map(String.init))
                } else if !(line.hasPrefix("#") || line.isEmpty) {
                    throw SyntaxError(line: index, reason: "expected a comment, setup or a command: \(line)")
                }
                continue
            }
            if line.hasPrefix("1> ") || line == "1>" {
                steps[steps.count - 1].out.append(String(line.dropFirst(line == "1>" ? 2 : 3)))
            } else if line.hasPrefix("2> ") || line == "2>" {
                steps[steps.count - 1].err.append(String(line.dropFirst(line == "2>" ? 2 : 3)))
            } else if line.hasPrefix("exit "), let status = Int32(line.dropFirst(5)) {
                steps[steps.count - 1].exit = status
            } else if line.hasPrefix("exists ") {
                steps[steps.count - 1].checks.append((true, String(line.dropFirst(7))))
            } else if line.hasPrefix("absent ") {
                steps[steps.count - 1].checks.append((false, String(line.dropFirst(7))))
            } else if line.isEmpty || line.hasPrefix("#") {
                continue
            } else {
                throw SyntaxError(line: index, reason: "not a transcript line: \(line)")
            }
        }
        closeFile()
        for (position, step) in steps.enumerated() where step.exit == nil {
            throw SyntaxError(line: 0, reason: "command \(position + 1) (\(step.arguments)) states no exit status")
        }
    }

    /// Splits a command line on spaces; "double quotes" group words (no escapes).
    static func split(_ text: String, line: Int) throws -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var started = false
        for character in text {
            if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if quoted { throw SyntaxError(line: line, reason: "unterminated quote") }
        if started { words.append(current) }
        return words
    }

    /// The transcript text with each step's expectations replaced by `actual`.
    func rewritten(with actual: [CommandResult], normalise: (String) -> [String]) -> String {
        var lines = preamble
        for (step, result) in zip(steps, actual) {
            let words = step.arguments.map { $0.contains(" ") ? "\"\($0)\"" : $0 }
            lines.append((["$ pinion"] + words).joined(separator: " "))
            lines += normalise(result.out).map { $0.isEmpty ? "1>" : "1> " + $0 }
            lines += normalise(result.err).map { $0.isEmpty ? "2>" : "2> " + $0 }
            lines.append("exit \(result.status)")
            for check in step.checks { lines.append((check.exists ? "exists " : "absent ") + check.name) }
            lines.append("")
        }
        for file in files {
            lines.append("-- \(file.name) --")
            var text = file.text
            if text.hasSuffix("\n") { text.removeLast() }
            if !file.text.isEmpty { lines.append(text) }
        }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }
}

@Suite struct TranscriptTests {
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: transcriptFolder.path)) ?? []
        return names.filter { $0.hasSuffix(".txt") }.sorted()
    }()

    @Test func everyCommandFamilyHasATranscript() {
        #expect(
            TranscriptTests.files.count >= 6, "transcripts found in \(transcriptFolder.path): \(TranscriptTests.files)")
    }

    @Test(arguments: TranscriptTests.files)
    func transcript(_ name: String) throws {
        let url = transcriptFolder.appendingPathComponent(name)
        let transcript = try Transcript(text: String(contentsOf: url, encoding: .utf8))
        let w = try Workspace(prefix: "transcript")
        for file in transcript.files {
            let folder = URL(fileURLWithPath: w.path(file.name)).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try w.write(file.name, file.text)
        }
        for fixture in transcript.fixtures {
            switch (fixture.first, fixture.count) {
            case ("standard-root", 1): w.standardRoot()
            case ("standard-manifest", 1): w.standardManifest()
            case ("key", 2): w.quickKey(fixture[1])
            default: Issue.record("\(name): unknown setup \(fixture)")
            }
        }
        func normalise(_ text: String) -> [String] {
            var text = text.replacingOccurrences(of: w.directory.path, with: "$WORK")
            text = text.replacingOccurrences(of: #"[0-9a-f]{64}"#, with: "<hex64>", options: .regularExpression)
            text = text.replacingOccurrences(
                of: #"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])"#, with: "<sig88>",
                options: .regularExpression)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }
        let update = ProcessInfo.processInfo.environment["PINION_UPDATE_TRANSCRIPTS"] == "1"
        var results: [CommandResult] = []
        for step in transcript.steps {
            let result = w.run(step.arguments)
            results.append(result)
            if update { continue }
            let command = "\(name): pinion \(step.arguments.joined(separator: " "))"
            #expect(result.status == step.exit, "\(command): exit \(result.status)\n\(result.err)")
            #expect(normalise(result.out) == step.out, "\(command): standard output")
            #expect(normalise(result.err) == step.err, "\(command): standard error")
            for check in step.checks {
                #expect(
                    w.exists(check.name) == check.exists,
                    "\(command): \(check.name) should \(check.exists ? "exist" : "be absent")")
            }
        }
        if update {
            try transcript.rewritten(with: results, normalise: normalise).write(
                to: url, atomically: true, encoding: .utf8)
        }
    }

    @Test func aTranscriptThatDiffersFails() throws {
        // The runner's own parser: expectations, exit status and file sections are read as written.
        let transcript = try Transcript(
            text: """
                # x
                setup key k
                $ pinion key id "@k 2.pub"
                1> a
                2> b
                exit 1
                absent out.json

                -- p.json --
                {}
                """)
        #expect(transcript.fixtures == [["key", "k"]])
        #expect(transcript.steps.count == 1)
        #expect(transcript.steps[0].arguments == ["key", "id", "@k 2.pub"])
        #expect(transcript.steps[0].out == ["a"])
        #expect(transcript.steps[0].err == ["b"])
        #expect(transcript.steps[0].exit == 1)
        #expect(transcript.files.map(\.name) == ["p.json"])
        #expect(throws: Transcript.SyntaxError.self) { try Transcript(text: "$ pinion key id\n1> a\n") }
        #expect(throws: Transcript.SyntaxError.self) { try Transcript(text: "garbage\n") }
    }
}
