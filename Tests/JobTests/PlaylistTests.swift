import Foundation
import Playlists
import TestSupport
import Testing

let nzPlaylist = Shared.directory.appendingPathComponent("fixtures/m3u/iptvorg_nz.m3u").path
let xmltvValidators = Tool.isInstalled("xmllint") && Tool.isInstalled("tv_validate_file") && FileManager.default.fileExists(atPath: "/usr/share/xmltv/xmltv.dtd")

/// The XMLTV DTD (xmllint) and tv_validate_file; playlists' ids are the players' (iptv-org's
/// "Bravo.nz@Plus1"), which tv_validate_file's domain-name check of ids calls invalid: those
/// lines, and only those, are accepted.
func expectValidPlaylistGuide(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let dtd = try Subprocess.run("xmllint", ["--noout", "--nonet", "--dtdvalid", "/usr/share/xmltv/xmltv.dtd", path])
    #expect(dtd.status == 0, "xmllint: \(dtd.stderr)", sourceLocation: sourceLocation)
    let xmltv = try Subprocess.run("tv_validate_file", [path], environment: ["XMLTV_SUPPLEMENT": "/usr/share/xmltv"])
    let problems = (xmltv.output + xmltv.stderr).split(separator: "\n").filter { $0.hasPrefix("Line ") || $0.contains("No programme") }
    #expect(problems.allSatisfy { $0.contains("Invalid channel-id") }, "tv_validate_file: \(xmltv.output) \(xmltv.stderr)", sourceLocation: sourceLocation)
}

