import Foundation
import Job
import TestSupport
import Testing

/// Channel aliases and source priorities (CONTRACT.md, "Several sources, one guide"), through the binary.
@Suite struct SeveralSourcesTests {
    static let aliasConfig = """
        {"channels": {"bbc1.uk": {"aliases": ["BBC1.HD", "bbcone.uk"]}, "itv1.uk": {"aliases": ["ITV"]}},
         "whitelists": {"Programme": ["stop", "title"]}}
        """

    @Test func aliasesMapSourceIdsWhileReadingAndUnmappedIdsStay() throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide(channels: ["BBC1.HD", "other.test"]))
        try box.write("c.json", Self.aliasConfig)
        let r = box.importing(["a.xml"], db: "tv.sqlite", config: "c.json") { $0.source = "a" }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(box.exporting(db: "tv.sqlite", xmltv: "guide.xml").status == 0)
        let text = try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8)
        #expect(text.contains("<channel id=\"bbc1.uk\">") && text.contains("<display-name>Name of BBC1.HD</display-name>"))
        #expect(text.contains("channel=\"bbc1.uk\"") && !text.contains("BBC1.HD\""))
        #expect(text.contains("<channel id=\"other.test\">"), "an unmapped id stays as it is")
        // Without the aliases the same file is the source's own ids again: a second source, say.
        let plain = box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "b" }
        #expect(plain.status == 0, "stderr: \(plain.stderr)")
        #expect(box.exporting(db: "tv.sqlite", xmltv: "guide.xml").status == 0)
        #expect(try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8).contains("<channel id=\"BBC1.HD\">"))
    }

    @Test func runAppliesTheConfigsAliasesAndRemembersPriorities() throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide(channels: ["bbcone.uk"]))
        try box.write("c.json", """
            {"database": "tv.sqlite", "output": "out", "xmltv": "guide.xml",
             "channels": {"bbc1.uk": {"aliases": ["bbcone.uk"]}},
             "sources": [{"name": "a", "url": "\(box.path("a.xml"))", "priority": 10}]}
            """)
        let r = box.nightly(config: "c.json")
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8).contains("<channel id=\"bbc1.uk\">"))
        #expect(FileManager.default.fileExists(atPath: box.path("out/bbc1.uk.ics")))
        let store = try StoreAccess.open(path: box.path("tv.sqlite"), model: StoreAccess.model())
        #expect(try SourcePriorities.all(in: store) == ["a": 10])
    }

    @Test func importRemembersItsPriorityUntilGivenAnother() throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide())
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a"; $0.priority = 5 }.status == 0)
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a" }.status == 0)
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "b"; $0.priority = -2; $0.flags.dryRun = true }.status == 0)
        let store = try StoreAccess.open(path: box.path("tv.sqlite"), model: StoreAccess.model())
        #expect(try SourcePriorities.all(in: store) == ["a": 5], "kept without --priority; a dry run remembers nothing")
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a"; $0.priority = 1 }.status == 0)
        #expect(try SourcePriorities.all(in: store) == ["a": 1])
    }

    @Test(arguments: [
        (#"{"channels": {"a.uk": {"aliases": ["x"]}, "b.uk": {"aliases": ["x"]}}}"#, "channels.b.uk.aliases"),
        (#"{"channels": {"a.uk": {"aliases": ["b.uk"]}, "b.uk": {"aliases": []}}}"#, "channels.a.uk.aliases"),
        (#"{"channels": {"a.uk": {"names": ["x"]}}}"#, "channels.a.uk.names"),
        (#"{"channels": ["a.uk"]}"#, "'channels'"),
        (#"{"sources": [{"name": "a", "url": "a.xml", "priority": 1.5}]}"#, "sources[0].priority"),
        (#"{"sources": [{"name": "timeshift:a", "url": "a.xml"}]}"#, "sources[0].name"),
        (#"{"sources": [{"name": "a", "url": "a.xml"}, {"name": "", "url": "a.xml"}]}"#, "sources[1].name"),
        (#"{"sources": [{"name": "a", "url": "a.xml"}, {"name": "a\u0000b", "url": "a.xml"}]}"#, "sources[1].name"),
        (#"{"sources": [{"name": "a\nb", "url": "a.xml"}]}"#, "sources[0].name"),
    ])
    func badAliasesAndPrioritiesAreConfigurationErrors(config: String, key: String) throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide())
        try box.write("c.json", config)
        let r = box.importing(["a.xml"], db: "tv.sqlite", config: "c.json")
        #expect(r.status == 78, "stderr: \(r.stderr)")
        #expect(r.stderr.contains(key), "stderr: \(r.stderr)")
    }
}

/// A source may not be named like the timeshifted channels' rows ("timeshift:..."), which the
/// rules make and replace: `import --source` refuses it as a usage error, before the database
/// is touched.
@Suite struct SourceNameTests {
    @Test(arguments: ["timeshift:uk", "timeshift:", "", "tab\tname", "line\nbreak"])
    func aReservedOrEmptySourceNameIsRefused(name: String) throws {
        let box = try Sandbox()
        try box.write("a.xml", makeGuide())
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a" }.status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: box.path("tv.sqlite")))
        let r = box.importing(["a.xml"], db: "tv.sqlite") { $0.source = name }
        #expect(r.status == 64, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("--source"), "stderr: \(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("tv.sqlite"))) == before)
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "timeshifted" }.status == 0, "only the prefix is reserved")
    }
}

/// Where two sources overlap on a channel, feeds and the XMLTV export show what the contract's
/// resolution keeps, and a priority change turns it around.
@Suite struct OverlappingSourcesTests {
    static func guide(_ programmes: [(start: Int, stop: Int, title: String)]) -> String {
        let base = guideBase()
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n  <channel id=\"bbc1.uk\"><display-name>BBC One</display-name></channel>\n"
        for p in programmes {
            xml += "  <programme start=\"\(GuideText.time(base.addingTimeInterval(Double(p.start) * 60)))\" "
                + "stop=\"\(GuideText.time(base.addingTimeInterval(Double(p.stop) * 60)))\" channel=\"bbc1.uk\"><title>\(p.title)</title></programme>\n"
        }
        return xml + "</tv>\n"
    }

    @Test func lowerSourcesFillGapsAndNeverDoubleASlot() throws {
        let box = try Sandbox()
        try box.write("a.xml", Self.guide([(0, 60, "News A")]))
        try box.write("b.xml", Self.guide([(30, 60, "Late B"), (60, 120, "Film B")]))
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a" }.status == 0)
        #expect(box.importing(["b.xml"], db: "tv.sqlite") { $0.source = "b" }.status == 0)
        func shown() throws -> (xmltv: String, feed: String) {
            #expect(box.exporting(db: "tv.sqlite", out: "feeds", xmltv: "guide.xml").status == 0)
            return (try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8),
                    try String(contentsOfFile: box.path("feeds/bbc1.uk.ics"), encoding: .utf8))
        }
        var (xmltv, feed) = try shown()
        for text in [xmltv, feed] {
            #expect(text.contains("News A") && text.contains("Film B") && !text.contains("Late B"), "\(text)")
        }
        // b above a: b's whole schedule, and a's programme overlaps it.
        #expect(box.importing(["b.xml"], db: "tv.sqlite") { $0.source = "b"; $0.priority = 1 }.status == 0)
        (xmltv, feed) = try shown()
        for text in [xmltv, feed] {
            #expect(!text.contains("News A") && text.contains("Film B") && text.contains("Late B"), "\(text)")
        }
    }

    /// A channel that one source alone has is stored once, as shown; when a second source brings
    /// it, it becomes shared (each source's rows kept apart) without a visible change, a local
    /// edit survives, and `status` says what each source provides and what it shows.
    @Test func aChannelBecomesSharedWhenASecondSourceBringsIt() throws {
        let box = try Sandbox()
        try box.write("a.xml", Self.guide([(0, 60, "News A"), (60, 120, "Show A")]))
        try box.write("b.xml", Self.guide([(0, 60, "News B"), (120, 180, "Film B")]))
        #expect(box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a" }.status == 0)
        func count(_ entity: String) throws -> Int {
            let store = try StoreAccess.open(path: box.path("tv.sqlite"), model: StoreAccess.model())
            return try store.read { try $0.count(entity) }
        }
        #expect(try count("SourceProgramme") == 0, "one source: no source rows")
        let edit = box.edit("Channel", "bbc1.uk", ["customName=Mine"], db: "tv.sqlite")
        #expect(edit.status == 0, "stderr: \(edit.stderr)")
        let b = box.importing(["b.xml"], db: "tv.sqlite") { $0.source = "b"; $0.flags.json = true }
        #expect(b.status == 0, "stderr: \(b.stderr)")
        #expect(try count("SourceProgramme") == 4, "a's two programmes copied to its own rows, b's two beside them")
        #expect(try count("Programme") == 3, "a's two, and b's film in the gap")
        // b's own rows: two inserted; the shown guide: only the film.
        let report = try JSONSerialization.jsonObject(with: Data(b.stdout.utf8)) as? [String: Any]
        let summary = report?["summary"] as? [String: [String: Int]]
        #expect(summary?["Programme"]?["inserted"] == 2)
        let status = box.status(db: "tv.sqlite")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  source a: 1 channels, 2 programmes"), "a provides what it shows: \(status.stdout)")
        #expect(lines.contains("  source b: 1 channels, 2 programmes (shown: 0 channels, 1 programmes; several sources share channels)"), "\(status.stdout)")
        #expect(box.exporting(db: "tv.sqlite", xmltv: "guide.xml").status == 0)
        let xmltv = try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8)
        #expect(xmltv.contains("News A") && xmltv.contains("Show A") && xmltv.contains("Film B") && !xmltv.contains("News B"), "\(xmltv)")
        let store = try StoreAccess.open(path: box.path("tv.sqlite"), model: StoreAccess.model())
        let channel = try store.read { try $0.first("Channel", keys: ["customName"]) }
        #expect(channel?["customName"] == .string("Mine"), "the local edit survives the channel becoming shared")
    }

    static func channelGuide(displayName: String, icon: String? = nil, _ programmes: [(start: Int, stop: Int, title: String, desc: String?)]) -> String {
        let base = guideBase()
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n  <channel id=\"bbc1.uk\"><display-name>\(displayName)</display-name>"
            + (icon.map { "<icon src=\"\($0)\"/>" } ?? "") + "</channel>\n"
        for p in programmes {
            xml += "  <programme start=\"\(GuideText.time(base.addingTimeInterval(Double(p.start) * 60)))\" "
                + "stop=\"\(GuideText.time(base.addingTimeInterval(Double(p.stop) * 60)))\" channel=\"bbc1.uk\"><title>\(p.title)</title>"
                + (p.desc.map { "<desc>\($0)</desc>" } ?? "") + "</programme>\n"
        }
        return xml + "</tv>\n"
    }

    /// The issue's two fighting sources: a (18:00 "News A", 19:00-20:00) and b (18:00 "News B"
    /// with a description, 19:30-20:00, 20:00-21:00), both on bbc1.uk under other display names.
    static let fightingA = channelGuide(displayName: "BBC One", [(0, 60, "News A", nil), (60, 120, "Show A", nil)])
    static let fightingB = channelGuide(displayName: "BBC1", icon: "http://example.org/bbc1.png",
                                        [(0, 60, "News B", "What happened"), (90, 120, "Late B", nil), (120, 180, "Film B", nil)])

    /// a, b, a: the third import changes nothing, and feeds and the XMLTV file keep bytes and mtime.
    @Test func importingABAChangesNothingTheThirdTime() throws {
        let box = try Sandbox()
        try box.write("a.xml", Self.fightingA)
        try box.write("b.xml", Self.fightingB)
        try box.write("c.json", #"{"database": "tv.sqlite", "output": "feeds", "xmltv": "guide.xml", "sources": [{"name": "x", "url": "a.xml"}]}"#)
        for source in ["a", "b"] {
            #expect(box.importing(["\(source).xml"], db: "tv.sqlite") { $0.source = source }.status == 0)
        }
        #expect(box.exporting(db: "tv.sqlite", out: "feeds", xmltv: "guide.xml").status == 0)
        let before = box.snapshot(["feeds", "guide.xml"])
        let guide = try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8)
        // a wins the channel and its slots; b fills 20:00-21:00 and a's empty description and icon.
        #expect(guide.contains("<display-name>BBC One</display-name>") && !guide.contains(">BBC1<"), "\(guide)")
        #expect(guide.contains("http://example.org/bbc1.png") && guide.contains("What happened"), "\(guide)")
        #expect(guide.contains("News A") && guide.contains("Show A") && guide.contains("Film B"), "\(guide)")
        #expect(!guide.contains("News B") && !guide.contains("Late B"), "never the same slot twice: \(guide)")

        Thread.sleep(forTimeInterval: 1.1)
        let third = box.importing(["a.xml"], db: "tv.sqlite") { $0.source = "a"; $0.flags.json = true }
        #expect(third.status == 0, "stderr: \(third.stderr)")
        let report = try #require(parseJSON(third.stdout), "\(third.stdout)")
        let summary = try #require(report["summary"] as? [String: [String: Int]])
        for entity in ["Channel", "Programme"] {
            #expect(summary[entity]?["inserted"] == 0 && summary[entity]?["updated"] == 0 && summary[entity]?["deleted"] == 0, "\(summary)")
        }
        #expect((report["changes"] as? [Any])?.isEmpty == true, "\(third.stdout)")
        #expect((report["sources"] as? [[String: Any]])?.first?["status"] as? String == "unchanged")
        #expect(box.exporting(db: "tv.sqlite", out: "feeds", xmltv: "guide.xml").status == 0)
        #expect(sameBytesAndTimes(before, box.snapshot(["feeds", "guide.xml"])), "the third import rewrote a feed or the XMLTV file")
    }

    /// Local edits attach to the canonical channel and the shown programme: they survive the
    /// winner changing (b ranked above a, then a again) and a source that spells the channel
    /// under an alias.
    @Test func localEditsFollowTheCanonicalChannelAndTheShownProgramme() throws {
        let box = try Sandbox()
        try box.write("c.json", SeveralSourcesTests.aliasConfig)
        try box.write("a.xml", Self.fightingA)
        try box.write("b.xml", Self.fightingB.replacingOccurrences(of: "\"bbc1.uk\"", with: "\"BBC1.HD\""))
        #expect(box.importing(["a.xml"], db: "tv.sqlite", config: "c.json") { $0.source = "a" }.status == 0)
        let slot = "bbc1.uk/" + GuideText.time(guideBase()).prefix(14)
        #expect(box.edit("Channel", "bbc1.uk", ["customName=Mine"], db: "tv.sqlite").status == 0)
        #expect(box.edit("Programme", slot, ["note=record it"], db: "tv.sqlite").status == 0)
        func shown() throws -> String {
            let r = try box.run(["/bin/sh", "-c", "sqlite3 tv.sqlite \"SELECT c.xmltvId, c.customName, p.title, p.source, p.note FROM Programme p JOIN Channel c ON p.channel = c._pk ORDER BY p.start LIMIT 1\""],
                                executable: "/usr/bin/env")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try shown() == "bbc1.uk|Mine|News A|a|record it")
        // b, spelled BBC1.HD, above a: its 18:00 programme is shown now, with the same edits.
        #expect(box.importing(["b.xml"], db: "tv.sqlite", config: "c.json") { $0.source = "b"; $0.priority = 1 }.status == 0)
        #expect(try shown() == "bbc1.uk|Mine|News B|b|record it")
        // a above b again, and a re-import of a: still the same edits.
        #expect(box.importing(["a.xml"], db: "tv.sqlite", config: "c.json") { $0.source = "a"; $0.priority = 2; $0.flags.force = true }.status == 0)
        #expect(try shown() == "bbc1.uk|Mine|News A|a|record it")
        let channels = try box.run(["sqlite3", "tv.sqlite", "SELECT count(*) FROM Channel"], executable: "/usr/bin/env")
        #expect(channels.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "one canonical channel: \(channels.stdout)")
    }

    /// When b changes a programme that a shows over, nothing shown moves; when a drops the
    /// channel, b's programmes take over and only that channel's feed changes.
    @Test func dirtyTrackingFollowsWhatIsShown() throws {
        let box = try Sandbox()
        // One time for both of other.test's guides: the hour may turn between the runs.
        let base = guideBase()
        try box.write("a.xml", Self.fightingA.replacingOccurrences(of: "</tv>", with: "  <channel id=\"other.test\"><display-name>Other</display-name></channel>\n"
            + "  <programme start=\"\(GuideText.time(base))\" stop=\"\(GuideText.time(base.addingTimeInterval(3600)))\" channel=\"other.test\"><title>Other</title></programme>\n</tv>"))
        try box.write("b.xml", Self.fightingB)
        try box.write("c.json", #"{"database": "tv.sqlite", "output": "feeds", "sources": [{"name": "a", "url": "a.xml", "priority": 1}, {"name": "b", "url": "b.xml"}]}"#)
        #expect(box.nightly(config: "c.json").status == 0)
        let before = box.snapshot(["feeds"])
        Thread.sleep(forTimeInterval: 1.1)
        try box.write("b.xml", Self.fightingB.replacingOccurrences(of: "Late B", with: "Late B, retitled"))
        let hidden = box.nightly(config: "c.json")
        #expect(hidden.status == 0, "stderr: \(hidden.stderr)")
        #expect(sameBytesAndTimes(before, box.snapshot(["feeds"])), "a change b shows nothing of rewrote a feed: \(hidden.stdout)")

        // a drops bbc1.uk: b's programmes take over that channel; other.test's feed stays.
        try box.write("a.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv><channel id="other.test"><display-name>Other</display-name></channel>
            <programme start="\(GuideText.time(base))" stop="\(GuideText.time(base.addingTimeInterval(3600)))" channel="other.test"><title>Other</title></programme></tv>
            """)
        let dropped = box.nightly(config: "c.json") { $0.flags.force = true }
        #expect(dropped.status == 0, "stderr: \(dropped.stderr)")
        let after = box.snapshot(["feeds"])
        let other = box.path("feeds/other.test.ics"), bbc = box.path("feeds/bbc1.uk.ics")
        #expect(after[other]?.0 == before[other]?.0 && after[other]?.1 == before[other]?.1, "other.test's feed was rewritten")
        let feed = try String(contentsOfFile: bbc, encoding: .utf8)
        #expect(feed.contains("News B") && feed.contains("retitled") && !feed.contains("News A"), "\(feed)")
    }

    /// Two databases fed the same sources in opposite orders export the same bytes, valid by the
    /// XMLTV DTD and `tv_validate_file`; importing the export into an empty database and exporting
    /// again gives the same bytes.
    @Test(.enabled(if: Tool.isInstalled("xmllint") && Tool.isInstalled("tv_validate_file") && FileManager.default.fileExists(atPath: "/usr/share/xmltv/xmltv.dtd"),
                   "needs xmllint, tv_validate_file and the XMLTV DTD (scripts/install-deps: xmltv-util)"))
    func oppositeOrdersExportTheSameValidBytes() throws {
        let box = try Sandbox()
        try box.write("a.xml", Self.fightingA)
        try box.write("b.xml", Self.fightingB.replacingOccurrences(of: "bbc1.uk", with: "bbc1.uk").replacingOccurrences(of: "</tv>", with: "")
            + "  <channel id=\"two.test\"><display-name>Two</display-name></channel>\n"
            + "  <programme start=\"\(GuideText.time(guideBase()))\" stop=\"\(GuideText.time(guideBase().addingTimeInterval(1800)))\" channel=\"two.test\"><title>Two</title></programme>\n</tv>\n")
        for (db, order) in [("ab.sqlite", ["a", "b"]), ("ba.sqlite", ["b", "a"])] {
            for source in order { #expect(box.importing(["\(source).xml"], db: db) { $0.source = source }.status == 0) }
            #expect(box.exporting(db: db, xmltv: db + ".xml").status == 0)
        }
        let ab = try #require(box.bytes("ab.sqlite.xml")), ba = try #require(box.bytes("ba.sqlite.xml"))
        #expect(ab == ba, "opposite orders exported different bytes")
        let dtd = try box.run(["--noout", "--nonet", "--dtdvalid", "/usr/share/xmltv/xmltv.dtd", "ab.sqlite.xml"], executable: try #require(Tool.path("xmllint")))
        #expect(dtd.status == 0, "xmllint: \(dtd.stderr)")
        let validate = try box.run(["ab.sqlite.xml"], executable: try #require(Tool.path("tv_validate_file")), environment: ["XMLTV_SUPPLEMENT": "/usr/share/xmltv"])
        #expect(validate.status == 0, "tv_validate_file: \(validate.stdout) \(validate.stderr)")
        #expect(box.importing(["ab.sqlite.xml"], db: "round.sqlite") { $0.source = "x" }.status == 0)
        #expect(box.exporting(db: "round.sqlite", xmltv: "round.xml").status == 0)
        #expect(box.bytes("round.xml") == ab, "the round trip changed the export")
    }
}
