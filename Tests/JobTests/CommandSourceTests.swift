import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fixture of ../shared whose programmes tv_sort neither adds to nor removes, and whose sorted
/// output is not grouped by channel (so the kept copy of the stream is read a second time).
private let sortFixture = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/xmltv/iptvorg_epgshare01.online.xml").path
private let haveSortFixture = FileManager.default.fileExists(atPath: sortFixture)
private let haveTvSort = Tool.path("tv_sort") != nil
private let haveSqlite3 = Tool.path("sqlite3") != nil

/// A config with file sources and command sources (name, argument vector, time limit).
private func commandConfig(files: [(String, String)] = [], commands: [(String, [String], Double?)], extra: String = "") -> String {
    func quoted(_ s: String) -> String { "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
    let list = files.map { "{\"name\": \(quoted($0.0)), \"url\": \(quoted($0.1))}" }
        + commands.map { name, arguments, timeout in
            "{\"name\": \(quoted(name)), \"command\": [\(arguments.map(quoted).joined(separator: ", "))]"
                + (timeout.map { ", \"timeoutSeconds\": \($0)" } ?? "") + "}"
        }
    return "{\"database\": \"tv.sqlite\", \"output\": \"out\", \"sources\": [\(list.joined(separator: ", "))]\(extra)}"
}

/// Every stored row of one source (its channels and their programmes), as sqlite3 prints them.
private func dump(_ box: Sandbox, source: String) throws -> String {
    let sql = "SELECT * FROM Channel WHERE source = '\(source)' ORDER BY _pk; "
        + "SELECT * FROM Programme WHERE channel IN (SELECT _pk FROM Channel WHERE source = '\(source)') ORDER BY _pk;"
    let r = try box.run(["-batch", "tv.sqlite", sql], executable: Tool.path("sqlite3")!)
    #expect(r.status == 0, "sqlite3: \(r.stderr)")
    return r.stdout
}

/// The report's entry for `source` in `run --format json`'s output.
private func sourceReport(_ output: String, _ source: String) -> [String: Any]? {
    (parseJSON(output)?["sources"] as? [[String: Any]])?.first { $0["name"] as? String == source }
}

@Suite(.serialized) struct CommandSourceTests {
    @Test(.enabled(if: haveTvSort, "needs tv_sort (Debian xmltv-util; scripts/install-deps installs it)"),
          .enabled(if: haveSortFixture, "needs ../shared/fixtures/xmltv"))
    func tvSortImportsExactlyWhatImportingTheFileDoes() throws {
        let box = try Sandbox()
        let imported = try box.run(["import", "--db", "file.sqlite", "--force", "--format", "json", sortFixture])
        try #require(imported.status == 0, "import: \(imported.stderr)")
        try box.write("grab.json", commandConfig(commands: [("grab", ["tv_sort", sortFixture], nil)]))
        let grabbed = try box.run(["run", "--config", "grab.json", "--force", "--format", "json"])
        try #require(grabbed.status == 0, "run: \(grabbed.stderr)")
        let fileSummary = try #require(parseJSON(imported.stdout)?["summary"] as? [String: Any])
        let grabSummary = try #require(parseJSON(grabbed.stdout)?["summary"] as? [String: Any])
        let programmes = try #require((fileSummary["Programme"] as? [String: Any])?["inserted"] as? Int)
        #expect(programmes > 100)
        for entity in ["Channel", "Programme"] {
            #expect(NSDictionary(dictionary: fileSummary[entity] as? [String: Any] ?? [:])
                        == NSDictionary(dictionary: grabSummary[entity] as? [String: Any] ?? [:]), "\(entity): \(fileSummary[entity] ?? "-") vs \(grabSummary[entity] ?? "-")")
        }
        #expect(sourceReport(grabbed.stdout, "grab")?["status"] as? String == "applied")
        let status = try box.run(["status", "--db", "tv.sqlite", "--format", "json"])
        let command = try #require((parseJSON(status.stdout)?["commands"] as? [String: Any])?["grab"] as? [String: Any], "\(status.stdout)")
        #expect(command["status"] as? String == "exit status 0")
        #expect((command["durationSeconds"] as? Double ?? -1) >= 0)
    }

    @Test(.enabled(if: haveSqlite3, "needs the sqlite3 command line tool (scripts/install-deps installs it)"))
    func aFailingCommandChangesNothingOfItsSourceAndTheOthersApply() throws {
        let box = try Sandbox()
        try box.write("grabbed.xml", makeGuide(channels: ["gamma.test", "delta.test"], programmes: 6))
        try box.write("grab.sh", "cat grabbed.xml\n")
        try box.write("web.xml", makeGuide(channels: ["alpha.test"], programmes: 4))
        let config = { (timeout: Double?) in
            commandConfig(files: [("web", "web.xml")], commands: [("grab", ["sh", "grab.sh"], timeout)])
        }
        try box.write("tv.json", config(nil))
        let first = try box.run(["run", "--config", "tv.json"])
        try #require(first.status == 0, "first run: \(first.stderr)")
        let before = try dump(box, source: "grab")
        #expect(before.contains("gamma.test"))

        let half = "head -c 600 grabbed.xml; echo 'grabber: lost the connection' >&2; exit 1\n"
        let cases: [(name: String, script: String, timeout: Double?, says: [String])] = [
            ("half a guide and exit 1", half, nil, ["exit status 1", "grabber: lost the connection"]),
            ("killed by a signal", "head -c 600 grabbed.xml; echo 'grabber: dying' >&2; kill -KILL $$\n", nil, ["signal 9", "grabber: dying"]),
            ("HTML", "echo '<html><body><h1>503 Service Unavailable</h1></body></html>'\n", nil, ["not a whole XMLTV document", "exit status 0"]),
            // Refused while it still runs: stopped by tvimport, and the report names the output, not the kill.
            ("HTML, then waiting", "echo '<html><body>Try later</body></html>'; sleep 30\n", nil, ["not a whole XMLTV document", "<html>"]),
            ("past its time limit", "echo $$ > group.pid; head -c 600 grabbed.xml; sleep 60 & sleep 60\n", 2, ["timed out after 2 s"]),
        ]
        for (i, c) in cases.enumerated() {
            try box.write("grab.sh", c.script)
            try box.write("web.xml", makeGuide(channels: ["alpha.test"], programmes: 4, titlePrefix: "Night \(i)"))
            try box.write("tv.json", config(c.timeout))
            let started = Date()
            let r = try box.run(["run", "--config", "tv.json", "--format", "json"])
            let elapsed = Date().timeIntervalSince(started)
            #expect(r.status == 69, "\(c.name): exit \(r.status), stderr: \(r.stderr)")
            let grab = sourceReport(r.stdout, "grab")
            #expect(grab?["status"] as? String == "failed", "\(c.name): \(r.stdout)")
            for text in c.says {
                let error = grab?["error"] as? String ?? ""
                #expect(error.contains(text), "\(c.name): the error does not say '\(text)': \(grab?["error"] ?? "-")")
            }
            #expect(sourceReport(r.stdout, "web")?["status"] as? String == "applied", "\(c.name): the other source was not applied")
            #expect(try dump(box, source: "grab") == before, "\(c.name): the failed source's data changed")
            if let timeout = c.timeout {
                #expect(elapsed < timeout + 5, "\(c.name): returned after \(elapsed) s")
                let group = try #require(Int32(String(decoding: box.bytes("group.pid") ?? Data(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
                #expect(kill(-group, 0) != 0 && errno == ESRCH, "\(c.name): a process of the command's group is left")
            }
        }
    }

    @Test func aMissingExecutableIsAConfigurationErrorBeforeAnythingRuns() throws {
        let box = try Sandbox()
        try box.write("web.xml", makeGuide())
        try box.write("tv.json", commandConfig(files: [("web", "web.xml")], commands: [("uk", ["tv_grab_nowhere_xx", "--days", "7"], nil)]))
        let r = try box.run(["run", "--config", "tv.json"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.status == 78, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.contains("tv_grab_nowhere_xx"))
        #expect(r.stderr.contains("/usr/bin:/bin"), "the PATH searched is not named: \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.path("tv.sqlite")), "something ran")
        #expect(!FileManager.default.fileExists(atPath: box.path("out")))
    }

    @Test func theSameOutputTwiceIsUnchangedAndWritesNothing() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(channels: ["gamma.test"], programmes: 5))
        try box.write("tv.json", commandConfig(commands: [("grab", ["cat", "guide.xml"], 60)]))
        let first = try box.run(["run", "--config", "tv.json", "--format", "json"])
        try #require(first.status == 0, "\(first.stderr)")
        #expect(sourceReport(first.stdout, "grab")?["status"] as? String == "applied")
        let before = box.snapshot(["tv.sqlite", "tv.sqlite-wal", "out"])
        let second = try box.run(["run", "--config", "tv.json", "--format", "json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(sourceReport(second.stdout, "grab")?["status"] as? String == "unchanged", "\(second.stdout)")
        #expect(sameBytesAndTimes(before, box.snapshot(["tv.sqlite", "tv.sqlite-wal", "out"])), "the second run wrote something")
    }

    @Test func aDryRunRunsTheCommandAndChangesNothing() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(channels: ["gamma.test"], programmes: 5))
        try box.write("grab.sh", "touch ran; cat guide.xml; echo 'fetching day 1 of 7' >&2\n")
        try box.write("tv.json", commandConfig(commands: [("grab", ["sh", "grab.sh"], 60)]))
        let first = try box.run(["run", "--config", "tv.json"])
        try #require(first.status == 0, "\(first.stderr)")
        try FileManager.default.removeItem(atPath: box.path("ran"))
        try box.write("guide.xml", makeGuide(channels: ["gamma.test"], programmes: 5, titlePrefix: "Changed"))
        let before = box.snapshot(["tv.sqlite", "tv.sqlite-wal", "tv.sqlite.commands", "out"])
        let dry = try box.run(["run", "--config", "tv.json", "--dry-run", "--verbose"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.path("ran")), "the command did not run")
        #expect(dry.stdout.contains("Changed"), "the dry run does not show the change: \(dry.stdout)")
        #expect(dry.stderr.contains("[grab] fetching day 1 of 7"), "--verbose does not pass standard error on: \(dry.stderr)")
        #expect(sameBytesAndTimes(before, box.snapshot(["tv.sqlite", "tv.sqlite-wal", "tv.sqlite.commands", "out"])), "the dry run wrote something")
    }

    @Test func aCommandRunsInTheConfigFilesFolder() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("conf"), withIntermediateDirectories: true)
        try box.write("conf/guide.xml", makeGuide(channels: ["gamma.test"], programmes: 3))
        try box.write("conf/tv.json", commandConfig(commands: [("grab", ["cat", "guide.xml"], nil)]))
        let r = try box.run(["run", "--config", "conf/tv.json", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(sourceReport(r.stdout, "grab")?["status"] as? String == "applied", "\(r.stdout)")
    }
}
