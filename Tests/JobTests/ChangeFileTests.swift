import Foundation
import Job
import ObjectGraph
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
        #expect(try box.run(["import", "--db", "a.sqlite", "--source", "s", "g0.xml"]).status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("b.sqlite"))
        let firstFiles = Set(try FileManager.default.contentsOfDirectory(atPath: box.path("changes")))
        for night in 1...4 {
            try box.write("g\(night).xml", guide(night: night))
            let r = try box.run(["import", "--db", "a.sqlite", "--source", "s", "g\(night).xml"])
            #expect(r.status == 0, "stderr: \(r.stderr)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
            .filter { !firstFiles.contains($0) && !$0.hasSuffix(".patch.json") }.sorted()
        #expect(files.count == 4)
        for file in files {
            let r = try box.run(["apply", "--db", "b.sqlite", "changes/" + file])
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
        #expect(try box.run(["import", "--db", "a.sqlite", "--source", "s", "g0.xml"]).status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("before.sqlite"))
        #expect(try box.run(["import", "--db", "a.sqlite", "--source", "s", "g1.xml"]).status == 0)
        let undo = try box.run(["undo", "--db", "a.sqlite"])
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
        #expect(try box.run(["import", "--db", "a.sqlite", "--source", "s", "g0.xml"]).status == 0)
        try FileManager.default.copyItem(atPath: box.path("a.sqlite"), toPath: box.path("b.sqlite"))
        #expect(try box.run(["import", "--db", "a.sqlite", "--source", "s", "g1.xml"]).status == 0)
        // Someone renamed a programme in b: the file's old title no longer matches there.
        let id = "alpha.test/" + xmltvTime(guideBase())
        #expect(try box.run(["edit", "--db", "b.sqlite", "--force", "Programme", id, "title=Renamed"]).status == 0)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("changes"))
            .filter { !$0.hasSuffix(".patch.json") }.sorted().last)
        let r = try box.run(["apply", "--db", "b.sqlite", "changes/" + file])
        #expect(r.status == 65)
        #expect(r.stdout.contains("conflict"))
        let status = try box.run(["status", "--db", "b.sqlite"])
        #expect(status.status == 0)
    }

    @Test func aDryRunChangesNoByteOfDatabaseWALFeedsOrCache() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("g1.xml", guide(night: 1))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g0.xml"))]))
        #expect(try box.run(["run", "--config", "c.json"]).status == 0)
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
        let r = try box.run(["run", "--config", "c.json", "--dry-run"])
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
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status == 0)
        let first = try names()
        #expect(first == ["20200103T030000Z-001.json", "20200103T030000Z-001.patch.json", "notes.json"], "\(first.sorted())")

        // A new change file becomes the newest: the old one goes too.
        try box.write("g1.xml", guide(night: 1))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g1.xml"))], extra: #", "changeFilesDays": 10"#))
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status == 0)
        let now = try names()
        #expect(now.count == 3 && now.contains("notes.json"), "\(now.sorted())")
        #expect(now.allSatisfy { !$0.hasPrefix("2020") })
        let undo = try box.run(["undo", "--db", "tv.sqlite"])
        #expect(undo.status == 0, "\(undo.stdout) \(undo.stderr)")
    }

    @Test func changeFilesDaysMustBeANumberOfDays() throws {
        let box = try Sandbox()
        try box.write("g0.xml", guide(night: 0))
        try box.write("c.json", makeConfig(sources: [("s", box.path("g0.xml"))], extra: #", "changeFilesDays": -1"#))
        let r = try box.run(["run", "--config", "c.json"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("changeFilesDays"))
    }
}
