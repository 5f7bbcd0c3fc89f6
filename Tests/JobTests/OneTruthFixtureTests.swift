import Foundation
import TestSupport
import Testing

/// One truth on a real guide: two grabs of the Irish Freeview feed (`../shared/fixtures/xmltv`,
/// eight hours apart, 9 channels), moved two years ahead so that they have a future. Each test is
/// one of issue 33's findings, run with the `tvimport` binary as a user runs it.
@Suite(.serialized, .enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"))
struct OneTruthFixtureTests {
    static let grabA = "freeview_ie_2025-10-25T1606.xml", grabB = "freeview_ie_2025-10-26T0027.xml"

    /// A grab with its years moved ahead (the safety guard wants a future).
    func write(_ fixture: String, to name: String, in box: Sandbox) throws {
        let text = try String(contentsOfFile: Shared.fixture(fixture), encoding: .utf8)
            .replacingOccurrences(of: "start=\"2025", with: "start=\"2027").replacingOccurrences(of: "stop=\"2025", with: "stop=\"2027")
        try box.write(name, text)
    }

    func sqlite(_ box: Sandbox, _ db: String, _ sql: String) throws -> String {
        // Waits for a lock as a reader beside the store would: an in-process store may still be
        // closing (its last checkpoint) when the command returns.
        let r = try Subprocess.run("sqlite3", ["-cmd", ".timeout 10000", box.path(db), sql])
        #expect(r.status == 0 && r.stderr.isEmpty, "sqlite3 \(sql): \(r.stderr)")
        return r.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every programme as the guide shows it, row ids aside.
    func guide(_ box: Sandbox, _ db: String) throws -> String {
        try sqlite(box, db, "SELECT c.xmltvId, p.start, p.clumpIndex, p.stop, p.title, p.subTitle, p.desc, p.note FROM Programme p JOIN Channel c ON c._pk = p.channel ORDER BY 1, 2, 3")
    }

    // Item 1: `undo` left content hashes that made the next import of the same grab a no-op.
    @Test func reimportAfterUndoRepairsEveryRow() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        try write(Self.grabB, to: "b.xml", in: box)
        box.importing(["a.xml"], db: "tv.sqlite") { $0.flags.quiet = true }
        let first = box.importing(["b.xml"], db: "tv.sqlite") { $0.flags.json = true }
        #expect(box.undo(db: "tv.sqlite").status == 0)
        let again = box.importing(["b.xml"], db: "tv.sqlite") { $0.flags.json = true }
        func programmes(_ r: Result) throws -> [String: Int] {
            let json = try #require(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let summary = try #require((json["summary"] as? [String: Any])?["Programme"] as? [String: Int])
            return summary.filter { ["inserted", "updated", "deleted"].contains($0.key) }
        }
        #expect(try programmes(first) == programmes(again), "the re-import after undo must redo what the first did")
        #expect(try programmes(again)["updated"] ?? 0 > 0)
        // And the guide is the one a fresh database gets from a then b.
        box.importing(["a.xml"], db: "fresh.sqlite") { $0.flags.quiet = true }
        box.importing(["b.xml"], db: "fresh.sqlite") { $0.flags.quiet = true }
        let shown = try guide(box, "tv.sqlite")
        #expect(shown.split(separator: "\n").count > 1000)
        #expect(shown == (try guide(box, "fresh.sqlite")))
    }

    func config(_ box: Sandbox, aliases: String = "", modules: Bool = false) throws {
        let module = #", "modules": [{"name": "mine", "entities": [{"name": "Programme", "placeholder": true, "attributes": [{"name": "stars", "type": "integer"}]}]}]"#
        try box.write("config.json", """
            {"database": "data/tv.sqlite", "output": "feeds", "xmltv": "guide.xml", "retentionDays": 0,
             "sources": [{"name": "ie", "url": "grab.xml"}], "channels": {\(aliases)}\(modules ? module : "")}
            """)
        try FileManager.default.createDirectory(atPath: box.path("data"), withIntermediateDirectories: true)
    }

    // Item 3: `undo` rewrites the feeds and the XMLTV file its config names.
    @Test func undoWithTheConfigRewritesItsOutputs() throws {
        let box = try Sandbox()
        try config(box)
        try write(Self.grabA, to: "grab.xml", in: box)
        #expect(box.nightly(config: "config.json") { $0.flags.quiet = true }.status == 0)
        let afterA = box.snapshot(["feeds", "guide.xml"])
        try write(Self.grabB, to: "grab.xml", in: box)
        #expect(box.nightly(config: "config.json") { $0.flags.quiet = true }.status == 0)
        #expect(!sameBytes(afterA, box.snapshot(["feeds", "guide.xml"])))
        let undo = box.undo(config: "config.json")
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(undo.stdout.contains("the run of source ie"), "\(undo.stdout)")
        // The XMLTV file and every feed are those of grab A again (stamps aside: an undo is a change
        // for calendars, SEQUENCE grows).
        #expect(box.bytes("guide.xml") == afterA[box.path("guide.xml")]?.0)
        func events(_ snapshot: [String: (Data, Date)]) -> [String: String] {
            snapshot.filter { $0.key.hasSuffix(".ics") }.mapValues { String(decoding: $0.0, as: UTF8.self).components(separatedBy: "\r\n")
                .filter { !$0.hasPrefix("DTSTAMP") && !$0.hasPrefix("LAST-MODIFIED") && !$0.hasPrefix("SEQUENCE") }.joined(separator: "\n") }
        }
        #expect(events(box.snapshot(["feeds"])) == events(afterA))
        // The next run imports grab B again (the undo forgot the download it had applied).
        let rerun = box.nightly(config: "config.json") { $0.flags.json = true }
        #expect(rerun.stdout.contains("\"applied\""), "\(rerun.stdout.prefix(400))")
    }

    // Item 3 without a config: `undo` rewrites the outputs of the database's last run (here the
    // bundled sample's, filtered feed included), from any working directory.
    @Test func undoWithoutAConfigRewritesTheLastRunsOutputs() throws {
        let box = try Sandbox()
        #expect(try box.run(["--quiet"]).status == 0)
        let feeds = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") }
        #expect(feeds.contains("filter~news.ics") && feeds.count > 1, "\(feeds)")
        try FileManager.default.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: true)
        let r = try Subprocess.run(Repository.tvimport, ["undo", "--db", box.path("tvimport.sqlite")], in: box.dir.appendingPathComponent("elsewhere"),
                                   environment: ["TVIMPORT_DB": nil, "TVIMPORT_OUTPUT": nil])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.output.contains("feeds: ") && r.output.contains(box.path("feeds")), "\(r.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") }
        #expect(left == ["filter~news.ics"], "channel feeds of no programme are removed: \(left)")
        let news = try String(contentsOfFile: box.path("feeds/filter~news.ics"), encoding: .utf8)
        #expect(!news.contains("BEGIN:VEVENT"), "the filtered feed lost the programmes of the channels that went")
        #expect(!FileManager.default.fileExists(atPath: box.path("elsewhere/feeds")))
    }

    // Item 4: an alias added to the config applies at the next run although the download did not
    // change, and moving a channel's programmes to the canonical id is not a deletion for the guard.
    @Test func anAliasAddedToTheConfigAppliesAtTheNextRun() throws {
        let box = try Sandbox()
        try config(box)
        try write(Self.grabA, to: "grab.xml", in: box)
        #expect(box.nightly(config: "config.json") { $0.flags.quiet = true }.status == 0)
        let rte2 = try sqlite(box, "data/tv.sqlite", "SELECT programmeCount FROM Channel WHERE xmltvId = 'RTE2.ie'")
        #expect(Int(rte2) ?? 0 > 100)
        try config(box, aliases: #""rte2.canonical": {"aliases": ["RTE2.ie"]}"#)
        let r = box.nightly(config: "config.json")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("applied"), "\(r.stdout)")
        #expect(try sqlite(box, "data/tv.sqlite", "SELECT programmeCount FROM Channel WHERE xmltvId = 'rte2.canonical'") == rte2)
        #expect(try sqlite(box, "data/tv.sqlite", "SELECT count(*) FROM Channel WHERE xmltvId = 'RTE2.ie'") == "0")
        #expect(FileManager.default.fileExists(atPath: box.path("feeds/rte2.canonical.ics")))
    }

    // Item 5: `tvimport` alone (the bundled sample) never writes into a database of other sources.
    @Test func theSampleRunRefusesADatabaseOfOtherSources() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        box.importing(["a.xml"], db: "mine.sqlite") { $0.source = "ie"; $0.flags.quiet = true }
        let before = try guide(box, "mine.sqlite")
        #expect(!before.isEmpty)
        let r = try box.run([], environment: ["TVIMPORT_DB": box.path("mine.sqlite")])
        #expect(r.status == 64, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stderr.contains("holds other sources (ie)") && r.stderr.contains("--config"), "\(r.stderr)")
        #expect(try guide(box, "mine.sqlite") == before)
        #expect(!FileManager.default.fileExists(atPath: box.path("feeds")))
        // A fresh folder still gets the sample.
        let sample = try Sandbox()
        #expect(try sample.run([]).status == 0)
        #expect(try sample.run([]).status == 0, "a second sample run into the sample's own database is fine")
    }

    // Item 6: every command takes --config and uses its database; `import --config` records its modules.
    @Test func everyDatabaseCommandTakesTheConfig() throws {
        let box = try Sandbox()
        try config(box, modules: true)
        try write(Self.grabA, to: "grab.xml", in: box)
        let imported = box.importing(["grab.xml"], config: "config.json") { $0.source = "ie"; $0.flags.quiet = true }
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.path("data/tv.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: box.path("tvimport.sqlite")), "import --config writes the config's database")
        #expect(FileManager.default.fileExists(atPath: box.path("guide.xml")), "import --config refreshes the config's XMLTV file")
        let runID = try sqlite(box, "data/tv.sqlite", "SELECT runID FROM _tvimport_changes")
        for command in [["status"], ["channels"], ["changes", "--patch", runID]] {
            let r = try box.run(command + ["--config", "config.json"])
            #expect(r.status == 0, "\(command): \(r.stderr)")
        }
        // The module recorded by import: its attribute is editable without the config, too.
        let programme = try sqlite(box, "data/tv.sqlite", "SELECT _pk FROM Programme LIMIT 1")
        let edit = box.edit("Programme", "#" + programme, ["stars=4"], db: "data/tv.sqlite")
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try sqlite(box, "data/tv.sqlite", "SELECT stars FROM Programme WHERE _pk = \(programme)") == "4")
        #expect(box.undo(config: "config.json").status == 0, "the edit, undone")
        let undo = box.undo(config: "config.json")
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.path("tvimport.sqlite")))
    }

    // Item 7: a CLI edit writes a change file; undo reverts it, then the import before it.
    @Test func anEditIsUndoneOnItsOwnAndNeverBlocksTheImportBefore() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        box.importing(["a.xml"], db: "tv.sqlite") { $0.flags.quiet = true }
        let edit = box.edit("Channel", "RTE2.ie", ["customName=Two", "hidden=true"], db: "tv.sqlite")
        #expect(edit.status == 0, "\(edit.stderr)")
        let first = box.undo(db: "tv.sqlite")
        #expect(first.status == 0 && first.stdout.contains("the edit of Channel RTE2.ie"), "\(first.stdout)\(first.stderr)")
        #expect(try sqlite(box, "tv.sqlite", "SELECT customName IS NULL, hidden FROM Channel WHERE xmltvId = 'RTE2.ie'") == "1|0")
        // An edit of another object later does not block undoing the import.
        box.edit("Channel", "RTE2.ie", ["favourite=true"], db: "tv.sqlite")
        #expect(box.undo(db: "tv.sqlite").status == 0)
        let second = box.undo(db: "tv.sqlite")
        #expect(second.status == 0 && second.stdout.contains("the import of source default"), "\(second.stdout)\(second.stderr)")
        #expect(try sqlite(box, "tv.sqlite", "SELECT count(*) FROM Programme") == "0")
    }

    // Item 8: change files are recorded by absolute path; undo works from any directory, and an
    // entry of an earlier version (relative to the run's folder) is read beside the database.
    @Test func undoWorksFromAnyWorkingDirectory() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        try FileManager.default.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: true)
        box.importing(["a.xml"], db: "tv.sqlite") { $0.flags.quiet = true }
        let path = try sqlite(box, "tv.sqlite", "SELECT path FROM _tvimport_changes")
        #expect(path.hasPrefix("/"), "recorded: \(path)")
        box.edit("Channel", "RTE2.ie", ["customName=Two"], db: "tv.sqlite")
        // As an earlier version recorded it.
        let name = try sqlite(box, "tv.sqlite", "SELECT runID FROM _tvimport_changes ORDER BY runID DESC LIMIT 1")
        _ = try sqlite(box, "tv.sqlite", "UPDATE _tvimport_changes SET path = './changes/\(name).json' WHERE runID = '\(name)'")
        let r = try Subprocess.run(Repository.tvimport, ["undo", "--db", box.path("tv.sqlite")], in: box.dir.appendingPathComponent("elsewhere"))
        #expect(r.status == 0, "\(r.stderr)")
        let r2 = try Subprocess.run(Repository.tvimport, ["undo", "--db", box.path("tv.sqlite")], in: box.dir.appendingPathComponent("elsewhere"))
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(try sqlite(box, "tv.sqlite", "SELECT count(*) FROM Programme") == "0")
    }

    /// Every object of the model's tables, counted (side tables aside).
    func objectCount(_ box: Sandbox, _ db: String) throws -> Int {
        let tables = ["Channel", "Programme", "Credit", "Category", "SourceChannel", "SourceProgramme", "SourceCredit", "SourceCategory"]
        return try Int(sqlite(box, db, "SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: " + "))) ?? -1
    }

    // Item 10: undoing a change made to an empty store (a first import, nothing written since)
    // empties the store at once; it ends as checking every object against the file would, and
    // never touches what another change made.
    @Test func undoingAFirstImportEmptiesTheStoreAsCheckingEveryObjectWould() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        try write(Self.grabB, to: "b.xml", in: box)
        func undoLine(_ db: String) throws -> Substring {
            let r = box.undo(db: db)
            #expect(r.status == 0, "\(r.stderr)")
            return try #require(r.stdout.split(separator: ":").last)   // "N changes undone"
        }
        // Trusted: the store is emptied.
        box.importing(["a.xml"], db: "fast.sqlite") { $0.source = "a"; $0.flags.quiet = true }
        #expect(try objectCount(box, "fast.sqlite") > 1000)
        #expect(try sqlite(box, "fast.sqlite", "SELECT count(*) FROM _tvimport_changes_on_empty_store") == "1")
        let pagesImported = try #require(Int(try sqlite(box, "fast.sqlite", "PRAGMA page_count")))
        let fast = try undoLine("fast.sqlite")
        #expect(try objectCount(box, "fast.sqlite") == 0)
        // The emptied store gives its pages back: the file shrinks to its schema.
        let pagesLeft = try #require(Int(try sqlite(box, "fast.sqlite", "PRAGMA page_count")))
        #expect(try sqlite(box, "fast.sqlite", "PRAGMA freelist_count") == "0")
        #expect(pagesLeft * 4 < pagesImported, "\(pagesLeft) pages left of \(pagesImported)")
        // The same import with its file touched since: every object is checked, then deleted.
        let other = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: other)
        other.importing(["a.xml"], db: "checked.sqlite") { $0.source = "a"; $0.flags.quiet = true }
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: other.path("changes")).first)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: other.path("changes/" + file))
        let checkedUndo = other.undo(db: "checked.sqlite")
        #expect(checkedUndo.status == 0, "\(checkedUndo.stderr)")
        #expect(checkedUndo.stdout.split(separator: ":").last == fast, "\(checkedUndo.stdout) against \(fast)")
        #expect(try objectCount(other, "checked.sqlite") == 0)
        #expect(try sqlite(other, "checked.sqlite", "PRAGMA freelist_count") == "0")
        // A second source's import into a store that holds the first's: not made on an empty
        // store, so its undo leaves the first source's guide as it was.
        box.importing(["a.xml"], db: "two.sqlite") { $0.source = "a"; $0.flags.quiet = true }
        let before = try guide(box, "two.sqlite")
        box.importing(["b.xml"], db: "two.sqlite") { $0.source = "b"; $0.flags.quiet = true }
        #expect(try sqlite(box, "two.sqlite", "SELECT count(*) FROM _tvimport_changes_on_empty_store") == "1")
        _ = try undoLine("two.sqlite")
        #expect(try guide(box, "two.sqlite") == before)
        #expect(try objectCount(box, "two.sqlite") > 1000)
    }

    // Item 9: an import that deletes a programme carrying a local edit says so.
    @Test func theReportNamesLocalEditsLostWithADeletedProgramme() throws {
        let box = try Sandbox()
        try write(Self.grabA, to: "a.xml", in: box)
        try write(Self.grabB, to: "b.xml", in: box)
        box.importing(["a.xml"], db: "tv.sqlite") { $0.flags.quiet = true }
        // Morning Ireland of 2027-10-27 07:00 UTC on RTÉ News is in grab A, not in grab B.
        let edit = box.edit("Programme", "RTENews.ie/2027-10-27T07:00:00Z", ["note=record this"], db: "tv.sqlite")
        #expect(edit.status == 0, "\(edit.stderr)")
        let text = box.importing(["b.xml"], db: "tv.sqlite") { $0.flags.dryRun = true }
        #expect(text.stdout.contains("local edits lost: 1 deleted programme"), "\(text.stdout)")
        #expect(text.stdout.contains("RTENews.ie 2027-10-27T07:00:00Z \"Morning Ireland\": note=\"record this\""), "\(text.stdout)")
        let json = box.importing(["b.xml"], db: "tv.sqlite") { $0.flags.json = true }
        let document = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let lost = try #require(((document["sources"] as? [[String: Any]])?.first?["lostEdits"]) as? [[String: Any]])
        #expect(lost.count == 1)
        #expect(lost.first?["channel"] as? String == "RTENews.ie")
        #expect((lost.first?["values"] as? [String: String])?["note"] == "record this")
    }
}
