// Asking the witnesses of one publish step: all at once, answers kept in the root's witness order.

import Foundation
import PinionSystem
import Testing

@testable import PinionPublisher

/// A witness network whose every exchange waits until `expected` exchanges are in progress at
/// once (or 20 s pass, then fails): asked one after another, no exchange could ever complete.
private final class BarrierNetwork: WitnessClient, @unchecked Sendable {
    let expected: Int
    let failing: Set<String>
    private let condition = NSCondition()
    private var arrived = 0

    init(expected: Int, failing: Set<String> = []) {
        self.expected = expected
        self.failing = failing
    }

    func addCheckpoint(url: String, body: [UInt8]) throws -> WitnessAnswer {
        condition.lock()
        arrived += 1
        condition.broadcast()
        let deadline = Date().addingTimeInterval(20)
        while arrived < expected {
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw WitnessClientError.exchange("\(url): asked while only \(arrived) of \(expected) were")
            }
        }
        condition.unlock()
        if failing.contains(url) { throw WitnessClientError.exchange("\(url): connection refused") }
        return WitnessAnswer(status: 200, body: Array(url.utf8) + body)
    }

    func fetchCheckpoint(url: String) throws -> WitnessAnswer { WitnessAnswer(status: 404, body: []) }
}

@Suite struct WitnessRoundTests {
    @Test func everyWitnessIsAskedAtOnceAndAnswersKeepTheirOrder() {
        let urls = (1...6).map { "https://w\($0).example/w" }
        let network = BarrierNetwork(expected: urls.count, failing: [urls[2]])
        let answers = WitnessRound.ask(urls.map { ($0, Array("-body".utf8)) }, client: network)
        #expect(answers.count == urls.count)
        for (index, answer) in answers.enumerated() {
            switch answer {
            case .success(let reply):
                #expect(index != 2)
                #expect(reply.body == Array((urls[index] + "-body").utf8))
            case .failure(let failure):
                #expect(index == 2)
                #expect(failure.reason.contains("connection refused"), "\(failure.reason)")
            }
        }
    }

    @Test func noRequestsAskNothing() {
        #expect(WitnessRound.ask([], client: BarrierNetwork(expected: 1)).isEmpty)
    }
}
