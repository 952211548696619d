// A stub of the few Alamofire 5 declarations docs/APPLE.md's adapter uses, so scripts/typecheck-apple can
// type-check that snippet; never shipped or linked. Signatures from Alamofire 5's ServerTrustEvaluation.swift,
// AFError.swift and Session.swift (public API documentation).

import Foundation
import Security

/// `public protocol ServerTrustEvaluating`: evaluates the server trust of one host.
public protocol ServerTrustEvaluating {
    /// `func evaluate(_ trust: SecTrust, forHost host: String) throws`
    func evaluate(_ trust: SecTrust, forHost host: String) throws
}

/// `open class ServerTrustManager`: maps hosts to evaluators.
open class ServerTrustManager {
    /// `public let allHostsMustBeEvaluated: Bool`
    public let allHostsMustBeEvaluated: Bool
    /// `public let evaluators: [String: ServerTrustEvaluating]`
    public let evaluators: [String: ServerTrustEvaluating]

    /// `public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: ServerTrustEvaluating])`
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = evaluators
    }

    /// `open func serverTrustEvaluator(forHost host: String) throws -> ServerTrustEvaluating?`
    open func serverTrustEvaluator(forHost host: String) throws -> ServerTrustEvaluating? { evaluators[host] }
}

/// `public enum AFError: Error`, the one case the adapter throws.
public enum AFError: Error {
    /// `public enum ServerTrustFailureReason`, the one case the adapter uses.
    public enum ServerTrustFailureReason: Sendable {
        /// `case customEvaluationFailed(error: Error)`
        case customEvaluationFailed(error: any Error)
    }

    /// `case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)`
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
}

/// `open class Session: @unchecked Sendable`, with the one initializer argument the adapter passes.
open class Session: @unchecked Sendable {
    /// `public let serverTrustManager: ServerTrustManager?`
    public let serverTrustManager: ServerTrustManager?

    /// `public init(..., serverTrustManager: ServerTrustManager? = nil, ...)`
    public init(serverTrustManager: ServerTrustManager? = nil) {
        self.serverTrustManager = serverTrustManager
    }
}
