import Feeds
import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import TestSupport
import Testing
import XMLTVImport

/// XMLTV file → import → export → two independent real parsers (Python `icalendar` and `ical`),
/// decoded values compared with the programmes of the source file: folds inside multi-byte
/// characters, commas, semicolons, backslashes, newlines, CJK, emoji and categories.
@Suite struct EndToEndParserTests {

    struct Source {
        var title: String
        var subTitle: String? = nil
        var desc: String? = nil
        var categories: [String] = []
        var episodeNum: String? = nil
        var start: Int64
        var stop: Int64?
        /// What SUMMARY must decode to.
        var summary: String
    }

    static let base = UTCTime.seconds(year: 2030, month: 10, day: 1, hour: 6)
    static let channelName = "Das Erste, HD; \"Test\" \\ Köln 日本 📺"

    static let programmes: [Source] = {
        let titles: [(String, String?, String?, [String])] = [
            (String(repeating: "Größenwahn über dem Äquator – ", count: 4) + "Ende",
             nil, "Folge 1: Müller, Şahin; Gäste.\nZweite Zeile\nDritte", ["Nachrichten", "Wetter, Verkehr", "Sport; live", "C:\\Programme"]),
            ("Tom, Jerry; and C:\\path\\to\\file", "Teil 2; Ende, aus", "Backslash at end \\", ["a;b"]),
            (String(repeating: "日本語のテレビ番組", count: 12), nil, String(repeating: "中文节目介绍，包括逗号；和分号。", count: 8), ["ドラマ", "アニメ"]),
            (String(repeating: "📺🎬 👨‍👩‍👧‍👦 🇩🇪🇫🇷 👍🏽 ", count: 8) + "🏁", nil, "Emoji 😀 at the end 😀", []),
            (String(repeating: "ä", count: 40) + String(repeating: "€", count: 30) + String(repeating: "𝄞", count: 25), nil, nil, ["Ünïcödé"]),
            (String(repeating: "x", count: 66) + "é" + String(repeating: "ü", count: 20), nil, "Line one\nline two, three; four \\ five", ["Film"]),
            ("Les Misérables: \"Ça va?\" <live> & more", nil, nil, ["Théâtre"]),
        ]
        var out: [Source] = []
        for (i, t) in titles.enumerated() {
            let start = base + Int64(i) * 3600
            var summary = t.0
            if let sub = t.1 { summary += ": " + sub }
            var s = Source(title: t.0, subTitle: t.1, desc: t.2, categories: t.3, start: start, stop: start + 3600, summary: summary)
            if i == 1 { s.episodeNum = "1.4."; s.summary += " (S2 E5)" }
            out.append(s)
        }
        return out
    }()

    static func guide() -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv>
              <channel id="dasErste.de"><display-name>\(GuideText.escaped(channelName))</display-name></channel>