/// `<channel id="…">` ids of an XMLTV text, in document order.
func channelIDs(_ xml: String) -> [String] {
    xml.components(separatedBy: "<channel id=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
}

/// The (start, stop, title) of each programme of `channel`.
func programmes(_ xml: String, channel: String) -> [(start: String, stop: String, title: String)] {
    xml.components(separatedBy: "<programme ").dropFirst().compactMap { chunk in
        guard chunk.contains("channel=\"\(channel)\"") else { return nil }
        func attribute(_ name: String) -> String {
            guard let r = chunk.range(of: name + "=\"") else { return "" }
            return String(chunk[r.upperBound...].prefix { $0 != "\"" })
        }
        guard let t = chunk.range(of: "<title>") else { return nil }
        return (attribute("start"), attribute("stop"), String(chunk[t.upperBound...].prefix { $0 != "<" }))
    }
}

/// A guide for the NZ playlist: some of its channels, one under another id (matched by name),
/// programmes from 2030-01-01 06:00 UTC with a gap on TVNZ 1.
let nzGuide = """
    <?xml version="1.0" encoding="UTF-8"?>
    <tv>
    <channel id="Bravo.nz"><display-name>Bravo</display-name></channel>
    <channel id="SkyOpen.nz"><display-name>Sky Open</display-name></channel>
    <channel id="tvnz1.co.nz"><display-name>TVNZ 1</display-name><icon src="http://x/tvnz1.png" width="100" height="100"/></channel>
    <channel id="WairarapaTV.nz"><display-name>Wairarapa TV</display-name></channel>
    <channel id="other.nz"><display-name>Not in the playlist</display-name></channel>
    <programme start="20300101060000 +0000" stop="20300101070000 +0000" channel="Bravo.nz"><title>B1</title></programme>
    <programme start="20300101070000 +0000" stop="20300101120000 +0000" channel="Bravo.nz"><title>B2</title></programme>
    <programme start="20300101060000 +0000" stop="20300101120000 +0000" channel="SkyOpen.nz"><title>S1</title></programme>
    <programme start="20300101060000 +0000" stop="20300101063000 +0000" channel="tvnz1.co.nz"><title>T1</title></programme>
    <programme start="20300101090000 +0000" stop="20300101120000 +0000" channel="tvnz1.co.nz"><title>T2</title></programme>
    <programme start="20300101060000 +0000" stop="20300101120000 +0000" channel="WairarapaTV.nz"><title>W1</title></programme>
    <programme start="20300101060000 +0000" stop="20300101120000 +0000" channel="other.nz"><title>O1</title></programme>
    </tv>
    """

@Suite struct PlaylistTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: nzPlaylist), "needs ../shared/fixtures/m3u"))
    func theRealIptvOrgPlaylistIsMatchedAsTheRulesSay() throws {
        let box = try Sandbox()
        try box.write("nz.xml", nzGuide)
        // Sky Open +1 has a channel of its own (a timeshifted one named so): the @Plus1 entry
        // gets it by name; Bravo +1 has none: Bravo moved an hour.
        try box.write("config.json", makeConfig(sources: [("nz", "nz.xml")], extra: """
            , "channels": {"skyopen1.nz": {"timeshiftOf": "SkyOpen.nz", "hours": 1, "displayName": "Sky Open +1"}},
            "playlists": [{"m3u": "\(nzPlaylist)", "xmltv": "guide-nz.xml"}], "fill": {"hours": 2, "title": "{name}: no listings"}
            """))
        // The unmatched entries are named on standard error, the process's: the binary.
        let r = try box.run(["run", "--config", "config.json", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let xml = String(decoding: box.bytes("guide-nz.xml") ?? Data(), as: UTF8.self)
        // Playlist order, each under the playlist's id, three streams of Wairarapa TV one channel.
        #expect(channelIDs(xml) == ["Bravo.nz@Plus1", "Channel200.nz", "Firstlight.nz", "JuiceTV.nz", "KordiaTV.nz", "Love Stories TV (720p)",
                                    "ParliamentTV.nz", "SkyOpen.nz", "SkyOpen.nz@Plus1", "TeReo.nz", "TVNZ1.nz", "TVNZ2.nz", "TVNZDUKE.nz",
                                    "WairarapaTV.nz", "WhakaataMaori.nz"])
        #expect(!xml.contains("other.nz") && !xml.contains("Not in the playlist"))
        // +1 never is the channel without it: Bravo's programmes an hour later, a placeholder before.
        let bravo = programmes(xml, channel: "Bravo.nz@Plus1")
        #expect(bravo.map(\.title) == ["Bravo +1: no listings", "B1", "B2"])
        #expect(bravo[1].start == "20300101070000 +0000" && bravo[2].stop == "20300101130000 +0000")
        let skyPlus = programmes(xml, channel: "SkyOpen.nz@Plus1")
        #expect(skyPlus.map(\.title) == ["Sky open +1 (576p) [Geo-blocked]: no listings", "S1"])
        #expect(skyPlus.last?.start == "20300101070000 +0000")
        #expect(programmes(xml, channel: "SkyOpen.nz").first?.start == "20300101060000 +0000")
        // Matched by name ("TVNZ 1 [Geo-blocked]" = "TVNZ 1"), its gap filled, cut at the fill's 2-hour grid.
        #expect(programmes(xml, channel: "TVNZ1.nz").map { "\($0.start.prefix(12)) \($0.title)" }
                == ["203001010600 T1", "203001010630 TVNZ 1 [Geo-blocked]: no listings", "203001010800 TVNZ 1 [Geo-blocked]: no listings", "203001010900 T2",
                   // The guide's hours end with Sky Open +1's last programme, at 13:00.
                   "203001011200 TVNZ 1 [Geo-blocked]: no listings"])
        #expect(xml.contains("<display-name>TVNZ 1 [Geo-blocked]</display-name>\n    <display-name>TVNZ 1</display-name>\n    <icon src=\"http://x/tvnz1.png\" width=\"100\" height=\"100\"/>"))
        // Unmatched: placeholders over the guide's hours, and named with the nearest display names.
        #expect(programmes(xml, channel: "TeReo.nz").map { "\($0.start.prefix(12))-\($0.stop.prefix(12))" }
                == ["203001010600-203001010800", "203001010800-203001011000", "203001011000-203001011200", "203001011200-203001011300"])
        let report = try #require(parseJSON(r.stdout))
        let playlist = try #require((report["playlists"] as? [[String: Any]])?.first)
        let unmatched = try #require(playlist["unmatched"] as? [[String: Any]])
        #expect(unmatched.count == 10)
        let loveStories = try #require(unmatched.first { $0["name"] as? String == "Love Stories TV (720p)" })
        #expect(loveStories["line"] as? Int == 12 && (loveStories["nearest"] as? [String])?.count == 3)
        #expect(r.stderr.contains("iptvorg_nz.m3u:24: 'TVNZ 2 [Geo-blocked]' tvg-id 'TVNZ2.nz' matches no channel; nearest display names: 'TVNZ 1'"))
        if xmltvValidators { try expectValidPlaylistGuide(box.path("guide-nz.xml")) }

        // channels --playlist says why.
        let why = try box.run(["channels", "--config", "config.json", "--playlist", nzPlaylist])
        #expect(why.status == 0)
        #expect(why.stdout.contains("2\tBravo +1\tBravo.nz@Plus1\tBravo.nz\ttvg-id Bravo.nz@Plus1: the guide has no channel of its own for it, so Bravo.nz"))
        #expect(why.stdout.contains("18\tSky open +1 (576p) [Geo-blocked]\tSkyOpen.nz@Plus1\tskyopen1.nz\tname 'Sky open +1 (576p) [Geo-blocked]' = display name 'Sky Open +1'"))
        #expect(why.stdout.contains("22\tTVNZ 1 [Geo-blocked]\tTVNZ1.nz\ttvnz1.co.nz\tname"))
        #expect(why.stdout.contains("7 of 17 entries matched"))

        // Nothing changed: the next run keeps the file's bytes.
        let before = box.snapshot(["guide-nz.xml"])
        #expect(box.nightly(config: "config.json") { $0.flags.quiet = true }.status == 0)
        #expect(sameBytesAndTimes(before, box.snapshot(["guide-nz.xml"])))
    }

    /// A playlist the way large ones are written, made here: 300 entries with tvg-id, tvg-name,
    /// tvg-logo and group-title, some with tvg-shift, some matched only by a name written
    /// differently, some matching nothing.
    static func largePlaylist() -> (m3u: String, guide: String) {
        var m3u = "#EXTM3U x-tvg-url=\"http://example.invalid/guide.xml\"\r\n"
        var guide = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n"
        var programmes = ""
        for i in 0..<300 {
            let id = "ch\(i).example"
            let kind = i % 10
            // The guide's channel: under the entry's id (kinds 0-5), another id (6-8: by name), none (9).
            if kind != 9 {
                let guideID = kind >= 6 ? "other\(i).tv" : id
                guide += "  <channel id=\"\(guideID)\"><display-name>Chaîne Numéro \(i)</display-name></channel>\n"
                programmes += "  <programme start=\"20300101060000 +0000\" stop=\"20300101080000 +0000\" channel=\"\(guideID)\"><title>P\(i)</title></programme>\n"
            }
            let shift = kind == 3 ? " tvg-shift=\"-2\"" : kind == 4 ? " tvg-shift=\"1.5\"" : ""
            let name = kind >= 6 ? "CHAINE NUMERO \(i) HD" : "Chaîne Numéro \(i)"
            m3u += "#EXTINF:-1 tvg-id=\"\(kind >= 6 ? "x\(i).example" : id)\" tvg-name=\"\(name)\" tvg-logo=\"http://logo.example/\(i).png\" group-title=\"Group \(i % 7)\"\(shift),\(name)\r\n"
            m3u += "http://stream.example/\(i).m3u8\r\n"
        }
        return (m3u, guide + programmes + "</tv>\n")
    }

    @Test func aLargePlaylistGetsItsChannelsInItsOrderWithItsShifts() throws {
        let box = try Sandbox()
        let (m3u, guide) = Self.largePlaylist()
        try box.write("large.m3u", m3u)
        try box.write("guide.xml", guide)
        #expect(box.importing(["guide.xml"], db: "tv.sqlite") { $0.flags.force = true; $0.flags.quiet = true }.status == 0)
        let r = box.exporting(db: "tv.sqlite", xmltv: "out.xml", playlist: "large.m3u")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("270 channels, 270 programmes, 30 of 300 entries unmatched"))
        let xml = String(decoding: box.bytes("out.xml") ?? Data(), as: UTF8.self)
        let expectedIDs = (0..<300).filter { $0 % 10 != 9 }.map { $0 % 10 >= 6 ? "x\($0).example" : "ch\($0).example" }
        #expect(channelIDs(xml) == expectedIDs)
        #expect(programmes(xml, channel: "ch3.example").first?.start == "20300101040000 +0000")
        #expect(programmes(xml, channel: "ch4.example").first?.start == "20300101073000 +0000")
        #expect(programmes(xml, channel: "x6.example").first?.title == "P6")
        #expect(r.stderr.contains("large.m3u:20: 'CHAINE NUMERO 9 HD' tvg-id 'x9.example' matches no channel; nearest display names: 'Chaîne Numéro "))
        // Without a fill, unmatched entries are left out (a channel without programmes is an error to tv_validate_file).
        #expect(!xml.contains("x9.example"))
        if xmltvValidators { try expectValidPlaylistGuide(box.path("out.xml")) }
    }

    @Test func badPlaylistsAreErrorsThatNameTheFile() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide())
        #expect(box.importing(["guide.xml"], db: "tv.sqlite") { $0.flags.force = true; $0.flags.quiet = true }.status == 0)
        try box.write("empty.m3u", "#EXTM3U\nhttp://x/stream\n")
        let empty = box.exporting(db: "tv.sqlite", xmltv: "out.xml", playlist: "empty.m3u")
        #expect(empty.status == 65 && empty.stderr.contains("empty.m3u: no #EXTINF entries"))
        let missing = box.exporting(db: "tv.sqlite", xmltv: "out.xml", playlist: "missing.m3u")
        #expect(missing.status == 66 && missing.stderr.contains("missing.m3u: cannot read the playlist"))
        let noXMLTV = box.exporting(db: "tv.sqlite", out: "feeds", playlist: "empty.m3u")
        #expect(noXMLTV.status == 64)
        #expect(!FileManager.default.fileExists(atPath: box.path("out.xml")))
    }
}

