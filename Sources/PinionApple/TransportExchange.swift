// The URLSession delegate of one `URLSessionTransport` call: turns server-trust challenges into pin
// checks for the waiting caller, limits redirects and body size, and maps the outcome to HTTPSError.
// Apple-only glue, type-checked against Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import PinionTrust
    import Security

    /// What the waiting caller is told.
    enum ExchangeEvent: Sendable {
        /// A verified chain to pin-check; `reply(true)` lets the handshake go on.
        case challenge(PeerChain, reply: @Sendable (Bool) -> Void)
        case finished(Result<HTTPSResponse, HTTPSError>)
    }

    /// `@unchecked Sendable` is sound: the mutable fields are private and touched only under `lock`.
    final class TransportExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let signal = DispatchSemaphore(value: 0)
        private let host: String, port: UInt16, hasher: any SHA256Hasher, maxBytes: Int, maxRedirects: Int?
        private let lock = NSLock()
        private var events: [ExchangeEvent] = [], failure: HTTPSError?, body = Data(), redirects = 0

        init(host: String, port: UInt16, hasher: any SHA256Hasher, maxBytes: Int, maxRedirects: Int?) {
            (self.host, self.port, self.hasher, self.maxBytes, self.maxRedirects) =
                (host, port, hasher, maxBytes, maxRedirects)
        }

        func next() -> ExchangeEvent? { locked { events.isEmpty ? nil : events.removeFirst() } }

        /// Records the call's outcome; the first failure wins over what URLSession reports later.
        func fail(_ error: HTTPSError) { locked { if failure == nil { failure = error } } }

        private func post(_ event: ExchangeEvent) {
            locked { events.append(event) }
            signal.signal()
        }

        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }

        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust else {
                return completionHandler(.performDefaultHandling, nil)
            }
            let port = UInt16(exactly: space.port).flatMap { $0 == 0 ? nil : $0 } ?? 443
            do {
                guard let trust = space.serverTrust else { throw ServerTrustError.emptyVerifiedChain }
                // Like `PinningClient.verdict`: a certificate that is not strict DER does not count.
                let pinned = try PinionServerTrust.verifiedChainDER(of: trust).compactMap { der in
                    (try? CertificateSPKI.fromCertificateDER(der, hasher: hasher)).map { (der, $0.sha256) }
                }
                if pinned.isEmpty { throw ServerTrustError.emptyVerifiedChain }
                let credential = URLCredential(trust: trust)
                let peer = PeerChain(
                    host: space.host, port: port, verifiedSPKISHA256: pinned.map(\.1),
                    verifiedChainDER: pinned.map(\.0), servedChainDER: [])
                post(
                    .challenge(peer) {
                        completionHandler($0 ? .useCredential : .cancelAuthenticationChallenge, $0 ? credential : nil)
                    })
            } catch ServerTrustError.x509Failed(let reason) {
                fail(.certificateVerificationFailed(host: space.host, port: port, reason: reason))
                completionHandler(.cancelAuthenticationChallenge, nil)
            } catch {
                fail(.emptyVerifiedChain(host: space.host, port: port))
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            guard let maxRedirects else { return completionHandler(nil) }  // POST: the redirect is the response
            let count = locked {
                redirects += 1
                return redirects
            }
            if count > maxRedirects {
                fail(.tooManyRedirects(limit: maxRedirects))
            } else if request.url?.scheme?.lowercased() != "https" {
                fail(.redirectToNonHTTPS(location: request.url?.absoluteString ?? ""))
            } else {
                return completionHandler(request)
            }
            completionHandler(nil)
            task.cancel()
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let tooLarge = locked {
                body.append(data)
                return body.count > maxBytes
            }
            if tooLarge {
                fail(.responseTooLarge(host: host, port: port, limit: maxBytes))
                dataTask.cancel()
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let (recorded, bytes) = locked { (failure, body) }
            let code = (error as? URLError)?.code
            let result: Result<HTTPSResponse, HTTPSError>
            if let recorded {
                result = .failure(recorded)
            } else if code == .timedOut {
                result = .failure(.timedOut(host: host, port: port, phase: .response))
            } else if code == .cannotFindHost {
                result = .failure(.resolutionFailed(host: host, detail: "\(error.map { "\($0)" } ?? "")"))
            } else if code == .cannotConnectToHost {
                result = .failure(.connectionRefused(host: host, port: port))
            } else if let error {
                result = .failure(.connectionLost(host: host, port: port, detail: "\(error)"))
            } else if let http = task.response as? HTTPURLResponse, let url = http.url {
                let headers = http.allHeaderFields.map { key, value in
                    ("\(key.base)".lowercased(), "\(value)".trimmingCharacters(in: .whitespaces))
                }
                result = .success(
                    HTTPSResponse(url: url, status: http.statusCode, headers: headers, body: [UInt8](bytes)))
            } else {
                result = .failure(.malformedResponse(host: host, port: port, detail: "no HTTP response"))
            }
            post(.finished(result))
        }
    }
#endif
