import Foundation
import TestSupport
import Testing

/// Timeshifted channels (`channels.ID.timeshiftOf`): derived from the original after every
/// import, with their own ids, UIDs, edits and hidden flags, following config changes at the next
/// run even when the download is unchanged, and undone with the import that made them.
@Suite struct TimeshiftTests {
    static let guide = """
        <?xml version="1.0" encoding="UTF-8"?>
        <tv>
        <channel id="rte1.ie"><display-name>RTÉ One</display-name><icon src="http://x/rte1.png"/></channel>
        <programme start="20300101060000 +0000" stop="20300101070000 +0000" channel="rte1.ie"><title>News</title>
          <credits><presenter>Ann</presenter></credits><category>News</category></programme>
        <programme start="20300101070000 +0000" stop="20300101083000 +0000" channel="rte1.ie"><title>Film</title></programme>
        </tv>
        """

    func config(_ channels: String) -> String {
        makeConfig(sources: [("ie", "ie.xml")], extra: ", \"xmltv\": \"guide.xml\", \"channels\": {\(channels)}")
    }

    @Test func aTimeshiftedChannelFollowsItsOriginalAndTheConfig() throws {
        let box = try Sandbox()
        try box.write("ie.xml", Self.guide)
        try box.write("config.json", config("\"rte1plus1.ie\": {\"timeshiftOf\": \"rte1.ie\", \"hours\": 1, \"displayName\": \"RTÉ One +1\"}"))
        var r = box.nightly(config: "config.json")
        #expect(r.status == 0, "\(r.stderr)")
        var xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(xml.contains("<channel id=\"rte1plus1.ie\">\n    <display-name>RTÉ One +1</display-name>\n    <icon src=\"http://x/rte1.png\"/>"))
        #expect(programmes(xml, channel: "rte1plus1.ie").map { "\($0.start.prefix(12))-\($0.stop.prefix(12)) \($0.title)" }
                == ["203001010700-203001010800 News", "203001010800-203001010930 Film"])
        // Credits and categories come along.
        #expect(xml.components(separatedBy: "<presenter>Ann</presenter>").count == 3)
        // Its own feed, with UIDs of its own.
        let original = String(decoding: box.bytes("out/rte1.ie.ics") ?? Data(), as: UTF8.self)
        let shifted = String(decoding: box.bytes("out/rte1plus1.ie.ics") ?? Data(), as: UTF8.self)
        func uids(_ ics: String) -> Set<String> { Set(ics.components(separatedBy: "\r\n").filter { $0.hasPrefix("UID:") }) }
        #expect(uids(shifted).count == 2 && uids(original).isDisjoint(with: uids(shifted)))

        // Its own hidden flag and edits, kept when the original changes.
        #expect(box.edit("Channel", "rte1plus1.ie", ["hidden=true"], config: "config.json").status == 0)
        xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(!xml.contains("rte1plus1.ie") && xml.contains("rte1.ie"))
        try box.write("ie.xml", Self.guide.replacingOccurrences(of: "<title>Film</title>", with: "<title>Another film</title>"))
        r = box.nightly(config: "config.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(box.edit("Channel", "rte1plus1.ie", ["hidden=false"], config: "config.json").status == 0)
        xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(programmes(xml, channel: "rte1plus1.ie").map(\.title) == ["News", "Another film"])

        // A config change applies at the next run, the download unchanged: half hours, negative, no display name.
        try box.write("config.json", config("\"rte1plus1.ie\": {\"timeshiftOf\": \"rte1.ie\", \"hours\": -1.5}"))
        r = box.nightly(config: "config.json")
        #expect(r.status == 0, "\(r.stderr)")
        xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(programmes(xml, channel: "rte1plus1.ie").map { "\($0.start.prefix(12))-\($0.stop.prefix(12))" }
                == ["203001010430-203001010530", "203001010530-203001010700"])
        #expect(xml.contains("<display-name>RTÉ One -1.5</display-name>"))
        // Undone with the run that made it so; a rule removed removes the channel at the next run.
        r = box.undo(config: "config.json")
        #expect(r.status == 0, "\(r.stderr)")
        xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(programmes(xml, channel: "rte1plus1.ie").first?.start.hasPrefix("20300101070000") == true)
        try box.write("config.json", config(""))
        #expect(box.nightly(config: "config.json").status == 0)
        xml = String(decoding: box.bytes("guide.xml") ?? Data(), as: UTF8.self)
        #expect(!xml.contains("rte1plus1.ie") && !FileManager.default.fileExists(atPath: box.path("out/rte1plus1.ie.ics")))
    }

    @Test func badRulesAreConfigurationErrors() throws {
        let box = try Sandbox()
        try box.write("ie.xml", Self.guide)
        for (rule, words) in [("\"p.ie\": {\"timeshiftOf\": \"rte1.ie\", \"hours\": 0.25}", "whole or half"),
                              ("\"p.ie\": {\"timeshiftOf\": \"rte1.ie\", \"hours\": 0}", "not 0"),
                              ("\"p.ie\": {\"timeshiftOf\": \"rte1.ie\"}", "channels.p.ie.hours"),
                              ("\"p.ie\": {\"timeshiftOf\": \"p.ie\", \"hours\": 1}", "the id of another channel"),
                              ("\"p.ie\": {\"timeshiftOf\": \"q.ie\", \"hours\": 1}, \"q.ie\": {\"timeshiftOf\": \"rte1.ie\", \"hours\": 1}", "not timeshifted itself"),
                              ("\"p.ie\": {\"hours\": 1}", "only beside")] {
            try box.write("config.json", config(rule))
            let r = box.nightly(config: "config.json")
            #expect(r.status == 78 && r.stderr.contains(words), "\(rule): \(r.status) \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: box.path("tv.sqlite")))
    }
}
