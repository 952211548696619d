// `pinion spki`: SPKI SHA-256 pins (RFC 7469 §2.4) of certificates, CSRs, keys and live servers.

import PinionCore
import PinionCrypto
import PinionSystem

struct SPKICommand: Command {
    static let path = ["spki"]
    static let summary = "SPKI SHA-256 pins of certificates, CSRs, keys or a live server"
    static let options: [OptionSpec] = [
        .value("format"), .value("connect"), .value("servername"), .value("cafile"), .value("timeout"),
        .value("passphrase-file"),
    ]
    static let help = """
        usage: pinion spki [--format sha256|base64|hpkp|hex] FILE...
               pinion spki --connect HOST:PORT [--servername NAME] [--cafile F] [--timeout SECONDS]

        Prints the SPKI SHA-256 pin (RFC 7469 §2.4) of every certificate in a PEM bundle or
        DER file, of a certificate signing request (the backup pin of a certificate not yet
        issued), of a public key and of a private key (RSA, EC P-256/P-384, Ed25519).
        One line per object: the pin, two spaces, the subject or the object kind (after
        `FILE: ` when several files are given).

        With --connect, connects over TLS (1.2 or later, SNI, normal X.509 and hostname
        validation against the system trust store or --cafile) and prints the pins of the
        chain the server presents; `*` marks certificates on the verified path, `+` a
        verified-path certificate the server did not send (a trust anchor from the store).
        Exit code 1 when the chain does not verify (the chain is still printed).

        options:
          --format F            sha256 (default: sha256/<base64>), base64, hpkp (pin-sha256="..."), hex
          --connect HOST:PORT   read the chain of a live server ([IPv6]:PORT for IPv6 literals)
          --servername NAME     SNI and hostname to verify (default: HOST)
          --cafile F            trust anchors in PEM instead of the system store
          --timeout SECONDS     connect and handshake timeout (default 10)
          --passphrase-file F   passphrase of encrypted private keys

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let formatText = arguments.value("format") ?? "sha256"
        guard let format = PinFormat(rawValue: formatText) else {
            throw CLIError.usage("--format must be sha256, base64, hpkp or hex, got \"\(formatText)\"")
        }
        if let target = arguments.value("connect") {
            guard arguments.positional.isEmpty else {
                throw CLIError.usage("--connect takes no FILE arguments")
            }
            try connect(target, arguments: arguments, format: format, context: context)
            return
        }
        for option in ["servername", "cafile", "timeout"] where arguments.value(option) != nil {
            throw CLIError.usage("--\(option) is only used with --connect")
        }
        guard !arguments.positional.isEmpty else {
            throw CLIError.usage("missing FILE (or --connect HOST:PORT)")
        }
        let passphrase = PassphraseOnce(file: arguments.value("passphrase-file"))
        for file in arguments.positional {
            let objects = try SPKIReader.objects(inFile: file, passphrase: { try passphrase.get() })
            for object in objects {
                // With several files, each line says which file it came from.
                let origin = arguments.positional.count > 1 ? file + ": " : ""
                context.print(format.render(object.spkiSHA256) + "  " + origin + object.label)
            }
        }
    }

    static func connect(
        _ target: String, arguments: ParsedArguments, format: PinFormat, context: CLIContext
    ) throws {
        let (host, port) = try splitHostPort(target)
        var timeout = 10.0
        if let text = arguments.value("timeout") { timeout = try ClientSetup.timeoutSeconds(text, option: "timeout") }
        let result = try TLSProbe.chain(
            host: host, port: port, serverName: arguments.value("servername"),
            caFile: arguments.value("cafile"),
            timeout: timeout)
        for entry in result.entries {
            let mark = entry.onVerifiedPath ? (entry.presented ? "*" : "+") : " "
            context.print("\(mark) " + format.render(entry.object.spkiSHA256) + "  " + entry.object.label)
        }
        context.print("(\(result.protocolVersion); * on the verified path, + verified path only)")
        if !result.verified {
            throw CLIError.failure(
                "\(target): the chain does not verify: \(result.verifyError ?? "unknown error"); pins above are unverified"
            )
        }
    }

    /// `host:port`, `[v6]:port`.
    /// `HOST:PORT` or `[IPv6]:PORT`; `option` names the flag or argument in errors. Port 0
    /// ("any free port") only where `allowPortZero` (a server's listen address).
    static func splitHostPort(_ text: String, option: String = "--connect", allowPortZero: Bool = false)
        throws(CLIError) -> (String, UInt16)
    {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":")
            else {
                throw .usage("\(option): \"\(text)\" is not HOST:PORT or ADDRESS:PORT (IPv6 in brackets: [::1]:PORT)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            // More than one colon without brackets: an IPv6 literal or a typo, never guessed.
            guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else {
                throw .usage("\(option): \"\(text)\" is not HOST:PORT or ADDRESS:PORT (IPv6 in brackets: [::1]:PORT)")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), portText.count <= 5,
            let port = UInt16(portText), port > 0 || allowPortZero
        else {
            throw .usage("\(option): \"\(text)\" is not HOST:PORT with a port in \(allowPortZero ? 0 : 1)...65535")
        }
        return (String(host), port)
    }
}
