import Foundation
import Job
import TestSupport
import Testing
import TVImportCommands

/// `import` and `run` share one envelope (Sources/Job/RunEnvelope.swift): lock, open, change file,
/// run log and report. These check what it does for both, through the jobs in process and through
/// the binary where the output streams are the point.
@Suite struct RunEnvelopeTests {
    /// A folder of its own, removed afterwards.
    final class Folder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("envelope-\(UUID().uuidString)").path
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func file(_ name: String) -> String { path + "/" + name }
        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    /// A guide of two channels whose programmes run from `start` for six hours.
    static func guide(from start: Int64) -> String {
        let channels = [GuideText.Channel("one.test", name: "One"), GuideText.Channel("two.test", name: "Two")]
        var programmes: [GuideText.Programme] = []
        for channel in channels {
            for hour: Int64 in 0..<6 {
                let begins = start + hour * 3600
                programmes.append(GuideText.Programme(channel.id, start: begins, stop: begins + 3600, title: "Hour \(hour)"))
            }
        }
        return GuideText.document(channels: channels, programmes: programmes)
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func theParsedFlagsReachThePipelineAsTheyAre() throws {
        let command = try #require(try TVImport.parseAsRoot(["import", "--format", "json", "--force", "a.xml"]) as? TVImport.Import)
        var job = ImportJob(database: "tv.sqlite", files: command.files)
        job.flags = command.flags.jobFlags
        let options = PipelineOptions(flags: job.flags, cacheDirectory: "tv.sqlite.cache")
        #expect(options.flags == JobFlags(force: true, json: true))
        #expect(options.force && !options.dryRun)
        #expect(options.collectChanges, "a JSON report lists every change")
        #expect(!options.passCommandErrors)
        #expect(PipelineOptions(flags: JobFlags(verbose: true), cacheDirectory: "c").passCommandErrors)
        #expect(!PipelineOptions(flags: JobFlags(quiet: true), cacheDirectory: "c").collectChanges)
    }

    @Test func aPreviewedFirstImportLeavesNothingAndARealOneIsRecorded() throws {
        let folder = try Folder()
        try Self.guide(from: Self.now - 1800).write(toFile: folder.file("guide.xml"), atomically: true, encoding: .utf8)
        var job = ImportJob(database: folder.file("tv.sqlite"), files: [folder.file("guide.xml")])
        job.flags = JobFlags(dryRun: true)
        let preview = try job.run()
        #expect(preview.status == .success)
        #expect(preview.output.hasPrefix("Dry run: nothing was changed.\nsource default: would apply"), "\(preview.output)")
        #expect(folder.names == ["guide.xml"], "a dry first import created files")

        job.flags = JobFlags(quiet: true)
        let stored = try job.run()
        #expect(stored.output.isEmpty && stored.status == .success)
        #expect(folder.names.contains("tv.sqlite") && folder.names.contains("changes"))
        let changeFiles = try FileManager.default.contentsOfDirectory(atPath: folder.file("changes"))
        #expect(changeFiles.count == 1 && changeFiles[0].hasSuffix(".json"))
        let logged = try #require(RunLog.last(database: folder.file("tv.sqlite")).first)
        #expect(logged.command == "import" && logged.exitCode == 0 && !logged.dryRun)
    }

    @Test func aRunIsLockedOpenedRecordedAndLoggedTheSameWay() throws {
        let folder = try Folder()
        try Self.guide(from: Self.now - 1800).write(toFile: folder.file("guide.xml"), atomically: true, encoding: .utf8)
        try """
            {"database": "\(folder.file("tv.sqlite"))", "output": "\(folder.file("feeds"))",
             "sources": [{"name": "test", "url": "\(folder.file("guide.xml"))"}]}
            """.write(toFile: folder.file("config.json"), atomically: true, encoding: .utf8)
        var job = NightlyJob(config: try JobConfig.load(path: folder.file("config.json")))
        job.flags = JobFlags(dryRun: true, json: true)
        let preview = try job.run()
        #expect(preview.status == .success)
        #expect(preview.output.hasPrefix("{"), "a JSON report: \(preview.output)")
        #expect(RunLog.last(database: folder.file("tv.sqlite")).isEmpty, "a dry run is not logged")

        job.flags = JobFlags()
        let stored = try job.run()
        #expect(stored.status == .success)
        #expect(stored.output.contains("source test: applied"))
        #expect(stored.output.contains("\nchanges: " + folder.file("changes/")), "\(stored.output)")
        let logged = try #require(RunLog.last(database: folder.file("tv.sqlite")).first)
        #expect(logged.command == "run" && logged.exitCode == 0)
        // One writer at a time: the lock is free again once the run returned.
        #expect(try job.run().status == .success)
    }

    /// Beside a JSON report a failed source is also one line on stderr, for `import` as for `run`
    /// (README, cron etiquette): both report through the envelope.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Repository.tvimport), "build tvimport first"))
    func aFailedSourceIsOnStderrBesideTheJSONReportOfImportAndRun() throws {
        let folder = try Folder()
        // Every programme ended a day ago: the safety guard refuses the guide (65).
        try Self.guide(from: Self.now - 2 * 86400).write(toFile: folder.file("stale.xml"), atomically: true, encoding: .utf8)
        try """
            {"database": "tv.sqlite", "output": "feeds", "sources": [{"name": "default", "url": "stale.xml"}]}
            """.write(toFile: folder.file("config.json"), atomically: true, encoding: .utf8)
        let directory = URL(fileURLWithPath: folder.path)
        let imported = try Subprocess.run(Repository.tvimport, ["import", "--db", "tv.sqlite", "--format", "json", "stale.xml"], in: directory)
        let run = try Subprocess.run(Repository.tvimport, ["run", "--config", "config.json", "--format", "json"], in: directory)
        for result in [imported, run] {
            #expect(result.status == 65)
            #expect(result.output.hasPrefix("{"))
            #expect(result.stderr.hasPrefix("tvimport: source default: source 'default' refused by the safety guard"), "\(result.stderr)")
        }
    }
}
