import Feeds
import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import TestSupport
import Testing
import XMLTVImport

/// The Job-less path of a nightly run: import with `XMLTVImport.importGuide` into a store with the
/// observers registered by hand, export only the dirty channels' feeds, and compare with a full
/// export. Uses the shared guide generator (../shared/tools/xmltvgen.py).
@Suite(.serialized) struct IncrementalExportTests {
    static let firstDay = UTCTime.seconds(year: 2030, month: 10, day: 1)

    static func generate(revision: Int, into directory: String) throws -> String {
        let out = directory + "/guide-r\(revision).xml"
        try GuideGenerator.run(["--channels", "12", "--days", "2", "--first-day", "20301001",
                                "--revision", "\(revision)", "--change-rate", "0.02", "--out", out])
        return out
    }

    static func options(_ directory: String) -> ExportOptions {
        var options = ExportOptions(outputDirectory: directory)
        options.now = firstDay
        options.filteredFeeds = [
            FilteredFeed(name: "news", title: "All the news", titlePattern: "\\bnews\\b"),
            FilteredFeed(name: "movies", categories: ["Movie"]),
        ]
        return options
    }

    @Test(.enabled(if: Shared.hasGenerator, "needs ../shared/tools/xmltvgen.py and python3"))
    func revisionOneRewritesOnlyWhatChanged() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let r0 = try Self.generate(revision: 0, into: directory)
        let r1 = try Self.generate(revision: 1, into: directory)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        s.clock.now = Self.firstDay - 86400
        try s.importGuide([r0], now: Self.firstDay)

        // Export twice: the second writes nothing, same bytes, same mtimes.
        let feeds = directory + "/feeds"
        let first = try FeedExporter(store: s.store, options: Self.options(feeds)).export()
        #expect(first.written.contains("filter~news.ics") && first.written.contains("filter~movies.ics") && first.written.contains("index.html"))
        #expect(first.written.filter { !$0.hasPrefix("filter~") && $0.hasSuffix(".ics") }.count == 12)
        let before = try snapshot(feeds)
        var mtimes: [String: Date] = [:]
        for name in before.keys { mtimes[name] = try mtime(feeds + "/" + name) }
        Thread.sleep(forTimeInterval: 1.1)
        let second = try FeedExporter(store: s.store, options: Self.options(feeds)).export()
        #expect(second.written.isEmpty)
        #expect(try snapshot(feeds) == before)
        for name in before.keys { #expect(try mtime(feeds + "/" + name) == mtimes[name], "\(name)") }
        // Nothing dirty: an incremental export keeps everything too.
        s.dirty.reset()
        let idle = try FeedExporter(store: s.store, options: Self.options(feeds)).export(channels: s.dirty.dirtyOwners)
        #expect(idle.written.isEmpty && idle.removed.isEmpty)
        #expect(try snapshot(feeds) == before)

        // Revision 1, a day later.
        s.clock.now = Self.firstDay
        let imported = try s.importGuide([r1], now: Self.firstDay)
        #expect(imported.programmes.updated + imported.programmes.inserted + imported.programmes.deleted > 0)
        let dirty = s.dirty.dirtyOwners
        #expect(!dirty.isEmpty && dirty.count < 12, "dirty channels: \(dirty.count)")
        let dirtyFiles = try s.store.read { context in
            try Set(dirty.compactMap { try context.object(ObjectID(entity: "Channel", rowID: $0), keys: ["xmltvId"])?["xmltvId"].stringValue }
                .map(FeedExporter.fileName(for:)))
        }
        let incremental = try FeedExporter(store: s.store, options: Self.options(feeds)).export(channels: dirty)
        let after = try snapshot(feeds)
        let changed = Set(after.keys.filter { after[$0] != before[$0] })
        #expect(!changed.isEmpty)
        #expect(changed.subtracting(dirtyFiles).subtracting(["filter~news.ics", "filter~movies.ics", "index.html"]).isEmpty,
                "files of clean channels changed: \(changed.subtracting(dirtyFiles).sorted())")
        #expect(Set(incremental.written) == changed)
        for name in before.keys where !changed.contains(name) {
            #expect(try mtime(feeds + "/" + name) == mtimes[name], "\(name) was touched")
        }

        // The incremental result is exactly what a full export gives.
        let full = directory + "/full"
        _ = try FeedExporter(store: s.store, options: Self.options(full)).export()
        #expect(try snapshot(full) == after)

