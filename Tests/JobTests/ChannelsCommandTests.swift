import Foundation
import Job
import Testing

let freeview = repoRoot.path + "/../shared/fixtures/xmltv/freeview_ie_2025-10-25T1606.xml"

/// `tvimport channels`, through the binary.
@Suite struct ChannelsCommandTests {
    /// The shared Irish guide as a second provider would name it: its own ids, display names in
    /// capitals without accents and with " HD".
    static func renamedFreeview() throws -> (text: String, ids: [String: String]) {
        var text = try String(contentsOfFile: freeview, encoding: .utf8)
        let ids = ["RTENews.ie", "RTEOne.ie", "RTE2.ie", "TG4.ie"]
        var renamed: [String: String] = [:]
        for id in ids {
            let other = "b-" + id.lowercased().replacingOccurrences(of: ".ie", with: ".example")
            renamed[id] = other
            text = text.replacingOccurrences(of: "\"\(id)\"", with: "\"\(other)\"")
        }
        for (name, other) in [("RTÉ News", "RTE NEWS HD"), ("RTÉ One", "RTE ONE HD"), ("RTÉ2", "RTE2 HD"), ("TG4", "tg4 hd")] {
            text = text.replacingOccurrences(of: ">\(name)</display-name>", with: ">\(other)</display-name>")
        }
        return (text, renamed)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: freeview), "needs ../shared/fixtures/xmltv"))
    func unmappedSuggestsTheAliasesThatJoinTwoProvidersNamings() throws {
        let box = try Sandbox()
        let (text, renamed) = try Self.renamedFreeview()
        try box.write("b.xml", text)
        #expect(box.importing([freeview], db: "tv.sqlite") { $0.source = "a"; $0.priority = 2; $0.flags.force = true }.status == 0)
        #expect(box.importing(["b.xml"], db: "tv.sqlite") { $0.source = "b"; $0.flags.force = true }.status == 0)

        let r = box.channels(db: "tv.sqlite", unmapped: true, json: true)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let suggestions = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "\(r.stdout)")
        var lines: [String: String] = [:]
        for s in suggestions { lines[s["id"] as? String ?? ""] = s["aliasLine"] as? String }
        for (id, other) in renamed {
            #expect(lines[other] == "\"\(id)\": {\"aliases\": [\"\(other)\"]}", "\(other): \(lines[other] ?? "no suggestion")")
        }
        #expect(lines.count == renamed.count, "only the renamed channels: \(lines)")

        // With the suggested aliases in a config, b's channels join a's: nothing is left to suggest.
        let channels = renamed.keys.sorted().map { "\"\($0)\": {\"aliases\": [\"\(renamed[$0]!)\"]}" }.joined(separator: ", ")
        try box.write("c.json", "{\"channels\": {\(channels)}}")
        let box2 = try Sandbox()
        try box2.write("b.xml", text)
        try box2.write("c.json", "{\"channels\": {\(channels)}}")
        #expect(try box2.run(["import", "--db", "tv.sqlite", "--source", "a", "--priority", "2", "--force", freeview]).status == 0)
        #expect(try box2.run(["import", "--db", "tv.sqlite", "--source", "b", "--config", "c.json", "--force", "b.xml"]).status == 0)
        let after = try box2.run(["channels", "--db", "tv.sqlite", "--unmapped"])
        #expect(after.stdout.contains("No unmapped channels"), "\(after.stdout)")
    }

    @Test func listsEachSourcesChannelsWithTheWinner() throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide(channels: ["one.test", "two.test"]))
        try box.write("b.xml", makeGuide(channels: ["two.test", "three.test"], titlePrefix: "Other"))
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "low"; $0.priority = -1 }.status == 0)
        #expect(box.importing(["b.xml"], db: "tv.sqlite") { $0.source = "high"; $0.priority = 3 }.status == 0)
        let r = box.channels(db: "tv.sqlite", json: true)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "\(r.stdout)")
        let winners = Dictionary(rows.map { ($0["canonical"] as? String ?? "", $0["winner"] as? String ?? "-") }, uniquingKeysWith: { a, _ in a })
        #expect(winners["one.test"] == "low")
        #expect(winners["three.test"] == "high")
        #expect(rows.allSatisfy { ($0["displayNames"] as? [String])?.isEmpty == false })
        let text = box.channels(db: "tv.sqlite", source: "low")
        #expect(text.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("low\t") }, "\(text.stdout)")
    }

    @Test(arguments: [("BBC One HD", "bbcone"), ("bbc one", "bbcone"), ("BBC-One", "bbcone"), ("RTÉ2", "rte2"),
                      ("BBC One +1", "bbcone+1"), ("BBC One + 1", "bbcone+1"), ("Ｗｉｄｅ TV", "widetv"), ("HD", "hd"),
                      ("Channel 4K", "channel"), ("TG4 SD", "tg4"), ("RTÉ One (1080p) [Geo-blocked]", "rteone")])
    func namesAreNormalisedAsTheHelpSays(name: String, expected: String) {
        #expect(ChannelsCommand.normalisedName(name) == expected)
    }
}