            """
        for p in programmes {
            xml += "  <programme start=\"\(GuideText.time(p.start))\"\(p.stop.map { " stop=\"\(GuideText.time($0))\"" } ?? "") channel=\"dasErste.de\">"
            xml += "<title>\(GuideText.escaped(p.title))</title>"
            if let s = p.subTitle { xml += "<sub-title>\(GuideText.escaped(s))</sub-title>" }
            if let d = p.desc { xml += "<desc>\(GuideText.escaped(d))</desc>" }
            for c in p.categories { xml += "<category>\(GuideText.escaped(c))</category>" }
            if let e = p.episodeNum { xml += "<episode-num system=\"xmltv_ns\">\(e)</episode-num>" }
            xml += "</programme>\n"
        }
        return xml + "</tv>\n"
    }

    @Test("icalendar and ical decode every exported programme exactly as the XMLTV file had it",
          .enabled(if: FeedParsers.isInstalled, "needs the venv with icalendar and ical: run scripts/install-deps"))
    func parsersReadBackTheImportedGuide() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/guide.xml"
        try Self.guide().write(toFile: file, atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([file], now: Self.base)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = Self.base
        options.filteredFeeds = [FilteredFeed(name: "unicode", title: "Ünïcödé, feed; \\ 日本", titlePattern: "[^\\x00-\\x7F]"),
                                 FilteredFeed(name: "nothing", titlePattern: "^matches nothing$")]
        let report = try FeedExporter(store: s.store, options: options).export()
        #expect(report.written.contains("dasErste.de.ics"))

        let channelFeed = directory + "/feeds/dasErste.de.ics"
        let filteredFeed = directory + "/feeds/filter~unicode.ics"
        let emptyFeed = directory + "/feeds/filter~nothing.ics"
        let output = try FeedParsers.parse([channelFeed, filteredFeed, emptyFeed])

        // A filtered feed that matches nothing is still a valid calendar (RFC 5545 wants a component).
        for library in ["icalendar", "ical"] {
            let parsed = output.files[emptyFeed]?[library]
            #expect(parsed?.error == nil && parsed?.events?.isEmpty == true, "\(library): \(String(describing: parsed?.error))")
        }
        let expectations: [(String, [Source], String)] = [
            (channelFeed, Self.programmes, Self.channelName),
            (filteredFeed, Self.programmes.filter { $0.summary.unicodeScalars.contains { !$0.isASCII } }, "Ünïcödé, feed; \\ 日本"),
        ]
        for (path, sources, calendarName) in expectations {
            for library in ["icalendar", "ical"] {
                let parsed = try #require(output.files[path]?[library], "\(library) gave nothing for \(path)")
                if let error = parsed.error {
                    Issue.record("\(library) \(output.versions[library] ?? "?") rejected \(path): \(error)")
                    continue
                }
                if library == "icalendar" {
                    // icalendar 7.3 keeps NAME and X-WR-CALNAME undecoded (vUnknown): the escaped form.
                    let escaped = calendarName.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ";", with: "\\;")
                        .replacingOccurrences(of: ",", with: "\\,")
                    #expect(parsed.calendar?.name == escaped && parsed.calendar?.x_wr_calname == escaped,
                            "\(path): \(String(describing: parsed.calendar))")
                }
                let events = parsed.events ?? []
                try #require(events.count == sources.count, "\(library): \(events.count) events in \(path), expected \(sources.count)")
                for (source, got) in zip(sources, events) {
                    let context = "\(library), \(path), \(source.title.prefix(20))"
                    #expect(got.uid == FeedExporter.uid(channelID: "dasErste.de", start: source.start, clumpIndex: 0, domain: options.uidDomain), "\(context)")
                    #expect(got.dtstart == iso(source.start), "\(context)")
                    #expect(got.dtend == iso(source.stop!), "\(context)")
                    #expect(Array(got.summary.utf8) == Array(source.summary.utf8), "\(context): summary \(got.summary.debugDescription)")
                    #expect(got.description.map { Array($0.utf8) } == source.desc.map { Array($0.utf8) },
                            "\(context): description \(String(describing: got.description).debugDescription)")
                    #expect(got.location.map { Array($0.utf8) } == Array(Self.channelName.utf8), "\(context): location \(String(describing: got.location))")
                    #expect(got.sequence == 0, "\(context)")
                    if library == "ical" && source.categories.contains(where: { $0.contains(",") }) {
                        // ical 14.3.1 splits CATEGORIES at escaped commas too; the file is right
                        // (icalendar and the raw checks agree), so only the comma-free ones are checked.
                        #expect(source.categories.filter { !$0.contains(",") }.allSatisfy(got.categories.contains), "\(context): \(got.categories)")
                    } else {
                        #expect(got.categories.map { Array($0.utf8) } == source.categories.map { Array($0.utf8) }, "\(context): \(got.categories)")
                    }
                }
            }
        }

        // Folding: no physical line over 75 octets, none that splits a UTF-8 sequence.
        for path in [channelFeed, filteredFeed] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            for line in String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n") {
                #expect(line.utf8.count <= 75, "\(line)")
            }
            var start = 0
            let bytes = [UInt8](data)
            for i in 0..<bytes.count where i + 1 < bytes.count && bytes[i] == 0x0D && bytes[i + 1] == 0x0A {
                let physical = Array(bytes[start..<i])
                #expect(String(validating: physical, as: UTF8.self) != nil, "a fold splits a UTF-8 sequence in \(path) at octet \(i)")
                start = i + 2
            }
        }
    }
}
