// `pinion key note-vkey`: the C2SP verifier key string of a log or witness key, for other C2SP tools.

import PinionCore
import PinionCrypto

struct NoteVkeyCommand: Command {
    static let path = ["key", "note-vkey"]
    static let summary = "print the C2SP note verifier key string of a log or witness key"
    static let options: [OptionSpec] = [.value("name"), .value("type")]
    static let help = """
        usage: pinion key note-vkey K.pub --name N --type log|witness

        Prints the C2SP signed-note verifier key string of the Ed25519 public key in K.pub:
        N+KEYHASH+base64(TYPE || public key), where KEYHASH is the first 4 bytes of
        SHA-256(N || 0x0A || TYPE || public key) in hex and TYPE is 0x01 for a log key
        (signed-note Ed25519; N is the log's origin) or 0x04 for a witness key
        (tlog-cosignature/v1; N is the witness's name). Roots list these strings in their
        `log` member (docs/DESIGN.md §12); Go's golang.org/x/mod/sumdb/note reads type 0x01.

        options:
          --name N              the key name: the log's origin, or the witness's name
          --type log|witness    0x01 (log) or 0x04 (witness cosignature/v1)

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let file = try arguments.positional(["K.pub"])[0]
        let name = try arguments.required("name")
        let type: NoteKeyType
        switch try arguments.required("type") {
        case "log": type = .ed25519
        case "witness": type = .cosignatureV1
        case let other: throw CLIError.usage("--type \"\(other)\": expected log or witness")
        }
        context.print(
            try RootLogOptions.verifierKey(file, name: name, type: type, option: "name / K.pub").text)
    }
}
