// Fuzz target 3: the root chain walk (RootChain): the input is split at NUL bytes (which
// strict JSON never contains); the first part is the anchor, each later part is appended
// as the next root, stopping at the first refusal, as `pinion verify --root-chain` and the
// client's refresh do.
//
// Each walk runs twice: with libsodium, and with a stand-in verifier that accepts any
// 64-byte signature whose first byte is even, so that mutated roots get past the
// signature thresholds to the version, scope and payload rules.

import PinionCore
import PinionCrypto

private let sodium = CryptoProvider.sodium
private let now = Timestamp(secondsSince1970: 1_796_029_200)  // 2026-11-30T09:00:00Z

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRootChain(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let parts = fuzzInput(data, size).split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    guard let anchor = parts.first else { return 0 }
    for crypto in [sodium, permissiveCrypto] {
        var chain: RootChain
        do {
            chain = try RootChain(anchor: anchor, crypto: crypto)
        } catch {
            _ = error.description
            continue
        }
        for part in parts.dropFirst() {
            let before = chain.newest
            do {
                let root = try chain.append(part, crypto: crypto)
                expect(root.version == before.version + 1, "accepted root \(root.version) after \(before.version)")
                expect(root.payload.scope == before.payload.scope, "accepted a root of another scope")
                expect(
                    root.previousRoleReport.map { $0.valid.count >= before.payload.rootRole.threshold } == true,
                    "accepted a root below the previous root role's threshold")
                expect(
                    root.ownRoleReport.valid.count >= root.payload.rootRole.threshold,
                    "accepted a root below its own root role's threshold")
            } catch {
                _ = error.description
                expect(chain.newest == before, "a refused root changed the chain")
                break
            }
        }
        expect(chain.root(version: chain.newest.version) == chain.newest, "the newest root is not found by version")
        _ = try? chain.checkNewestCurrent(at: now)
    }
    return 0
}
