// End to end: `pinion publish --log-key` against two real `pinion witness` processes on 127.0.0.1 (port 0), TLS trusted through --witness-ca with certificates made by openssl here.

import Foundation
import PinionCore
import PinionTestSupport
import PinionTrust
import Testing

@Suite(.serialized) struct PublishWitnessEndToEndTests {
    @Test func publishIsCosignedByTwoRealWitnessesOverHTTPS() throws {
        let world = try WitnessedWorkspace()
        let workspace = world.workspace
        for (name, witness) in zip(["w1", "w2"], world.witnesses) {
            #expect(
                witness.verifierKey
                    == workspace.ok([
                        "key", "note-vkey", "@\(name).pub", "--name", "\(name).example", "--type", "witness",
                    ])
                    .out.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var result = try world.publish(["@root.json"])
        try #require(result.status == 0, "\(result.err)")
        for version in 1...2 {
            try world.signManifest(version)
            result = try world.publish(["@m\(version).json"])
            try #require(result.status == 0, "publish m\(version): \(result.err)")
            #expect(result.out.contains("cosigned by w1.example, w2.example"), "\(result.out)")
        }
        let verified = try world.verifyServed(now: Int64(Date().timeIntervalSince1970))
        #expect(verified.head.manifestVersion == 2)
        #expect(Set(verified.witnesses) == ["w1.example", "w2.example"])
        // The refresh re-cosigns over HTTPS too.
        let refresh = try workspace.pinion(["log", "refresh", "--repo", "@tree"] + world.log)
        #expect(refresh.status == 0, "\(refresh.err)")
        #expect(!refresh.err.contains("in the future"), "\(refresh.err)")
        // Cosignatures dated ahead of this machine's clock are named. The witnesses sign with the real clock; run in-process with a clock
        // an hour behind it, the refresh succeeds and warns naming each witness.
        let behind = Timestamp(secondsSince1970: Int64(Date().timeIntervalSince1970) - 3600)
        let early = workspace.run(["log", "refresh", "--repo", "@tree"] + world.log, at: behind)
        #expect(early.status == 0, "\(early.err)")
        for name in ["w1.example", "w2.example"] {
            #expect(early.err.contains("warning: witness \(name): its cosignature is dated"), "\(early.err)")
        }
        // A CA that did not issue the witnesses' certificates: no witness counts, exit 1, nothing served changes.
        try world.pki.generateKey("other")
        try world.pki.selfSign("other", subject: "/CN=Other CA", extensions: "ca")
        let scope = "tree/v1/com.example.app/"
        let before = try workspace.readBytes(scope + "manifest.proof")
        let untrusted = try workspace.pinion([
            "log", "refresh", "--repo", "@tree", "--log-key", "@log.key", "--witness-ca", "@pki/other.pem",
        ])
        #expect(untrusted.status == 1, "\(untrusted.err)")
        #expect(try workspace.readBytes(scope + "manifest.proof") == before)
    }
}
