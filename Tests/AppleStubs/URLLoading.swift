// Test-only stand-in for the URL Loading System declarations Sources/PinionApple uses, which Apple's
// Foundation provides and Linux's Foundation does not (scripts/typecheck-apple imports this module
// implicitly, as Foundation would). Source of truth: Apple's Foundation documentation
// (developer.apple.com/documentation/foundation/url_loading_system: URLSession, URLSessionConfiguration,
// URLSessionDelegate, URLSessionTaskDelegate, URLSessionDataDelegate, URLRequest, HTTPURLResponse,
// URLAuthenticationChallenge, URLProtectionSpace, URLCredential; URLError is Linux Foundation's own). The delegate methods are
// optional Objective-C requirements on Apple; here they are required, so that a method whose signature
// nearly matches (and would silently never be called) fails the type-check. Signatures only.

import Foundation
import Security

/// `let NSURLAuthenticationMethodServerTrust: String`.
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"

/// `class URLProtectionSpace`.
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    open var host: String { "" }
    open var port: Int { 0 }
    open var authenticationMethod: String { "" }
    /// `var serverTrust: SecTrust? { get }`
    open var serverTrust: SecTrust? { nil }
}

/// `class URLAuthenticationChallenge`.
open class URLAuthenticationChallenge: NSObject, @unchecked Sendable {
    open var protectionSpace: URLProtectionSpace { URLProtectionSpace() }
}

/// `class URLCredential`: `init(trust: SecTrust)`.
open class URLCredential: NSObject, @unchecked Sendable {
    public init(trust: SecTrust) {}
}

/// `class URLCache`.
open class URLCache: NSObject, @unchecked Sendable {}

/// `class HTTPCookieStorage`.
open class HTTPCookieStorage: NSObject, @unchecked Sendable {}

/// `class NSURLRequest` (for its `CachePolicy`).
open class NSURLRequest: NSObject, @unchecked Sendable {
    public enum CachePolicy: UInt, Sendable {
        case useProtocolCachePolicy = 0
        case reloadIgnoringLocalCacheData = 1
    }
}

/// `struct URLRequest`.
public struct URLRequest: Sendable {
    public typealias CachePolicy = NSURLRequest.CachePolicy
    public init(url: URL, cachePolicy: CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60) {}
    public var url: URL? {
        get { nil }
        set {}
    }
    public var httpMethod: String? {
        get { nil }
        set {}
    }
    public var httpBody: Data? {
        get { nil }
        set {}
    }
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {}
}

/// `class URLResponse`.
open class URLResponse: NSObject, @unchecked Sendable {
    open var url: URL? { nil }
}

/// `class HTTPURLResponse`.
open class HTTPURLResponse: URLResponse, @unchecked Sendable {
    open var statusCode: Int { 0 }
    open var allHeaderFields: [AnyHashable: Any] { [:] }
}

/// `class URLSessionConfiguration`.
open class URLSessionConfiguration: NSObject, @unchecked Sendable {
    open class var `default`: URLSessionConfiguration { URLSessionConfiguration() }
    open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration() }
    open var urlCache: URLCache? {
        get { nil }
        set {}
    }
    open var httpCookieStorage: HTTPCookieStorage? {
        get { nil }
        set {}
    }
    open var httpShouldSetCookies: Bool {
        get { false }
        set {}
    }
    open var requestCachePolicy: NSURLRequest.CachePolicy {
        get { .useProtocolCachePolicy }
        set {}
    }
    open var timeoutIntervalForRequest: TimeInterval {
        get { 0 }
        set {}
    }
    open var timeoutIntervalForResource: TimeInterval {
        get { 0 }
        set {}
    }
}

/// `class URLSessionTask`.
open class URLSessionTask: NSObject, @unchecked Sendable {
    /// `var response: URLResponse? { get }`
    open var response: URLResponse? { nil }
    open func resume() {}
    open func cancel() {}
}

/// `class URLSessionDataTask`.
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}

/// `class URLSession`.
open class URLSession: NSObject, @unchecked Sendable {
    /// `enum URLSession.AuthChallengeDisposition`.
    public enum AuthChallengeDisposition: Int, Sendable {
        case useCredential = 0
        case performDefaultHandling = 1
        case cancelAuthenticationChallenge = 2
        case rejectProtectionSpace = 3
    }

    public init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue: OperationQueue?
    ) {}
    open func dataTask(with request: URLRequest) -> URLSessionDataTask { URLSessionDataTask() }
    open func finishTasksAndInvalidate() {}
    open func invalidateAndCancel() {}
}

/// `protocol URLSessionDelegate: NSObjectProtocol, Sendable`.
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
}

/// `protocol URLSessionTaskDelegate: URLSessionDelegate`.
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
}

/// `protocol URLSessionDataDelegate: URLSessionTaskDelegate`.
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
}
