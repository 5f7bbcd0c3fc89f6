import Foundation
import TestSupport
import Listings
import Merge
import ObjectGraph
import Testing
import XMLTV
import XMLTVImport

@Suite struct MergeTests {

    // 1
    @Test func firstImportCreatesChannelsAndProgrammes() throws {
        let h = try Harness()
        let p1 = GP(channel: "a.fr", start: base + 12 * hour, stop: base + 13 * hour, title: "News", desc: "The news",
                    categories: [("News", "en"), ("Current affairs", nil)],
                    credits: [("director", "Dee"), ("actor", "Ann"), ("actor", "Bob")], offsetMinutes: 60)
        let p2 = GP(channel: "a.fr", start: base + 13 * hour, stop: base + 14 * hour, title: "Film", offsetMinutes: 60)
        let p3 = GP(channel: "b.fr", start: base, stop: base + hour, title: "Morning")
        let r = try h.run(channels: ["a.fr", "b.fr"], [p1, p2, p3])
        #expect(r.channels.inserted == 2)
        #expect(r.programmes.inserted == 3)
        #expect(r.programmes.updated == 0 && r.programmes.deleted == 0)
        #expect(try h.count("Channel") == 2)
        #expect(try h.count("Programme") == 3)
        let a = try #require(try h.channel("a.fr"))
        #expect(a["displayName"] == .string("a.fr name"))
        #expect(a["source"] == .string("S"))
        // The written local time is 13:00 +0100, i.e. 12:00 UTC.
        #expect(GuideText.time(p1.start, offsetMinutes: 60).hasPrefix("20300101130000 +0100"))
        let news = try #require(try h.programme("a.fr", base + 12 * hour))
        #expect(news["start"] == .date(base + 12 * hour))
        #expect(news["stop"] == .date(base + 13 * hour))
        #expect(news["title"] == .string("News"))
        #expect(news["desc"] == .string("The news"))
        #expect(news["clumpIndex"] == .integer(0))
        #expect(news["source"] == .string("S"))
        let credits = try h.store.read { try $0.fetchAll("Credit", where: .related("programme", news.id), orderBy: [SortKey("position")]) }
        #expect(credits.map { $0["role"].stringValue! + ":" + $0["name"].stringValue! } == ["director:Dee", "actor:Ann", "actor:Bob"])
        let cats = try h.store.read { try $0.fetchAll("Category", where: .related("programme", news.id), orderBy: [SortKey("position")]) }
        #expect(cats.map { $0["name"].stringValue! + "/" + $0["lang"].stringValue! } == ["News/en", "Current affairs/"])
        #expect(try h.programme("b.fr", base)?["title"] == .string("Morning"))
    }

    // 2
    @Test func reimportingTheSameGuideChangesNothing() throws {
        let h = try Harness()
        let progs = hourly("a", Array(0..<5)) + hourly("b", [0, 2, 3]).map {
            var p = $0; p.credits = [("actor", "X"), ("actor", "Y")]; p.categories = [("Drama", "en")]; return p
        }
        let xml = guideXML(channels: ["a", "b"], programmes: progs)
        try h.run(xml)
        let before = try h.checksum()
        let r = try h.run(xml)
        #expect(r.programmes.inserted == 0 && r.programmes.updated == 0 && r.programmes.deleted == 0)
        #expect(r.programmes.unchanged == 8)
        #expect(r.channels.inserted == 0 && r.channels.updated == 0 && r.channels.deleted == 0)
        #expect(r.channels.unchanged == 2)
        #expect(r.touchedChannelIDs.isEmpty)
        #expect(try h.checksum() == before)
    }

    /// A stored hash that no longer matches (a database written by an older mapping, or a
    /// guide reformatted without changing a value) costs a comparison, not a change: values are
    /// compared, nothing is counted, and the new hash is stored so the next run is cheap again.
    @Test func aStaleHashIsNotAChange() throws {
        let h = try Harness()
        let progs = hourly("a", [0, 1, 2]).map { var p = $0; p.credits = [("actor", "X")]; return p }
        let xml = guideXML(channels: ["a"], programmes: progs)
        try h.run(xml)
        let hashes = { try h.store.read { db in try db.fetchAll("Programme", orderBy: [SortKey("start")], keys: ["contentHash"]).map { $0["contentHash"] } } }
        let stored = try hashes()
        try h.store.withDatabase { try $0.execute(sql: "UPDATE Programme SET contentHash = 0") }
        let r = try h.run(xml)
        #expect(r.programmes.updated == 0 && r.programmes.unchanged == 3 && r.touchedChannelIDs.isEmpty)
        #expect(try hashes() == stored)
    }

