import Foundation
@testable import Job
import ObjectGraph
import TestSupport
import Testing

/// Change files: each real import writes one; replaying them onto a copy of the first database
/// rebuilds the last; undo reverts the last import; a dry run touches no byte.
@Suite struct ChangeFileTests {
    /// A guide whose titles and programme count vary with `night`, so each import changes things.
    func guide(night: Int) -> String {
        makeGuide(channels: ["alpha.test", "beta.test", "gamma.test"], programmes: 4 + night % 3, titlePrefix: "Night \(night % 2) show")
    }

    @Test func replayingEveryChangeFileRebuildsTheDatabase() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("b.sqlite"))
        let firstFiles = Set(try FileManager.default.contentsOfDirectory(atPath: box.path("changes")))
        for night in 1...4 {
            try box.write("g\(night).xml", guide(night: night))
            let r = box.importing(["g\(night).xml"], db: "a.sqlite") { $0.source = "s" }
            #expect(r.status == 0, "stderr: \(r.stderr)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
            .filter { !firstFiles.contains($0) && !$0.hasSuffix(".patch.json") }.sorted()
        #expect(files.count == 4)
        for file in files {
            let r = box.apply("changes/" + file, db: "b.sqlite")
            #expect(r.status == 0, "\(file): \(r.stdout) \(r.stderr)")
        }
        let model = try StoreAccess.model()
        let difference = try GraphDiff(model: model).diff(from: Store(path: box.path("a.sqlite"), model: model),
                                                          to: Store(path: box.path("b.sqlite"), model: model))
        #expect(difference.isEmpty, "replayed copy differs: \(difference.changes.count) objects")
    }

    @Test func undoRevertsTheLastImport() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("before.sqlite"))
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        let undo = box.undo(db: "a.sqlite")
        #expect(undo.status == 0, "\(undo.stdout) \(undo.stderr)")
        let model = try StoreAccess.model()
        let difference = try GraphDiff(model: model).diff(from: Store(path: box.path("before.sqlite"), model: model),
                                                          to: Store(path: box.path("a.sqlite"), model: model))
        #expect(difference.isEmpty)
    }

    @Test func aConflictingApplyLeavesThatObjectAlone() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("b.sqlite"))
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        // Someone renamed a programme in b: the file's old title no longer matches there.
        let id = "alpha.test/" + GuideText.time(guideBase())
        #expect(box.edit("Programme", id, ["title=Renamed"], db: "b.sqlite", force: true).status == 0)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
            .filter { !$0.hasSuffix(".patch.json") }.sorted().last)
        let r = box.apply("changes/" + file, db: "b.sqlite")
        #expect(r.status == 65)
        #expect(r.stdout.contains("conflict"))
        let status = box.status(db: "b.sqlite")
        #expect(status.status == 0)
    }

    @Test func aDryRunChangesNoByteOfDatabaseWALFeedsOrCache() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g0.xml"))]))
        #expect(box.nightly(config: "c.json").status == 0)
        try box.write("c.json", makeConfig(sources: [("s", box.path("g1.xml"))]))
        func files() throws -> [String: Data] {
            var all: [String: Data] = [:]
            let enumerator = FileManager.default.enumerator(atPath: box.dir.path)
            while let name = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: box.path(name), isDirectory: &isDirectory), !isDirectory.boolValue,
                   !name.hasSuffix(".lock"), !name.hasSuffix(".runs") {
                    all[name] = try Data(contentsOf: URL(fileURLWithPath: box.path(name)))
                }
            }
            return all
        }
        let before = try files()
        let r = box.nightly(config: "c.json") { $0.flags.dryRun = true }
        #expect(r.status == 0)
        #expect(r.stdout.contains("Dry run"))
        #expect(try files() == before)
    }

    /// A nightly job must not fill the disk with change files: `run` removes those older than
    /// `changeFilesDays`, but never the newest one (`undo` needs it) nor files it did not write.
    @Test func runRemovesOldChangeFilesButKeepsTheNewestAndForeignFiles() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("changes"), withIntermediateDirectories: true)
        let old = ["20200101T030000Z-001.json", "20200101T030000Z-001.patch.json",
                   "20200102T030000Z-001.undone.json", "20200103T030000Z-001.json", "20200103T030000Z-001.patch.json"]
        for name in old + ["notes.json"] { try box.write("changes/" + name, "{}") }
        func names() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))) }

        // Writing no change file: everything older than 10 days goes except the newest not undone.
        try box.write("g0.xml", guide(night: 0))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g0.xml"))],
                                           extra: #", "changeFiles": false, "changeFilesDays": 10"#))
        #expect(box.nightly(config: "c.json") { $0.flags.quiet = true }.status == 0)
        let first = try names()
        // None of them is this database's (its register names none): all old ones go.
        #expect(first == ["notes.json"], "\(first.sorted())")

        // A new change file becomes the newest: the old one goes too.
        try box.write("g1.xml", guide(night: 1))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g1.xml"))], extra: #", "changeFilesDays": 10"#))
        #expect(box.nightly(config: "c.json") { $0.flags.quiet = true }.status == 0)
        let now = try names()
        #expect(now.count == 2 && now.contains("notes.json"), "\(now.sorted())")
        #expect(now.allSatisfy { !$0.hasPrefix("2020") })
        let undo = box.undo(db: "tv.sqlite")
        #expect(undo.status == 0, "\(undo.stdout) \(undo.stderr)")
    }

    /// The store's objects as a diff against an empty store of the same model: empty when both are.
    func difference(_ box: Sandbox, _ a: String, _ b: String) throws -> ChangeDocument {
        let model = try StoreAccess.model()
        return try GraphDiff(model: model).diff(from: Store(path: box.path(a), model: model), to: Store(path: box.path(b), model: model))
    }

    /// Two databases beside each other share `changes/`: `undo --db a` reverts a's last import,
    /// never b's newer one (#18.1).
    @Test func undoTakesOnlyItsOwnDatabasesLastImport() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        try box.write("other.xml", makeGuide(channels: ["other.test"], programmes: 3, titlePrefix: "Other"))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("a0.sqlite"))
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        #expect(box.importing(["other.xml"], db: "b.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("b.sqlite"), toPath: box.path("b0.sqlite"))

        let undo = box.undo(db: "a.sqlite")
        #expect(undo.status == 0, "\(undo.stdout) \(undo.stderr)")
        #expect(try difference(box, "a0.sqlite", "a.sqlite").isEmpty)
        #expect(try difference(box, "b0.sqlite", "b.sqlite").isEmpty, "b must not change")
        // b's own import is still b's to undo.
        let undoB = box.undo(db: "b.sqlite")
        #expect(undoB.status == 0, "\(undoB.stdout) \(undoB.stderr)")
        #expect(try programmeCount(box, "b.sqlite") == 0)
    }

    /// A second `undo` reverts the import before; when none is left it says so (exit 66) and
    /// changes nothing. A completed undo leaves no `.patch.json`; undos and edits show in
    /// `status` (#18.2).
    @Test func aSecondUndoTakesTheImportBeforeThenSaysNothingIsLeft() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        let first = box.undo(db: "a.sqlite")
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        let second = box.undo(db: "a.sqlite")
        #expect(second.status == 0, "\(second.stdout) \(second.stderr)")
        #expect(first.stdout != second.stdout, "the second undo must take another import")
        #expect(try programmeCount(box, "a.sqlite") == 0, "both imports undone")
        let names = try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
        #expect(!names.contains { $0.hasSuffix(".patch.json") && names.contains($0.replacingOccurrences(of: ".patch.json", with: ".undone.json")) },
                "a completed undo leaves no patch file: \(names.sorted())")
        let third = box.undo(db: "a.sqlite")
        #expect(third.status == 66, "\(third.stdout) \(third.stderr)")
        #expect(third.stderr.contains("nothing to undo"))
        let status = box.status(db: "a.sqlite")
        #expect(status.stdout.contains("  undo  "), "\(status.stdout)")
    }

    /// An undo that meets a conflict applies nothing (one transaction), exits 65 and says that
    /// nothing changed; the import stays the one to undo once the conflict is resolved (#18.2).
    /// Every change tvimport makes is recorded (an edit is undone on its own, issue 33), so the
    /// conflict here is a change made outside tvimport, by sqlite3.
    @Test func anUndoWithAConflictChangesNothing() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("a0.sqlite"))
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        func sql(_ statement: String) throws {
            let r = try Subprocess.run("sqlite3", [box.path("a.sqlite"), statement])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        }
        try sql("UPDATE Programme SET title = 'Renamed' WHERE title = 'Night 1 show 0'")
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("a1.sqlite"))
        let refused = box.undo(db: "a.sqlite")
        #expect(refused.status == 65, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.contains("nothing changed") && refused.stdout.contains("conflict"), "\(refused.stdout)")
        #expect(try difference(box, "a1.sqlite", "a.sqlite").isEmpty, "a refused undo changes nothing")
        // Put the title back as the import left it: the same import is undone now.
        try sql("UPDATE Programme SET title = 'Night 1 show 0' WHERE title = 'Renamed'")
        let undo = box.undo(db: "a.sqlite")
        #expect(undo.status == 0, "\(undo.stdout) \(undo.stderr)")
        #expect(try difference(box, "a0.sqlite", "a.sqlite").isEmpty)
        let status = box.status(db: "a.sqlite")
        #expect(status.stdout.contains("  undo  "), "\(status.stdout)")
    }

    /// `undo` compares every object with the change file unless nothing wrote after the change
    /// (issue 33): the register keeps the database's write token just after each change, and
    /// the change file's size and time. A write since, by tvimport or by sqlite3, or a file
    /// touched since, and the full check runs; the newest change of tvimport is trusted again.
    @Test func undoTrustsTheStoreOnlyWhenNothingWroteSinceTheChange() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        func trusted() throws -> Bool {
            let path = box.path("a.sqlite")
            let store = try StoreAccess.open(path: path, model: StoreAccess.model(forDatabase: path, userModules: []), mustExist: true)
            guard let entry = try ChangeRegister.latest(in: store), let token = try ChangeRegister.writeToken(of: entry, in: store) else { return false }
            return try store.writeToken() == token
        }
        func sql(_ statement: String) throws {
            let r = try Subprocess.run("sqlite3", [box.path("a.sqlite"), statement])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        }
        #expect(try trusted(), "nothing wrote after the import")
        try sql("UPDATE Programme SET title = title")
        #expect(try !trusted(), "sqlite3 wrote since (the same values: a write all the same)")
        let undone = box.undo(db: "a.sqlite")
        #expect(undone.status == 0, "checked, and nothing differs: \(undone.stdout) \(undone.stderr)")
        #expect(try !trusted(), "the first import: the second import and its undo wrote since")
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        #expect(try trusted())
        let changes = try FileManager.default.contentsOfDirectory(atPath: box.path("changes")).filter { !$0.contains("undone") }.sorted()
        let newest = box.path("changes/" + changes.last!)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: newest)
        #expect(try !trusted(), "the file is not the one written")
        #expect(box.undo(db: "a.sqlite").status == 0)
        #expect(box.edit("Channel", "alpha.test", ["color=red"], db: "a.sqlite").status == 0)
        #expect(try trusted(), "an edit is a change of its own")
    }

    func programmeCount(_ box: Sandbox, _ db: String) throws -> Int? {
        let json = parseJSON(box.status(db: db, json: true).stdout)
        return (json?["entities"] as? [String: Any])?["Programme"] as? Int
    }

    /// The JSON Patch form is not written every night unless asked for; `changes --patch` makes
    /// it on demand, the same operations the file's changes give (#14.2).
    @Test func theJSONPatchIsMadeOnDemand() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        #expect(box.importing(["g1.xml"], db: "a.sqlite") { $0.source = "s"; $0.writePatch = true }.status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: box.path("changes")).sorted()
        #expect(names.count == 3, "\(names)")
        let files = names.filter { !$0.hasSuffix(".patch.json") }
        let written = try #require(names.first { $0.hasSuffix(".patch.json") })
        #expect(written.hasPrefix(String(files[1].dropLast(".json".count))), "only the import that asked for it writes a patch file")
        for file in files {
            let runID = String(file.dropLast(".json".count))
            let r = try box.run(["changes", "--db", "a.sqlite", "--patch", runID])
            #expect(r.status == 0, "\(r.stderr)")
            let operations = try JSONDecoder().decode([PatchOperation].self, from: Data(r.stdout.utf8))
            let expected = try ChangeDocument(contentsOfFile: box.path("changes/" + file)).jsonPatch()
            #expect(operations == expected)
            #expect(!operations.isEmpty)
        }
        let printed = try box.run(["changes", "--db", "a.sqlite", "--patch", String(files[1].dropLast(".json".count))]).stdout
        let stored = try JSONDecoder().decode([PatchOperation].self, from: try #require(box.bytes("changes/" + written)))
        #expect(try JSONDecoder().decode([PatchOperation].self, from: Data(printed.utf8)) == stored)
        #expect(try box.run(["changes", "--db", "a.sqlite", "--patch", "20200101T000000Z-001"]).status == 66)
    }

    /// A first import is one insert per object with its new values only (no old side).
    @Test func aFirstImportIsOneInsertPerObjectWithoutOldValues() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("changes")).first)
        let text = String(decoding: try #require(box.bytes("changes/" + file)), as: UTF8.self)
        #expect(!text.contains("\"old\""), "an insert has no old side")
        let document = try ChangeDocument(contentsOfFile: box.path("changes/" + file)).squashed()
        #expect(document.changes.count == 3)
        #expect(document.changes.allSatisfy { $0.change == .insert && $0.attributes["displayName"] != nil })
        #expect(document.counts["Programme"].inserted == 12)
    }

    /// A killed import leaves its unfinished change file (`.json.<pid>.tmp`); the next import
    /// removes it once that process is gone, and leaves a live one's alone.
    @Test func theUnfinishedFileOfAKilledRunIsRemoved() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("changes"), withIntermediateDirectories: true)
        let dead = "20200101T030000Z-001.json.2147483646.tmp", live = "20200101T030000Z-002.json.1.tmp"
        try box.write("changes/" + dead, "{\"model\":\"x\",\"changes\":[")
        try box.write("changes/" + live, "{")
        try box.write("g0.xml", guide(night: 0))
        #expect(box.importing(["g0.xml"], db: "a.sqlite") { $0.source = "s" }.status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
        #expect(!names.contains(dead) && names.contains(live), "\(names.sorted())")
        #expect(names.filter { $0.hasSuffix(".tmp") }.count == 1)
    }

    @Test func changeFilesDaysMustBeANumberOfDays() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g0.xml"))], extra: #", "changeFilesDays": -1"#))
        let r = box.nightly(config: "c.json")
        #expect(r.status == 78)
        #expect(r.stderr.contains("changeFilesDays"))
    }
}
