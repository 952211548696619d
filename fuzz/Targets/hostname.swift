// Fuzz target 5: names in documents and at connection time: HostName.validate, the
// client's host normalisation and subdomain lookup (MergedPolicy), Scope, Pin, KeyID,
// RFC 3339 times, canonical base64 and the terminal escaping of untrusted text.
//
// Properties: a valid manifest host name is its own normal form (also with one trailing
// dot or in uppercase) and is found by the lookup, its subdomains only on a label
// boundary; pins, times and base64 round-trip to the exact text; escaped text holds no
// control or format character.

import PinionCore
import PinionTrust

private let somePin = (try? Pin(digest: [UInt8](repeating: 7, count: 32)))!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostName(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    checkHostName(text)
    _ = MergedPolicy.normalizedHost(text)
    _ = try? Scope.validate(text)
    if (try? KeyID.validate(text)) != nil {
        expect(Hex.decodeLowercase(text)?.count == 32, "key id \(text) is not 32 bytes of hex")
    }
    if let pin = try? Pin(text) { expect(pin.description == text, "pin \(text) printed as \(pin)") }
    if let time = try? Timestamp(rfc3339: text) {
        expect(time.description == text, "time \(text) printed as \(time)")
        expect((try? Timestamp(rfc3339: time.description)) == time, "time \(text) does not round-trip")
    }
    if let decoded = Base64.decodeCanonical(text) {
        expect(Base64.encode(decoded) == text, "base64 \(text) is not canonical")
    }
    let escaped = TerminalText.escape(text)
    for scalar in escaped.unicodeScalars {
        expect(
            scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value)
                && scalar.properties.generalCategory != .format,
            "escaped text still holds U+\(String(scalar.value, radix: 16))")
    }
    return 0
}

private func checkHostName(_ name: String) {
    guard (try? HostName.validate(name)) != nil else { return }
    expect(MergedPolicy.normalizedHost(name) == name, "valid host \(name) is not its own normal form")
    expect(MergedPolicy.normalizedHost(name + ".") == name, "\(name). does not normalise to \(name)")
    expect(MergedPolicy.normalizedHost(name.uppercased()) == name, "\(name.uppercased()) does not normalise")
    let exact = MergedPolicy([PinnedDomain(name: name, pins: [somePin])])
    expect(exact.hostPolicy(for: name)?.entry.name == name, "\(name) is not found in its own policy")
    expect(exact.hostPolicy(for: "a." + name) == nil, "a.\(name) matched an entry without includeSubdomains")
    let parent = MergedPolicy([PinnedDomain(name: name, includeSubdomains: true, pins: [somePin])])
    expect(parent.hostPolicy(for: "a." + name)?.entry.name == name, "a.\(name) is not covered by \(name)")
    expect(parent.hostPolicy(for: "a" + name) == nil, "a\(name) matched \(name) off a label boundary")
    if let dot = name.firstIndex(of: ".") {
        let tail = String(name[name.index(after: dot)...])
        expect(parent.hostPolicy(for: tail) == nil, "the parent \(tail) matched the entry \(name)")
    }
}
