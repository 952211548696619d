// Command-line flag parsing for `pinion` (no outside packages can be fetched here, so
// swift-argument-parser is not available; this is the small subset the commands need).

/// How one option is spelled and whether it takes a value.
struct OptionSpec {
    let name: String
    let short: Character?
    let takesValue: Bool
    let repeatable: Bool

    static func flag(_ name: String) -> OptionSpec {
        OptionSpec(name: name, short: nil, takesValue: false, repeatable: false)
    }

    static func value(_ name: String, short: Character? = nil, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: short, takesValue: true, repeatable: repeatable)
    }
}

/// Parsed arguments of one command: option values and positional arguments.
struct ParsedArguments {
    private var values: [String: [String]] = [:]
    private var flags = Set<String>()
    var positional: [String] = []
    var helpRequested = false

    /// Parses `arguments` against `specs`. `--name value`, `--name=value`, `-o value`;
    /// `--` ends options; `-h`/`--help` sets `helpRequested`.
    ///
    /// - Throws: `CLIError.usage` for unknown options, missing values, repeated
    ///   non-repeatable options and values given to flags.
    init(_ arguments: [String], specs: [OptionSpec]) throws(CLIError) {
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                helpRequested = true
                continue
            }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
            } else {
                guard argument.count == 2, let short = argument.last,
                    let spec = specs.first(where: { $0.short == short })
                else { throw .usage("unknown option \(argument)") }
                name = spec.name
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw .usage("unknown option --\(name)")
            }
            if spec.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw .usage("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if !spec.repeatable, values[name] != nil { throw .usage("--\(name) given more than once") }
                values[name, default: []].append(value)
            } else {
                if inlineValue != nil { throw .usage("--\(name) takes no value") }
                if flags.contains(name) { throw .usage("--\(name) given more than once") }
                flags.insert(name)
            }
        }
    }

    func value(_ name: String) -> String? { values[name]?.first }
    func values(_ name: String) -> [String] { values[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func required(_ name: String) throws(CLIError) -> String {
        guard let value = value(name) else { throw .usage("--\(name) is required") }
        return value
    }

    /// Exactly `count` positional arguments, named in the error when missing.
    func positional(_ names: [String]) throws(CLIError) -> [String] {
        guard positional.count == names.count else {
            if positional.count < names.count {
                throw .usage("missing \(names[positional.count...].joined(separator: " "))")
            }
            throw .usage("unexpected argument \(positional[names.count])")
        }
        return positional
    }

    /// A positive integer option.
    func integer(_ name: String, in range: ClosedRange<Int64>) throws(CLIError) -> Int64? {
        guard let text = value(name) else { return nil }
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }), let number = Int64(text) else {
            throw .usage("--\(name) must be a whole number, got \"\(text)\"")
        }
        guard range.contains(number) else {
            throw .usage("--\(name) must be in \(range.lowerBound)...\(range.upperBound), got \(number)")
        }
        return number
    }
}