    // 3
    @Test func updateKeepsLocalAttributes() throws {
        let h = try Harness()
        try h.run(channels: ["a"], hourly("a", [0, 1, 2]))
        let p = try #require(try h.programme("a", base + hour))
        let c = try #require(try h.channel("a"))
        try h.store.write { ctx in
            _ = try ctx.update(p.id, ["note": .string("mine"), "reminder": .bool(true)])
            _ = try ctx.update(c.id, ["hidden": .bool(true), "customName": .string("My A")])
        }
        let r = try h.run(channels: ["a"], hourly("a", [0, 1, 2]) { $0 == 1 ? "New title" : "T\($0)" })
        #expect(r.programmes.updated == 1)
        #expect(r.programmes.unchanged == 2)
        let after = try #require(try h.programme("a", base + hour))
        #expect(after.id == p.id)
        #expect(after["title"] == .string("New title"))
        #expect(after["note"] == .string("mine"))
        #expect(after["reminder"] == .bool(true))
        let ca = try #require(try h.channel("a"))
        #expect(ca["hidden"] == .bool(true))
        #expect(ca["customName"] == .string("My A"))
        #expect(ca["displayName"] == .string("a name"))
    }

    // 4
    @Test func deleteScope() throws {
        let h = try Harness()
        try h.run(channels: ["A", "B", "C"], hourly("A", Array(0..<6)) + hourly("B", [0, 1]) + hourly("C", [0, 1]))
        // A second source adds a programme to channel A, inside A's future window.
        let other = GP(channel: "A", start: base + 3 * hour + 1800, stop: base + 3 * hour + 2700, title: "Other source")
        try h.run(channels: [], [other], source: "T", force: true)
        // A is shared now: the harness source's six programmes of it were copied to its own
        // rows, beside T's one; B and C stay the harness source's own (no source rows).
        #expect(try h.count("SourceProgramme") == 7)
        // Shown: "T" ranks above the harness's source (equal priorities, names as bytes) and
        // hides the 3:00 programme its 3:30 one overlaps.
        #expect(try h.count("Programme") == 10)

        // A: slot 0 is before the window (history), slot 3 missing inside it; B declared with no
        // programmes; C absent altogether.
        let r = try h.run(channels: ["A", "B"], hourly("A", [1, 2, 4, 5]), force: true)
        let keys = try h.programmeKeys()
        #expect(keys.contains(.init(channel: "A", start: base, clump: 0, title: "T0")))          // history kept
        #expect(!keys.contains(.init(channel: "A", start: base + 3 * hour, clump: 0, title: "T3"))) // deleted
        #expect(keys.contains(.init(channel: "A", start: base + 3 * hour + 1800, clump: 0, title: "Other source")))
        #expect(keys.filter { $0.channel == "B" }.count == 2)                                      // kept
        #expect(keys.filter { $0.channel == "C" }.isEmpty)
        #expect(try h.channel("C") == nil)
        #expect(try h.channel("B") != nil)
        #expect(keys.count == 1 + 4 + 1 + 2)
        #expect(r.keptAsHistory == 1)
        #expect(r.channels.deleted == 1)
        #expect(r.programmes.deleted == 3)   // A's slot 3 and C's two programmes
        #expect(r.windows["A"]?.start == base + hour)
        #expect(r.windows["A"]?.end == base + 6 * hour)
    }

