// Fuzz target 1: the strict JSON parser and every document parser built on it
// (manifest, root and index payloads, the client's baseline file).
//
// Properties checked besides "no crash": a parsed value written by JSONWriter parses
// back to the same value and the same bytes; a parsed payload re-serialised parses back
// to an equal payload (the CLI edits payloads this way, the baseline parser relies on it).

import PinionCore
import PinionCrypto
import PinionTrust

private let limits = Limits.standard
private let crypto = CryptoProvider.sodium

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let value: JSONValue
    do {
        value = try StrictJSONParser.parse(bytes, limits: limits.json)
    } catch {
        _ = error.description  // the message the CLI prints (escaped path and rule)
        return 0
    }
    let written = JSONWriter.write(value)
    do {
        let reparsed = try StrictJSONParser.parse(written, limits: limits.json)
        expect(reparsed == value, "JSONWriter output parses to a different value")
        expect(JSONWriter.write(reparsed) == written, "JSONWriter is not deterministic")
    } catch {
        expect(false, "JSONWriter output is refused by the parser: \(error)")
    }

    if let manifest = try? ManifestPayload.parse(bytes, limits: limits) {
        let again = try? ManifestPayload.parse(manifest.serialized(), limits: limits)
        expect(again == manifest, "a manifest payload does not survive serialized() and parse")
        _ = manifest.lifetime
    }
    if let root = try? RootPayload.parse(bytes, limits: limits, crypto: crypto) {
        let again = try? RootPayload.parse(root.serialized(), limits: limits, crypto: crypto)
        expect(again == root, "a root payload does not survive serialized() and parse")
    }
    if let index = try? PublishedIndex.parse(bytes, limits: limits) {
        let again = try? PublishedIndex.parse(index.serialized(), limits: limits)
        expect(again == index, "an index does not survive serialized() and parse")
    }
    do {
        let baseline = try Baseline.parse(bytes, limits: limits)
        for domain in baseline.domains {
            expect((try? HostName.validate(domain.name)) != nil, "baseline accepted host \(domain.name)")
        }
        _ = MergedPolicy(baseline.domains)
    } catch {
        _ = error.description
    }
    return 0
}
