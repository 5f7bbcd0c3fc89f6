import Foundation
import Listings
import ObjectGraph
import Playlists
import TestSupport
import Testing
import XMLTVExport

/// The exports write channels on several threads (`ChannelWorkers`): the bytes must be those of
/// one thread, whatever the number of threads and however the channels' sizes differ.
@Suite struct ThreadedExportTests {
    /// 40 channels of a few programmes with credits, categories and text to escape, and two
    /// channels of about 2.5 MB each, first and second by id: the second is written while the
    /// first is handed out, and holds more than a channel may hold while it waits for its turn.
    static func guide() -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n"
        let ids = (0..<40).map { String(format: "c%02d.example", $0) } + ["big.example", "big2.example"]
        for id in ids { xml += "<channel id=\"\(id)\"><display-name>\(id) &amp; co</display-name></channel>\n" }
        let day: Int64 = 1_893_456_000   // 2030-01-01
        for (c, id) in ids.enumerated() {
            let big = id.hasPrefix("big")
            let count = big ? 2500 : (c % 7) * 3 + 1
            for p in 0..<count {
                let start = day + Int64(p) * 1800
                xml += "<programme start=\"\(GuideText.time(start))\" stop=\"\(GuideText.time(start + 1800))\" channel=\"\(id)\">"
                xml += "<title>Show \(p) &lt;\(c)&gt;</title>"
                xml += "<desc>" + String(repeating: "A \"long\" line &amp; more, for \(id). ", count: big ? 20 : 1) + "</desc>"
                if p % 3 == 0 { xml += "<credits><director>D\(p)</director><actor role=\"R\">A\(c)</actor></credits>" }
                if p % 2 == 0 { xml += "<category lang=\"en\">Cat \(p % 5)</category><category>Kids</category>" }
                xml += "</programme>\n"
            }
        }
        return xml + "</tv>\n"
    }

    @Test func everyNumberOfThreadsWritesTheSameBytes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.guide().write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        for name in ["out.xml", "out.xml.gz"] {
            let one = try XMLTVExporter(store: store, threads: 1).export(to: dir + "/1-" + name)
            #expect(one.channels == 42 && one.programmes > 5000)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/1-" + name))
            #expect(bytes.count > (name.hasSuffix(".gz") ? 1_000 : 4_000_000))
            for threads in [2, 3, 5] {
                let report = try XMLTVExporter(store: store, threads: threads).export(to: dir + "/\(threads)-" + name)
                #expect(report.channels == one.channels && report.programmes == one.programmes)
                #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/\(threads)-" + name)) == bytes, "\(threads) threads, \(name)")
            }
        }
    }

    @Test func aPlaylistsGuideIsTheSameOnEveryNumberOfThreads() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.guide().write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        // Every other channel, one shifted by an hour, the big ones and one that matches nothing.
        var m3u = "#EXTM3U\n"
        for c in stride(from: 0, to: 40, by: 2) {
            m3u += "#EXTINF:-1 tvg-id=\"\(String(format: "c%02d.example", c))\"\(c == 4 ? " tvg-shift=\"1\"" : ""),Channel \(c)\nhttp://s.invalid/\(c)\n"
        }
        m3u += "#EXTINF:-1 tvg-id=\"big.example\",Big\nhttp://s.invalid/big\n#EXTINF:-1 tvg-id=\"big2.example\",Big 2\nhttp://s.invalid/big2\n#EXTINF:-1 tvg-id=\"none.example\",Nothing\nhttp://s.invalid/none\n"
        let playlist = try M3UPlaylist(bytes: Data(m3u.utf8), file: "tv.m3u")
        let fill = PlaylistFill(length: 3600)
        let one = try PlaylistGuideExporter(store: store, aliases: [:], fill: fill, threads: 1).export(playlist, to: dir + "/1.xml")
        #expect(one.channels == 23 && one.programmes > 5000 && one.placeholders > 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/1.xml"))
        for threads in [2, 4] {
            let report = try PlaylistGuideExporter(store: store, aliases: [:], fill: fill, threads: threads).export(playlist, to: dir + "/\(threads).xml")
            #expect(report.channels == one.channels && report.programmes == one.programmes && report.placeholders == one.placeholders)
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/\(threads).xml")) == bytes, "\(threads) threads")
        }
    }
}