    // 5
    @Test func duplicatesLastWinsAndClumps() throws {
        let h = try Harness()
        let first = GP(channel: "a", start: base, stop: base + hour, title: "First")
        var second = first; second.title = "Second"
        var third = first; third.title = "Third"
        let other = GP(channel: "a", start: base + hour, stop: base + 2 * hour, title: "Other")
        let r = try h.run(channels: ["a"], [first, second, other])
        #expect(try h.programme("a", base)?["title"] == .string("Second"))
        #expect(r.warnings.filter { $0.kind.contains("duplicate") }.count == 1)
        #expect(try h.count("Programme") == 2)

        let r2 = try h.run(channels: ["a"], [third, first, second, other])
        #expect(try h.programme("a", base)?["title"] == .string("Second"))
        #expect(r2.warnings.filter { $0.kind.contains("duplicate") }.count == 2)
        #expect(r2.programmes.updated == 0)

        let h2 = try Harness()
        let c0 = GP(channel: "a", start: base, stop: base + hour, title: "Part one", clump: (0, 2))
        let c1 = GP(channel: "a", start: base, stop: base + hour, title: "Part two", clump: (1, 2))
        let r3 = try h2.run(channels: ["a"], [c0, c1])
        #expect(r3.programmes.inserted == 2)
        #expect(try h2.programme("a", base, clump: 0)?["title"] == .string("Part one"))
        #expect(try h2.programme("a", base, clump: 1)?["title"] == .string("Part two"))
        #expect(try h2.programme("a", base, clump: 1)?["clumpCount"] == .integer(2))
        #expect(r3.warnings.filter { $0.kind.contains("duplicate") }.isEmpty)
    }

    // 6
    @Test func safetyGuardRefusesAndForceApplies() throws {
        func seeded() throws -> Harness {
            let h = try Harness()
            try h.run(channels: ["a"], hourly("a", Array(0..<10)))
            return h
        }
        func expectRefused(_ h: Harness, _ body: () throws -> Void) throws {
            let before = try h.checksum()
            do {
                try body()
                Issue.record("expected the safety guard to refuse")
            } catch {
                #expect(isSafetyGuard(error), "\(error)")
            }
            #expect(try h.checksum() == before)
            #expect(try h.count("Programme") == 10)
        }
        // Empty guide.
        do {
            let h = try seeded()
            try expectRefused(h) { try h.run("<?xml version=\"1.0\"?>\n<tv/>\n") }
            let r = try h.run("<?xml version=\"1.0\"?>\n<tv/>\n", force: true)
            #expect(r.guardVerdict.hasPrefix("overridden"))
            #expect(try h.count("Programme") == 0)
            #expect(try h.count("Channel") == 0)
        }
        // Only past programmes.
        do {
            let h = try seeded()
            let past = hourly("a", Array(0..<10)) { "Past \($0)" }
            let later = base + 100 * 24 * hour
            try expectRefused(h) { try h.run(channels: ["a"], past, now: later) }
            let r = try h.run(channels: ["a"], past, force: true, now: later)
            #expect(r.programmes.updated == 10)
            #expect(try h.programme("a", base)?["title"] == .string("Past 0"))
        }
        // Deleting 3 of 10 (30 % > 20 %).
        do {
            let h = try seeded()
            let fewer = hourly("a", [0, 1, 3, 5, 7, 8, 9])
            try expectRefused(h) { try h.run(channels: ["a"], fewer) }
            let r = try h.run(channels: ["a"], fewer, force: true)
            #expect(r.programmes.deleted == 3)
            #expect(try h.count("Programme") == 7)
        }
        // Deleting 2 of 10 (exactly 20 %) passes.
        do {
            let h = try seeded()
            let r = try h.run(channels: ["a"], hourly("a", [0, 1, 3, 5, 6, 7, 8, 9]))
            #expect(r.programmes.deleted == 2)
            #expect(r.guardVerdict == "passed")
        }
    }

    // 7
    @Test func dryRunReportsTheSameAndChangesNothing() throws {
        let h = try Harness()
        try h.run(channels: ["a", "b", "c"], hourly("a", Array(0..<6)) + hourly("b", Array(0..<4)) + hourly("c", [0]))
        let before = try h.checksum()
        let next = guideXML(channels: ["a", "b", "d"],
                            programmes: hourly("a", [1, 2, 4, 5, 6]) { $0 == 2 ? "changed" : "T\($0)" } + hourly("b", Array(0..<4)) + hourly("d", [3]))
        let dry = try h.run(next, force: true, dryRun: true)
        #expect(try h.checksum() == before)
        let real = try h.run(next, force: true)
        #expect(dry.programmes == real.programmes)
        #expect(dry.channels == real.channels)
        #expect(dry.keptAsHistory == real.keptAsHistory)
        #expect(dry.warnings == real.warnings)
        #expect(real.programmes.inserted == 2 && real.programmes.updated == 1)
        #expect(try h.checksum() != before)
    }