        // Changed events carry a higher SEQUENCE when their time or title changed, and a new
        // DTSTAMP when anything exported changed; untouched events keep both.
        var bumped = 0, restamped = 0
        for name in changed where name.hasSuffix(".ics") {
            let old = FeedText.events(before[name] ?? Data()), new = FeedText.events(after[name]!)
            for (uid, event) in new {
                guard let previous = old[uid] else { continue }
                let oldSequence = Int(previous["SEQUENCE"] ?? "") ?? -1, newSequence = Int(event["SEQUENCE"] ?? "") ?? -1
                if previous["DTEND"] != event["DTEND"] || previous["SUMMARY"] != event["SUMMARY"] {
                    #expect(newSequence > oldSequence, "\(name) \(uid): time or title changed, SEQUENCE \(oldSequence) → \(newSequence)")
                    #expect(event["DTSTAMP"] != previous["DTSTAMP"], "\(name) \(uid)")
                    bumped += 1
                } else if previous == event {
                    continue
                } else {
                    #expect(newSequence == oldSequence, "\(name) \(uid)")
                    if previous["DESCRIPTION"] != event["DESCRIPTION"] || previous["CATEGORIES"] != event["CATEGORIES"] {
                        #expect(event["DTSTAMP"] != previous["DTSTAMP"] && event["LAST-MODIFIED"] == event["DTSTAMP"], "\(name) \(uid)")
                        restamped += 1
                    }
                }
            }
            for (uid, event) in old where new[uid] == event {
                #expect(event["DTSTAMP"] == iso(Self.firstDay - 86400).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: ""),
                        "\(name) \(uid): an unchanged programme kept its first stamp")
            }
        }
        #expect(bumped + restamped > 0, "revision 1 changed no event in place")
    }

    @Test func aProgrammeWithoutStopGetsTheNextStartOrTheDefaultLength() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t = Self.firstDay + 6 * 3600
        let guide = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv>
              <channel id="a.tv"><display-name>A</display-name></channel>
              <programme start="\(GuideText.time(t))" channel="a.tv"><title>No stop</title></programme>
              <programme start="\(GuideText.time(t + 1800))" stop="\(GuideText.time(t + 1800))" channel="a.tv"><title>Stop equals start</title></programme>
              <programme start="\(GuideText.time(t + 3600))" stop="\(GuideText.time(t + 600))" channel="a.tv"><title>Stop before start</title></programme>
              <programme start="\(GuideText.time(t + 7200))" channel="a.tv" clumpidx="0/2"><title>Clump one</title></programme>
              <programme start="\(GuideText.time(t + 7200))" channel="a.tv" clumpidx="1/2"><title>Clump two</title></programme>
              <programme start="\(GuideText.time(t + 9000))" channel="a.tv"><title>Last, no stop</title></programme>
            </tv>
            """
        try guide.write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        // Make sure the exporter itself sees missing and bad stops, whatever the import did.
        try s.store.write { context in
            for p in try context.fetchAll("Programme", keys: ["title"]) {
                switch p["title"].stringValue {
                case "No stop", "Last, no stop", "Clump one", "Clump two": _ = try context.update(p.id, ["stop": .null])
                case "Stop equals start": _ = try context.update(p.id, ["stop": .date(t + 1800)])
                case "Stop before start": _ = try context.update(p.id, ["stop": .date(t + 600)])
                default: break
                }
            }
        }
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = Self.firstDay
        options.defaultLength = 2700
        _ = try FeedExporter(store: s.store, options: options).export()
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/feeds/a.tv.ics"))
        var ends: [String: (String, String)] = [:]
        for (_, e) in FeedText.events(data) {
            let start = e["DTSTART"] ?? "", end = e["DTEND"] ?? ""
            #expect(end > start, "\(e["SUMMARY"] ?? ""): DTEND \(end) <= DTSTART \(start)")
            ends[e["SUMMARY"] ?? ""] = (start, end)
        }
        func stamp(_ s: Int64) -> String { iso(s).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") }
        #expect(ends.count == 6)
        #expect(ends["No stop"]?.1 == stamp(t + 1800))
        #expect(ends["Stop equals start"]?.1 == stamp(t + 3600))
        #expect(ends["Stop before start"]?.1 == stamp(t + 7200))
        #expect(ends["Clump one"]?.1 == stamp(t + 9000))
        #expect(ends["Clump two"]?.1 == stamp(t + 9000))
        #expect(ends["Last\\, no stop"]?.1 == stamp(t + 9000 + 2700))
    }

    /// Every Programme update an import makes, as observers see it.
    final class ProgrammeUpdates: ContextObserver, @unchecked Sendable {
        var updates: [(rowID: Int64, keys: Set<String>)] = []
        func observedChanges(in model: ObjectModel) -> ObservedChanges { ObservedChanges(entities: ["Programme"], relationships: []) }
        func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
            updates += changes.updated.filter { $0.id.entity == "Programme" }.map { ($0.id.rowID, Set($0.changedKeys)) }
        }
    }

    @Test func aReimportStampsEachChangedProgrammeInItsOneUpdate() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t = Self.firstDay + 6 * 3600
        func guide(_ titles: [String], _ categories: [String], _ descs: [String]) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv><channel id="a.tv"><display-name>A</display-name></channel>
            \((0..<3).map { i in "<programme start=\"\(GuideText.time(t + Int64(i) * 3600))\" stop=\"\(GuideText.time(t + Int64(i + 1) * 3600))\" channel=\"a.tv\"><title>\(titles[i])</title><desc>\(descs[i])</desc><category>\(categories[i])</category></programme>" }.joined(separator: "\n"))
            </tv>
            """
        }
        try guide(["One", "Two", "Three"], ["News", "News", "News"], ["x", "x", "x"]).write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        func stamps() throws -> [String: (changedAt: Value, sequence: Value)] {
            try s.store.read { context in
                Dictionary(uniqueKeysWithValues: try context.fetchAll("Programme", keys: ["start", "changedAt", "sequence"]).map {
                    ("\($0["start"])", (changedAt: $0["changedAt"], sequence: $0["sequence"]))
                })
            }
        }
        let before = try stamps()
        // The first programme's title changes (SEQUENCE), the second's category (changedAt only),
        // the third's description (changedAt only).
        try guide(["One changed", "Two", "Three"], ["News", "Sport", "News"], ["x", "x", "y"]).write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let updates = ProgrammeUpdates()
        s.store.addObserver(updates)
        s.clock.now += 600
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        let after = try stamps()
        let rows = Dictionary(grouping: updates.updates, by: \.rowID)
        #expect(rows.count == 3, "three programmes changed: \(updates.updates)")
        for (rowID, writes) in rows {
            #expect(writes.count == 1, "programme #\(rowID) is written once, stamps and all: \(writes.map { $0.keys.sorted() })")
            #expect(writes.first?.keys.contains("changedAt") == true, "programme #\(rowID): \(writes.map(\.keys))")
        }
        for (start, stamp) in after {
            #expect(stamp.changedAt == .date(s.clock.now), "programme at \(start) restamped")
        }
        let first = "\(Value.date(t))", second = "\(Value.date(t + 3600))", third = "\(Value.date(t + 7200))"
        #expect(after[first]?.sequence == .integer((before[first]?.sequence.integerValue ?? 0) + 1), "a changed title moves SEQUENCE")
        #expect(after[second]?.sequence == before[second]?.sequence, "a changed category does not")
        #expect(after[third]?.sequence == before[third]?.sequence, "a changed description does not")

        // Again in the same second: `changedAt` stays as it was, and SEQUENCE still moves once.
        try guide(["One changed again", "Two", "Three"], ["News", "Sport", "News"], ["x", "x", "y"])
            .write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        let again = try stamps()
        #expect(again[first]?.sequence == .integer((after[first]?.sequence.integerValue ?? 0) + 1), "SEQUENCE moves once in the same second")
        #expect(again[second]?.sequence == after[second]?.sequence && again[third]?.sequence == after[third]?.sequence)
    }

    @Test func hiddenChannelsGetNoFeedAndCustomNamesWin() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t = Self.firstDay + 6 * 3600
        let guide = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv>
              <channel id="one.tv"><display-name>Display One</display-name></channel>
              <channel id="two.tv"><display-name>Display Two</display-name></channel>
              <programme start="\(GuideText.time(t))" stop="\(GuideText.time(t + 3600))" channel="one.tv"><title>Evening News</title></programme>
              <programme start="\(GuideText.time(t))" stop="\(GuideText.time(t + 3600))" channel="two.tv"><title>Night News</title></programme>
            </tv>
            """
        try guide.write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = Self.firstDay
        options.filteredFeeds = [FilteredFeed(name: "news", titlePattern: "news")]
        _ = try FeedExporter(store: s.store, options: options).export()
        #expect(FileManager.default.fileExists(atPath: directory + "/feeds/two.tv.ics"))
        try "not ours".write(toFile: directory + "/feeds/mine.ics", atomically: true, encoding: .utf8)

        // tvimport edit: two.tv hidden, one.tv renamed. The edit makes both channels dirty.
        s.dirty.reset()
        try s.store.write { context in
            let one = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("one.tv")), keys: []))
            let two = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("two.tv")), keys: []))
            _ = try context.update(one.id, ["customName": .string("My, One; Ünï")])
            _ = try context.update(two.id, ["hidden": .bool(true)])
        }
        #expect(s.dirty.dirtyOwners.count == 2)
        let report = try FeedExporter(store: s.store, options: options).export(channels: s.dirty.dirtyOwners)
        #expect(report.removed == ["two.tv.ics"])
        #expect(!FileManager.default.fileExists(atPath: directory + "/feeds/two.tv.ics"))
        #expect(FileManager.default.fileExists(atPath: directory + "/feeds/mine.ics"), "a file the exporter did not write is left alone")

        let one = try Data(contentsOf: URL(fileURLWithPath: directory + "/feeds/one.tv.ics"))
        let calendar = FeedText.calendarProperties(one)
        #expect(calendar["NAME"] == "My\\, One\\; Ünï")
        #expect(calendar["X-WR-CALNAME"] == "My\\, One\\; Ünï")
        let events = Array(FeedText.events(one).values)
        #expect(events.count == 1)
        #expect(events.first?["LOCATION"] == "My\\, One\\; Ünï")
        #expect(events.first?["SUMMARY"] == "Evening News")
        #expect(!String(decoding: one, as: UTF8.self).contains("Display One"))

        // The hidden channel's programmes leave the filtered feeds too; the index lists no hidden feed.
        let news = FeedText.events(try Data(contentsOf: URL(fileURLWithPath: directory + "/feeds/filter~news.ics")))
        #expect(news.values.map { $0["SUMMARY"] } == ["Evening News"])
        let index = try String(contentsOfFile: directory + "/feeds/index.html", encoding: .utf8)
        #expect(index.contains("My, One; Ünï") && !index.contains("Display Two") && !index.contains("two.tv.ics"))
        #expect(!index.contains("Display One"))

        // Shown again: its feed comes back.
        s.dirty.reset()
        try s.store.write { context in
            let two = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("two.tv")), keys: []))
            _ = try context.update(two.id, ["hidden": .bool(false)])
        }
        let again = try FeedExporter(store: s.store, options: options).export(channels: s.dirty.dirtyOwners)
        #expect(again.written.contains("two.tv.ics"))

        // An edit made by another process (`tvimport edit`) is not in tonight's dirty set: the
        // exporter still sees that the channel's name changed, and regenerates that feed only.
        try s.store.write { context in
            let two = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("two.tv")), keys: []))
            _ = try context.update(two.id, ["customName": .string("Zwei")])
        }
        let edited = try FeedExporter(store: s.store, options: options).export(channels: [])
        #expect(Set(edited.written) == ["two.tv.ics", "filter~news.ics", "index.html"])
        #expect(FeedText.calendarProperties(try Data(contentsOf: URL(fileURLWithPath: directory + "/feeds/two.tv.ics")))["NAME"] == "Zwei")
    }

    @Test func otherOptionsRegenerateEveryFeedWhateverIsDirty() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t = Self.firstDay + 3600
        let guide = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv>
              <programme start="\(GuideText.time(t))" stop="\(GuideText.time(t + 3600))" channel="a.tv"><title>News</title></programme>
              <programme start="\(GuideText.time(t))" stop="\(GuideText.time(t + 3600))" channel="b.tv"><title>Film</title></programme>
            </tv>
            """
        try guide.write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = Self.firstDay
        _ = try FeedExporter(store: s.store, options: options).export(channels: [])  // first export: everything
        #expect(FileManager.default.fileExists(atPath: directory + "/feeds/a.tv.ics"))
        options.uidDomain = "tv.example.org"
        options.filteredFeeds = [FilteredFeed(name: "news", titlePattern: "news")]
        let report = try FeedExporter(store: s.store, options: options).export(channels: [])
        #expect(Set(report.written) == ["a.tv.ics", "b.tv.ics", "filter~news.ics", "index.html"])
        let a = String(decoding: try Data(contentsOf: URL(fileURLWithPath: directory + "/feeds/a.tv.ics")), as: UTF8.self)
        #expect(a.contains("@tv.example.org\r\n"))
        let again = try FeedExporter(store: s.store, options: options).export(channels: [])
        #expect(again.written.isEmpty)
    }

    @Test func indexLinksResolveToFeeds() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t = Self.firstDay + 3600
        let guide = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv>
              <channel id="../x y%2F.tv"><display-name>Odd &lt;id&gt;</display-name></channel>
              <programme start="\(GuideText.time(t))" stop="\(GuideText.time(t + 3600))" channel="../x y%2F.tv"><title>T</title></programme>
            </tv>
            """
        try guide.write(toFile: directory + "/g.xml", atomically: true, encoding: .utf8)
        let s = try ObservedStore(path: directory + "/tv.sqlite")
        try s.importGuide([directory + "/g.xml"], now: Self.firstDay)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = Self.firstDay
        options.filteredFeeds = [FilteredFeed(name: "all T", titlePattern: "^T$")]
        _ = try FeedExporter(store: s.store, options: options).export()
        let index = try String(contentsOfFile: directory + "/feeds/index.html", encoding: .utf8)
        let hrefs = index.components(separatedBy: "href=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(hrefs.count == 2)
        for href in hrefs {
            let decoded = try #require(href.replacingOccurrences(of: "&amp;", with: "&").removingPercentEncoding)
            #expect(FileManager.default.fileExists(atPath: directory + "/feeds/" + decoded), "\(href)")
        }
    }
}