@Suite struct M3UPlaylistTests {
    @Test func entriesAreReadAsPlayersReadThem() throws {
        let text = "\u{FEFF}#EXTM3U tvg-shift=\"1\"\r\n#EXTINF:-1 tvg-id=\"a.tv\" tvg-name='A, the \"first\"' group-title=Films tvg-logo=\"\",A, comma\r\n"
            + "#EXTVLCOPT:http-user-agent=x\nhttp://a\n#EXTINF:0 tvg-shift=\"-1,5\",B\n#EXTGRP:News\nhttp://b\n"
            + "#extinf:-1 tvg-shift=\"99\" tvg-id=\"c\",C\n#EXTINF:-1,D\n"
        let playlist = try M3UPlaylist(bytes: Array(text.utf8), file: "t.m3u")
        #expect(playlist.entries.count == 4)
        let a = playlist.entries[0]
        #expect(a.line == 2 && a.tvgID == "a.tv" && a.tvgName == "A, the \"first\"" && a.groupTitle == "Films" && a.tvgLogo == nil)
        #expect(a.title == "A, comma" && a.url == "http://a" && a.shift == 3600 && a.name == "A, the \"first\"")
        #expect(playlist.entries[1].shift == -5400 && playlist.entries[1].groupTitle == "News" && playlist.entries[1].name == "B")
        // An impossible shift is ignored with a warning naming the line; the header's is not taken either.
        #expect(playlist.entries[2].shift == 0 && playlist.warnings.map(\.line) == [8])
        #expect(playlist.entries[3].title == "D" && playlist.entries[3].url == nil)
        #expect(throws: PlaylistError.self) { try M3UPlaylist(bytes: Array("#EXTM3U\n".utf8), file: "e.m3u") }
    }

