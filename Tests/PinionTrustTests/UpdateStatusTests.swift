// The one status mapping of the update channel (docs/ARCHITECTURE.md, the seam's table): every
// cell, and the refusals that come before any status.

import PinionCore
import PinionTrust
import Testing

@Suite struct UpdateStatusTests {
    let body: [UInt8] = Array("{}".utf8)

    func classify(_ file: TreeFile, _ status: Int, ifNoneMatch: String? = nil, maxBytes: Int? = nil)
        -> UpdateFetchResult
    {
        UpdateStatus.classify(
            UpdateRequest(file: file, ifNoneMatch: ifNoneMatch, maxBytes: maxBytes),
            .success(UpdateAnswer(status: status, etag: "\"e\"", body: status == 200 ? body : [])))
    }

    @Test func twoHundredIsTheDocumentWithTheManifestsETagOnly() {
        #expect(classify(.root(2), 200) == .document(body, etag: nil))
        #expect(classify(.manifest, 200) == .document(body, etag: "\"e\""))
        #expect(classify(.manifestProof, 200) == .document(body, etag: nil))
    }

    @Test func aBodyOverTheLimitIsTooLarge() {
        #expect(classify(.manifestProof, 200, maxBytes: 1) == .tooLarge(limit: 1))
        #expect(classify(.manifestProof, 200, maxBytes: 2) == .document(body, etag: nil))
    }

    @Test func notModifiedOnlyAnswersAConditionalManifestRequest() {
        #expect(classify(.manifest, 304, ifNoneMatch: "\"e\"") == .notModified)
        guard case .refused(let reason) = classify(.manifest, 304) else {
            Issue.record("an unsolicited 304 was not refused")
            return
        }
        #expect(reason.contains("no If-None-Match"))
        for file in [TreeFile.root(2), .manifestProof] {
            guard case .refused = classify(file, 304) else {
                Issue.record("a 304 to \(file) was not refused")
                continue
            }
        }
    }

    @Test(arguments: [404, 410])
    func goneOrMissingEndsTheWalkAndMeansNoProofButFailsTheManifest(status: Int) {
        #expect(classify(.root(7), status) == .absent)
        #expect(classify(.manifestProof, status) == .absent)
        #expect(classify(.manifest, status) == .failed("HTTP \(status)"))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectTheTransportReturnedIsRefusedForEveryFile(status: Int) {
        for file in [TreeFile.root(2), .manifest, .manifestProof] {
            guard case .refused(let reason) = classify(file, status, ifNoneMatch: "\"e\"") else {
                Issue.record("HTTP \(status) on \(file) was not refused")
                continue
            }
            #expect(reason.contains("\(status)"))
        }
    }

    @Test(arguments: [400, 401, 403, 418, 429, 500, 502, 503, 100, 204, 206])
    func everyOtherStatusFailsEveryFile(status: Int) {
        for file in [TreeFile.root(2), .manifest, .manifestProof] {
            #expect(classify(file, status, ifNoneMatch: "\"e\"") == .failed("HTTP \(status)"), "\(file)")
        }
    }

    @Test func transportFailuresPassThroughUnchanged() {
        let request = UpdateRequest(file: .manifest)
        #expect(UpdateStatus.classify(request, .failure(.failed("timed out"))) == .failed("timed out"))
        #expect(UpdateStatus.classify(request, .failure(.refused("redirect"))) == .refused("redirect"))
        #expect(UpdateStatus.classify(request, .failure(.tooLarge(limit: 9))) == .tooLarge(limit: 9))
    }
}