    // 8
    @Test func ownedMembersAreMergedFineGrained() throws {
        let h = try Harness()
        var p = GP(channel: "a", start: base, stop: base + hour, title: "Film",
                   categories: [("Film", "en"), ("Drama", "en")],
                   credits: [("director", "Dee"), ("actor", "Ann"), ("actor", "Bob"), ("actor", "Cat")])
        try h.run(channels: ["a"], [p])
        let pid = try #require(try h.programme("a", base)).id
        func credits() throws -> [String: Int64] {
            try h.store.read { ctx in
                Dictionary(uniqueKeysWithValues: try ctx.fetchAll("Credit", where: .related("programme", pid)).map {
                    ($0["role"].stringValue! + ":" + $0["name"].stringValue!, $0.id.rowID)
                })
            }
        }
        let cats0 = try h.store.read { try $0.fetchAll("Category").map(\.id.rowID) }
        let before = try credits()
        p.credits = [("director", "Dee"), ("actor", "Ann"), ("actor", "Bea"), ("actor", "Cat")]
        try h.run(channels: ["a"], [p])
        let after = try credits()
        #expect(Set(after.keys) == ["director:Dee", "actor:Ann", "actor:Bea", "actor:Cat"])
        for k in ["director:Dee", "actor:Ann", "actor:Cat"] { #expect(after[k] == before[k], "\(k) kept its row id") }
        #expect(!Set(before.values).contains(after["actor:Bea"]!))
        #expect(Set(before.values).subtracting(after.values).count == 1)   // exactly one deleted
        #expect(Set(after.values).subtracting(before.values).count == 1)   // exactly one inserted
        #expect(try h.store.read { try $0.fetchAll("Category").map(\.id.rowID) } == cats0)
        #expect(try h.programme("a", base)?.id == pid)
    }

    /// The merge decides over the whole block before it writes, then reads the stored side of
    /// every update at once: a block mixing updates (attributes only, members only, both, members
    /// unchanged), inserts and deletes must end exactly as the same guide imported into an empty
    /// store, with the counts of what it did.
    @Test func aBlockOfMixedChangesEndsAsAFreshImportOfTheSameGuide() throws {
        func programmes(_ revised: Bool) -> [GP] {
            (0..<12).compactMap { i -> GP? in
                let start = base + Int64(i) * hour
                var p = GP(channel: "a", start: start, stop: start + hour, title: "P\(i)",
                           categories: [("News", "en")], credits: [("presenter", "Ann \(i)"), ("guest", "Bob \(i)")])
                guard revised else { return i == 11 ? nil : p }
                switch i % 6 {
                case 0: p.title = "P\(i) retitled"                                        // attributes only
                case 1: p.credits = [("presenter", "Ann \(i)"), ("guest", "Cy \(i)")]       // a member replaced
                case 2: p.desc = "now with a description"; p.categories = [("Film", "en")] // both
                case 3: p.desc = "members as they were"                                   // members unchanged
                case 4: return nil                                                        // deleted
                default: break                                                            // unchanged
                }
                return p
            }
        }
        func rows(_ h: Harness) throws -> [String] {
            try h.store.read { ctx in
                var rows: [String] = []
                for p in try ctx.fetchAll("Programme", keys: ListingsMapper.programmeKeys) {
                    let credits = try ctx.fetchAll("Credit", where: .related("programme", p.id), keys: ListingsMapper.creditKeys)
                    let categories = try ctx.fetchAll("Category", where: .related("programme", p.id), keys: ListingsMapper.categoryKeys)
                    rows.append("\(p.values) \(credits.map(\.values).sorted { "\($0)" < "\($1)" }) \(categories.map(\.values))")
                }
                return rows.sorted()
            }
        }
        let h = try Harness()
        try h.run(channels: ["a"], programmes(false))
        let report = try h.run(channels: ["a"], programmes(true))
        let fresh = try Harness()
        try fresh.run(channels: ["a"], programmes(true))
        #expect(try rows(h) == rows(fresh))
        // Updated: 0, 6 (attributes), 1, 7 (members), 2, 8 (both), 3, 9 (description); deleted 4 and
        // 10; inserted 11; unchanged 5.
        #expect(report.programmes.updated == 8)
        #expect(report.programmes.deleted == 2)
        #expect(report.programmes.inserted == 1)
        #expect(report.programmes.unchanged == 1)
    }

    // 9
    @Test
    func canonicallyEqualButByteDifferentChannelIDsStayApart() throws {
        let h = try Harness()
        let nfc = "caf\u{E9}.fr", nfd = "cafe\u{301}.fr"
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        let xml = guideXML(channels: [nfc, nfd], programmes: hourly(nfc, [0, 1]) { "NFC \($0)" } + hourly(nfd, [0, 1, 2]) { "NFD \($0)" })
        let r1 = try h.run(xml)
        #expect(r1.channels.inserted == 2)
        #expect(r1.programmes.inserted == 5)
        let ids = try h.channelIDs().values.map { Array($0.utf8) }
        #expect(Set(ids) == [Array(nfc.utf8), Array(nfd.utf8)])
        #expect(try h.count("Programme") == 5)
        let before = try h.checksum()
        let r2 = try h.run(xml)
        #expect(r2.programmes.inserted == 0 && r2.programmes.updated == 0 && r2.programmes.deleted == 0)
        #expect(r2.channels.inserted == 0 && r2.channels.updated == 0 && r2.channels.deleted == 0)
        #expect(try h.checksum() == before)
    }

    // 10
    @Test func guideNotGroupedByChannelImportsLikeTheGroupedOne() throws {
        let a1 = hourly("A", [0, 1]), b = hourly("B", [0, 1, 2]), a2 = hourly("A", [2, 3])
        let grouped = try Harness(), scattered = try Harness()
        // An earlier state, so updates/deletes/history are exercised too.
        for h in [grouped, scattered] {
            try h.run(channels: ["A", "B"], hourly("A", [0, 1, 2, 3, 4]) { "old \($0)" } + hourly("B", [0, 1, 2, 3]))
        }
        let rg = try grouped.run(channels: ["A", "B"], a1 + a2 + b, force: true)
        let rs = try scattered.run(channels: ["A", "B"], a1 + b + a2, force: true)
        #expect(try scattered.programmeKeys() == grouped.programmeKeys())
        #expect(rs.programmes == rg.programmes)
        #expect(rs.channels == rg.channels)
        #expect(rs.keptAsHistory == rg.keptAsHistory)
        #expect(rg.programmes.updated == 4)
        // Re-importing the scattered guide changes nothing.
        let again = try scattered.run(channels: ["A", "B"], a1 + b + a2)
        #expect(again.programmes.inserted == 0 && again.programmes.updated == 0 && again.programmes.deleted == 0)
    }

    /// Memory follows the largest channel, not the stream: a channel over the limit is refused
    /// (grouped or not), nothing changes, and many channels under it import whatever their total.
    @Test(arguments: [false, true]) func aChannelOverTheSizeLimitIsRefused(scattered: Bool) throws {
        let h = try Harness()
        h.maxChannelBytes = 16 << 10
        let small = (0..<20).map { "S\($0)" }
        let smallProgrammes = small.flatMap { hourly($0, Array(0..<60)) }
        try h.run(channels: small, smallProgrammes)   // 20 x 60 programmes: far more than 16 KiB in all
        #expect(try h.count("Programme") == 1200)
        let before = try h.checksum()

        var programmes = hourly("S0", Array(0..<60)) + hourly("Big", Array(0..<2000))
        if scattered { programmes.shuffle() }
        #expect {
            try h.run(channels: ["S0", "Big"], programmes, force: true)
        } throws: { error in
            "\(error)".contains("channel 'Big' has more than 16384 bytes of programme text")
        }
        #expect(try h.checksum() == before)
    }
}