    @Test func shiftsAreCheckedNumbers() {
        #expect(M3UPlaylist.shiftSeconds("2") == 7200 && M3UPlaylist.shiftSeconds("+0.5") == 1800 && M3UPlaylist.shiftSeconds("-48") == -172_800)
        for bad in ["", "-", "1.2.3", "49", "9999999999999999999999", "1e3", "one", "--1"] { #expect(M3UPlaylist.shiftSeconds(bad) == nil, "\(bad)") }
    }

    @Test func namesAreComparedAsTheContractSays() {
        #expect(ChannelNameKey("RTÉ One HD") == ChannelNameKey("rte one"))
        #expect(ChannelNameKey("RTE-One FHD (1080p) [Geo-blocked]") == ChannelNameKey("RTÉ One"))
        #expect(ChannelNameKey("BBC Two UHD") == ChannelNameKey("BBC TWO 4K"))
        #expect(ChannelNameKey("Bravo +1") != ChannelNameKey("Bravo"))
        #expect(ChannelNameKey("Bravo+1 HD") == ChannelNameKey("bravo +1"))
        #expect(ChannelNameKey("Canal+") != ChannelNameKey("Canal"))
        #expect(ChannelNameKey("HD") == ChannelNameKey("hd"))   // a name that is only a suffix keeps it
    }

    @Test func matchingFollowsTheOrderOfTheRules() {
        let matcher = PlaylistMatcher(channels: [GuideChannel(id: "TG4.ie", names: ["TG4"]), GuideChannel(id: "bravo.nz", names: ["Bravo"]),
                                                 GuideChannel(id: "bravo1.nz", names: ["Bravo +1"])],
                                      aliases: ["tg4.alias": "TG4.ie"])
        func match(_ id: String?, _ name: String) -> (String?, Int64) {
            let m = matcher.match(PlaylistEntry(line: 1, title: name, tvgID: id))
            return (m.channel, m.shift)
        }
        #expect(match("TG4.ie@SD", "x") == ("TG4.ie", 0))
        #expect(match("tg4.alias", "x") == ("TG4.ie", 0))
        #expect(match("bravo.nz@Plus1", "Bravo +1") == ("bravo1.nz", 0))       // a channel of its own
        #expect(match("bravo.nz@Plus2", "Bravo +2") == ("bravo.nz", 7200))     // none: moved
        #expect(match(nil, "BRAVO HD") == ("bravo.nz", 0))
        #expect(match(nil, "Bravo +3") == (nil, 0))
        #expect(matcher.match(PlaylistEntry(line: 1, title: "Bravo +3")).nearest.first == "Bravo +1")
    }
}
