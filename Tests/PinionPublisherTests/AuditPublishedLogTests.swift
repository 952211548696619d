// End to end: `pinion audit` on what `pinion publish --log-key` wrote, with two real `pinion witness` processes.

import Foundation
import PinionCore
import PinionTestSupport
import PinionTrust
import Testing

@Suite(.serialized) struct AuditPublishedLogTests {
    @Test func auditChecksARealPublishedLogAgainstTheRealWitnesses() throws {
        let world = try WitnessedWorkspace()
        let workspace = world.workspace
        try #require(try world.publish(["@root.json"]).status == 0)
        for version in 1...3 {
            try world.signManifest(version)
            let published = try world.publish(["@m\(version).json"])
            try #require(published.status == 0, "publish m\(version): \(published.err)")
        }
        // The witnesses' cosignatures carry their own clock's time: audit just after it.
        func audit(_ extra: [String]) -> CommandResult {
            let at = Timestamp(secondsSince1970: Int64(Date().timeIntervalSince1970) + 60)
            return workspace.run(
                ["audit", "--root", "@root.json", "@tree", "--witness-ca", "@pki/ca.pem", "--at", at.description]
                    + extra, at: at)
        }
        let first = audit(["--json", "--save-checkpoint", "@seen.checkpoint"])
        #expect(first.status == 0, "\(first.out)\(first.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.out.utf8)) as? [String: Any])
        #expect((object["violations"] as? [Any])?.isEmpty == true, "\(first.out)")
        #expect((object["warnings"] as? [Any])?.isEmpty == true, "\(first.out)")
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["size"] as? Int == 3)
        #expect(log["expectedHeads"] as? Int == 3)
        #expect(log["verified"] as? Bool == true)
        let witnesses = try #require(log["witnesses"] as? [[String: Any]])
        #expect(witnesses.map { $0["state"] as? String } == ["consistent", "consistent"], "\(witnesses)")
        #expect(witnesses.map { $0["size"] as? Int } == [3, 3])
        #expect(
            try workspace.readBytes("seen.checkpoint")
                == (try workspace.readBytes("tree/v1/com.example.app/log/checkpoint")))

        // One more publish: the monitor's next run extends what it saw.
        try world.signManifest(4)
        try #require(try world.publish(["@m4.json"]).status == 0)
        let second = audit(["--since", "@seen.checkpoint"])
        #expect(second.status == 0, "\(second.out)\(second.err)")
        #expect(second.out.contains("since      checkpoint of size 3"), "\(second.out)")

        // A byte changed in the published entry bundle: refused.
        let bundle = "tree/v1/com.example.app/log/tile/entries/000.p/4"
        var bytes = try workspace.readBytes(bundle)
        bytes[bytes.count - 2] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.path(bundle)))
        let broken = audit([])
        #expect(broken.status == 1, "\(broken.out)")
        #expect(broken.out.contains("[log-tile]"), "\(broken.out)")
    }
}
