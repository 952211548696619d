// Typed errors of the importers, exporters and lint: a stable code, where, and why.

/// Why an import, an export or a lint input was refused. Nothing is written when one is
/// thrown.
public struct InteropError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Stable codes; new ones may be added.
    public enum Code: String, Sendable, Equatable {
        /// The input is larger than the limit.
        case tooLarge
        /// The bytes are not UTF-8 (or declare another encoding).
        case notUTF8
        /// A DTD or entity declaration (external entities and entity expansion are refused).
        case documentTypeRefused
        /// The XML or property list does not parse.
        case malformed
        /// Elements or containers nest deeper than the limit.
        case tooDeep
        /// More elements or entries than the limit.
        case tooManyElements
        /// The document's root is not what the format requires.
        case wrongRoot
        /// A value has the wrong type (for example a string where a Boolean belongs).
        case wrongType
        /// A value that the target platform cannot parse (a bad Boolean, a bad pin).
        case invalidValue
        /// The same domain is configured twice.
        case duplicateDomain
        /// A manifest domain cannot be expressed in the target format.
        case notRepresentable
        /// The role (leaf or CA identity) of a pin is unknown (apple-plist export).
        case unknownRole
    }

    /// The stable code.
    public var code: Code
    /// Where: `line 12` for XML, a key path for plists, `domains[2]` for manifests; may be empty.
    public var location: String
    /// What is wrong and, where it helps, what to do.
    public var message: String

    /// - Parameters:
    ///   - code: the stable code.
    ///   - location: where in the input (empty when the whole input is meant).
    ///   - message: the rule that failed.
    public init(_ code: Code, at location: String = "", _ message: String) {
        self.code = code
        self.location = location
        self.message = message
    }

    /// `location: message`, or the message alone.
    public var description: String { location.isEmpty ? message : "\(location): \(message)" }
}
