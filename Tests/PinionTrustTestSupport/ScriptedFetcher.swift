// A scripted publisher for refresh tests: answers each update-channel request from closures,
// as raw HTTP answers, so the tests go through `UpdateStatus.classify` like every platform.
// Depends on PinionCore and PinionTrust only, so the portable tests can use it.

import PinionCore
import PinionTrust

/// What a scripted publisher answers for one file: a raw answer or a transport failure.
public enum Served: Sendable, Equatable {
    /// An answer with this status, ETag and body.
    case answer(UpdateAnswer)
    /// No answer: the fetcher failed or refused.
    case failure(UpdateFetchError)

    /// 200 with `body` (and an ETag).
    public static func found(_ body: [UInt8], etag: String? = nil) -> Served {
        .answer(UpdateAnswer(status: 200, etag: etag, body: body))
    }
    /// A status with no body (404, 410, 304, 500, ...).
    public static func status(_ code: Int) -> Served { .answer(UpdateAnswer(status: code)) }
    /// 404.
    public static var notFound: Served { .status(404) }
    /// 304.
    public static var notModified: Served { .status(304) }
    /// A network failure with this reason.
    public static func failed(_ reason: String) -> Served { .failure(.failed(reason)) }
    /// A refusal of the update channel's own checks.
    public static func refused(_ reason: String) -> Served { .failure(.refused(reason)) }
    /// A body over the request's limit, in bytes.
    public static func tooLarge(limit: Int) -> Served { .failure(.tooLarge(limit: limit)) }
}

/// An `UpdateFetcher` answering from closures: one for `root/N.json`, one for
/// `manifest.json` (given the If-None-Match sent), one for `manifest.proof`. It records every
/// request it was asked.
public final class ScriptedFetcher: UpdateFetcher {
    let root: (Int64) -> Served
    let manifest: (String?) -> Served
    let proof: () -> Served
    /// The requests made so far, in order.
    public private(set) var requests: [UpdateRequest] = []

    /// - Parameters:
    ///   - root: the answer for `root/{version}.json`.
    ///   - manifest: the answer for `manifest.json`, given the ETag sent.
    ///   - proof: the answer for `manifest.proof` (default: 404).
    public init(
        root: @escaping (Int64) -> Served, manifest: @escaping (String?) -> Served,
        proof: @escaping () -> Served = { .notFound }
    ) {
        self.root = root
        self.manifest = manifest
        self.proof = proof
    }

    public func fetch(_ request: UpdateRequest) -> Result<UpdateAnswer, UpdateFetchError> {
        requests.append(request)
        let served: Served
        switch request.file {
        case .root(let version): served = root(version)
        case .manifest: served = manifest(request.ifNoneMatch)
        case .manifestProof: served = proof()
        default: served = .notFound
        }
        switch served {
        case .answer(let answer):
            if let limit = request.maxBytes, answer.body.count > limit { return .failure(.tooLarge(limit: limit)) }
            return .success(answer)
        case .failure(let error): return .failure(error)
        }
    }
}

extension TrustCore {
    /// `refresh(_:startTime:fetcher:)` with a `ScriptedFetcher` made of these closures.
    ///
    /// - Parameters:
    ///   - state: the current trusted state.
    ///   - t0: the start time.
    ///   - fetchRoot: the answer for `root/{version}.json`.
    ///   - fetchManifest: the answer for `manifest.json`, given the ETag sent.
    ///   - fetchProof: the answer for `manifest.proof` (default: 404).
    /// - Returns: the refresh's result.
    public func refresh(
        _ state: TrustedState, startTime t0: Timestamp, fetchRoot: (Int64) -> Served,
        fetchManifest: (String?) -> Served, fetchProof: () -> Served = { .notFound }
    ) -> RefreshedState {
        withoutActuallyEscaping(fetchRoot) { root in
            withoutActuallyEscaping(fetchManifest) { manifest in
                withoutActuallyEscaping(fetchProof) { proof in
                    refresh(
                        state, startTime: t0, fetcher: ScriptedFetcher(root: root, manifest: manifest, proof: proof))
                }
            }
        }
    }
}
