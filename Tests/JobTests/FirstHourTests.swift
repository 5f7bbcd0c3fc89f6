import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user meets in the first hour (issue #18): the default source, edit's refusals, the
/// command line's manners and messages. Each test drives the built binary as a user would.
@Suite struct FirstHourTests {
    /// A guide of `channels` whose programmes are the half hours `slots` from `guideBase()`.
    func guide(_ channels: [String] = ["alpha.test"], slots: [Int], title: (Int) -> String = { "Show \($0)" }) -> String {
        let base = guideBase()
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n"
        for c in channels { xml += "  <channel id=\"\(c)\"><display-name>Name of \(c)</display-name></channel>\n" }
        for c in channels {
            for i in slots {
                let start = base.addingTimeInterval(Double(i) * 1800)
                xml += "  <programme start=\"\(GuideText.time(start))\" stop=\"\(GuideText.time(start.addingTimeInterval(1800)))\" channel=\"\(c)\"><title>\(title(i))</title></programme>\n"
            }
        }
        return xml + "</tv>\n"
    }

    // MARK: 3. The default source

    /// Dated file names are one source: the second night's guide deletes what it cancelled.
    @Test func datedFilesAreOneSourceNamedDefault() throws {
        let box = try Sandbox()
        try box.write("guide-2026-11-24.xml", guide(slots: Array(0..<10)))
        try box.write("guide-2026-11-25.xml", guide(slots: Array(0..<4) + Array(5..<10)))
        let first = box.importing(["guide-2026-11-24.xml"], db: "tv.sqlite")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("source default: applied"), "the report names the source: \(first.stdout)")
        let second = box.importing(["guide-2026-11-25.xml"], db: "tv.sqlite") { $0.flags.json = true }
        #expect(second.status == 0, "\(second.stderr)")
        let json = try #require(parseJSON(second.stdout))
        let summary = try #require((json["summary"] as? [String: Any])?["Programme"] as? [String: Any])
        #expect(summary["deleted"] as? Int == 1, "the cancelled programme is deleted: \(summary)")
        #expect((json["sources"] as? [[String: Any]])?.first?["name"] as? String == "default")
        let status = try #require(parseJSON(box.status(db: "tv.sqlite", json: true).stdout))
        #expect((status["sources"] as? [String: Any])?.keys.sorted() == ["default"])
    }

    // MARK: 4. edit refuses what it must

    @Test func editRefusesIdentityDerivedAndWhitelistedKeysAndClears() throws {
        let box = try Sandbox()
        try box.write("g.xml", guide(slots: [0, 1]))
        try #require(box.importing(["g.xml"], db: "tv.sqlite").status == 0)
        let before = try storedData(box, "tv.sqlite")

        let identity = box.edit("Channel", "alpha.test", ["xmltvId=other"], db: "tv.sqlite")
        #expect(identity.status == 64 && identity.stderr.contains("identity"), "\(identity.status) \(identity.stderr)")
        #expect(!identity.stderr.contains("SQLite"), "\(identity.stderr)")
        let derived = box.edit("Channel", "alpha.test", ["programmeCount=5"], db: "tv.sqlite")
        #expect(derived.status == 64 && derived.stderr.contains("kept by tvimport"), "\(derived.stderr)")
        let source = box.edit("Channel", "alpha.test", ["source=other"], db: "tv.sqlite")
        #expect(source.status == 64, "\(source.stderr)")
        let whitelisted = box.edit("Channel", "alpha.test", ["displayName=Mine"], db: "tv.sqlite")
        #expect(whitelisted.status == 64 && whitelisted.stderr.contains("--force"), "\(whitelisted.stderr)")
        #expect(try storedData(box, "tv.sqlite") == before, "a refused edit changed the database")
        let forced = box.edit("Channel", "alpha.test", ["displayName=Mine"], db: "tv.sqlite", force: true)
        #expect(forced.status == 0, "\(forced.stderr)")

        let programme = "alpha.test/" + GuideText.time(guideBase()).prefix(14)
        #expect(box.edit("Programme", programme, ["note=remember"], db: "tv.sqlite").status == 0)
        func note() throws -> String {
            let r = try box.run(["/bin/sh", "-c", "sqlite3 tv.sqlite \"SELECT quote(note) FROM Programme ORDER BY start LIMIT 1\""], executable: "/usr/bin/env")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try note() == "'remember'")
        #expect(box.edit("Programme", programme, ["note="], db: "tv.sqlite").status == 0)
        #expect(try note() == "NULL", "note= clears the attribute")
        #expect(box.edit("Programme", programme, ["note=x"], db: "tv.sqlite").status == 0)
        #expect(box.edit("Programme", programme, db: "tv.sqlite", unset: ["note"]).status == 0)
        #expect(try note() == "NULL", "--unset clears the attribute")
        let required = box.edit("Channel", "alpha.test", db: "tv.sqlite", unset: ["hidden"])
        #expect(required.status == 64 && required.stderr.contains("must have a value"), "\(required.stderr)")
        // Edits are in the run log.
        let status = box.status(db: "tv.sqlite")
        #expect(status.stdout.contains(" edit "), "\(status.stdout)")
    }

    // MARK: 5-9. The command line

    @Test func aMistypedCommandNamesTheMeantOne() throws {
        let box = try Sandbox()
        let typo = try box.run(["stauts", "--db", "x"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("did you mean 'status'"), "\(typo.stderr)")
        let unknown = try box.run(["list"])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown command 'list'"), "\(unknown.stderr)")
        // Options still go to the default command.
        let version = try box.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("tvimport "), "\(version.stdout)")
        #expect(version.stdout.contains("(") && !version.stdout.contains("()"), "the build's git description: \(version.stdout)")
    }

    /// After the README's first run (`tvimport` in a fresh folder), `tvimport status` needs no --db.
    @Test func commandsDefaultToRunsDatabase() throws {
        let box = try Sandbox()
        let run = try box.run([])
        try #require(run.status == 0, "\(run.stderr)")
        let status = try box.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Database tvimport.sqlite"), "\(status.stdout)")
        #expect(status.stdout.contains("source sample"), "\(status.stdout)")
        let export = try box.run(["export", "--out", "again"])
        #expect(export.status == 0, "\(export.stderr)")
        // TVIMPORT_DB is the default where no --db is given, as for run.
        let elsewhere = try box.run(["status"], environment: ["TVIMPORT_DB": box.path("none.sqlite")])
        #expect(elsewhere.status == 66 && elsewhere.stderr.contains("none.sqlite"), "\(elsewhere.stderr)")
    }

    @Test func importDashReadsStandardInput() throws {
        let box = try Sandbox()
        try box.write("g.xml", guide(slots: [0, 1, 2]))
        let r = try box.run(["-c", "\"$0\" import --db tv.sqlite - < g.xml", Repository.tvimport], executable: "/bin/sh")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("3 inserted"), "\(r.stdout)")
    }

    @Test func quietFailureIsOneLineOnStderrAndNothingOnStdout() throws {
        let box = try Sandbox()
        try box.write("bad.xml", "<tv><programme start=\"x\"")
        let r = try box.run(["import", "--db", "tv.sqlite", "--quiet", "bad.xml"])
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty, "stdout: \(r.stdout)")
        #expect(r.stderr.split(separator: "\n").count == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("bad.xml"), "\(r.stderr)")

        try box.write("c.json", makeConfig(sources: [("broken", box.path("bad.xml"))]))
        let run = try box.run(["run", "--config", "c.json", "--quiet"])
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty, "stdout: \(run.stdout)")
        #expect(run.stderr.split(separator: "\n").count == 1, "stderr: \(run.stderr)")
    }

    /// The parser wraps the help, not the source: no ragged lines at 80 columns.
    @Test(arguments: [[], ["import"], ["run"], ["edit"], ["export"], ["status"], ["undo"], ["apply"]])
    func helpIsWrappedByTheParser(_ command: [String]) throws {
        let box = try Sandbox()
        let r = try box.run(["help"] + command, environment: ["COLUMNS": "80"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in lines where !line.hasPrefix("USAGE:") {
            #expect(line.count <= 80, "wider than 80 columns: '\(line)'")
        }
        // Inside a paragraph of prose only the last line may be short.
        var paragraph: [String] = []
        for line in lines + [""] {
            if line.isEmpty || line.hasPrefix(" ") || line.hasSuffix(":") {
                for short in paragraph.dropLast() where short.count < 45 {
                    Issue.record("a hard-wrapped line in \(command): '\(short)'")
                }
                paragraph = []
            } else {
                paragraph.append(line)
            }
        }
    }

    // MARK: 10-11. Messages

    @Test func notXMLSaysWhatTheFileStartsWith() throws {
        let box = try Sandbox()
        try box.write("notes.txt", "hello world\nthis is text\n")
        let text = box.importing(["notes.txt"], db: "tv.sqlite")
        #expect(text.status == 65)
        #expect(text.stdout.contains("notes.txt:1: not XML (starts with \"hello world\\nthis\")"), "\(text.stdout)")
        try Data([0x00, 0x01, 0x02, 0x50, 0x4B, 0x03, 0x04, 0xFF, 0x10, 0x20]).write(to: URL(fileURLWithPath: box.path("blob.bin")))
        let binary = box.importing(["blob.bin"], db: "tv.sqlite")
        #expect(binary.status == 65)
        #expect(binary.stdout.contains("blob.bin:1: not XML (starts with bytes 00 01 02 50"), "\(binary.stdout)")
        try Data([0x50, 0x4B, 0x03, 0x04, 0xFF, 0x10, 0x20, 0x00]).write(to: URL(fileURLWithPath: box.path("zip.bin")))
        let zip = box.importing(["zip.bin"], db: "tv.sqlite")
        #expect(zip.stdout.contains("not XML (starts with bytes 50 4b 03 04"), "\(zip.stdout)")

        try FileManager.default.createDirectory(atPath: box.path("dir"), withIntermediateDirectories: true)
        try box.write("g.xml", guide(slots: [0]))
        let dir = box.importing(["g.xml"], db: "dir")
        #expect(dir.status == 73, "\(dir.status)")
        #expect(dir.stderr.contains("dir is a directory"), "\(dir.stderr)")
        #expect(!dir.stderr.contains("SQLite error"), "\(dir.stderr)")
    }

    @Test func dryRunSaysWouldAndCountsDuplicatesAndPlurals() throws {
        let box = try Sandbox()
        var xml = guide(slots: [0])
        // The same programme twice: one element dropped as a duplicate.
        let line = xml.split(separator: "\n").first { $0.contains("<programme") }.map(String.init) ?? ""
        xml = xml.replacingOccurrences(of: "</tv>", with: line + "\n</tv>")
        try box.write("g.xml", xml)
        let dry = box.importing(["g.xml"], db: "tv.sqlite") { $0.flags.dryRun = true }
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("source default: would apply"), "\(dry.stdout)")
        #expect(dry.stdout.contains("2 programme elements read, 1 duplicate dropped"), "\(dry.stdout)")
        let real = box.importing(["g.xml"], db: "tv.sqlite") { $0.flags.verbose = true }
        #expect(real.stdout.contains("source default: applied"), "\(real.stdout)")
        // --verbose lists each warning with its file and line.
        #expect(real.stdout.contains("g.xml:4: duplicate:"), "\(real.stdout)")
        try box.write("one.xml", guide(slots: [0]))
        let single = box.importing(["one.xml"], db: "one.sqlite")
        #expect(single.stdout.contains("(1 programme read,"), "\(single.stdout)")
    }

    // MARK: 12. export

    @Test func exportOfAGuideOutsideTheWindowSaysSo() throws {
        let box = try Sandbox()
        // A guide that ended three days ago: the feeds' default window (24 h back) holds nothing.
        let old = guideBase().addingTimeInterval(-4 * 86400)
        var xml = "<tv><channel id=\"old.test\"><display-name>Old</display-name></channel>"
        xml += "<programme start=\"\(GuideText.time(old))\" stop=\"\(GuideText.time(old.addingTimeInterval(1800)))\" channel=\"old.test\"><title>Gone</title></programme></tv>"
        try box.write("old.xml", xml)
        let imported = box.importing(["old.xml"], db: "tv.sqlite") { $0.flags.force = true }
        try #require(imported.status == 0, "\(imported.stdout) \(imported.stderr)")
        let export = box.exporting(db: "tv.sqlite", out: "feeds")
        #expect(export.status == 0)
        #expect(export.stdout.contains("0 programmes in the window"), "\(export.stdout)")
        #expect(export.stdout.contains("the guide ends \(String(ISO8601DateFormatter().string(from: old.addingTimeInterval(1800)).prefix(10)))"), "\(export.stdout)")
        let wider = box.exporting(db: "tv.sqlite", out: "feeds", pastHours: 200)
        #expect(wider.status == 0)
        #expect(!wider.stdout.contains("0 programmes in the window"), "\(wider.stdout)")
        #expect(FileManager.default.fileExists(atPath: box.path("feeds/old.test.ics")))
        // A config with feeds but no sources is enough for export.
        try box.write("feeds.json", #"{"feeds": {"pastHours": 200}}"#)
        let configured = box.exporting(db: "tv.sqlite", out: "feeds2", config: "feeds.json")
        #expect(configured.status == 0, "\(configured.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.path("feeds2/old.test.ics")))
    }

    // MARK: 13. Config syntax

    @Test func configSyntaxErrorsGiveLineAndColumnAndTrailingCommasAreRefused() throws {
        let box = try Sandbox()
        try box.write("comma.json", "{\n  \"sources\": [\n    {\"name\": \"a\", \"url\": \"a.xml\"},\n  ]\n}\n")
        let comma = box.nightly(config: "comma.json")
        #expect(comma.status == 78)
        #expect(comma.stderr.contains("comma.json:3:34: not valid JSON: a trailing comma"), "\(comma.stderr)")
        try box.write("broken.json", "{\n  \"database\": \"tv.sqlite\"\n  \"output\": \"out\"\n}\n")
        let broken = box.nightly(config: "broken.json")
        #expect(broken.status == 78)
        #expect(broken.stderr.contains("broken.json:3:3: not valid JSON: expected a comma or a closing brace '}' after the previous value (which ends at 2:25)"),
                "issue 39: say what was expected, not Foundation's \"Invalid value\": \(broken.stderr)")
        #expect(!broken.stderr.contains("around character"), "\(broken.stderr)")
        try box.write("list.json", "{\"sources\": [\n  {\"name\": \"a\", \"url\": \"a.xml\"}\n  {\"name\": \"b\", \"url\": \"b.xml\"}\n]}\n")
        let list = box.nightly(config: "list.json")
        #expect(list.status == 78)
        #expect(list.stderr.contains("list.json:3:3: not valid JSON: expected a comma or a closing bracket ']'"), "\(list.stderr)")
    }

    // MARK: 14. Progress on a terminal

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (util-linux) gives the import a terminal"))
    func importShowsProgressOnATerminal() throws {
        let box = try Sandbox()
        try box.write("g.xml", makeGuide(channels: ["a.test", "b.test"], programmes: 4))
        // `script` runs the import with a pseudo-terminal as stdout and stderr; the typescript holds both.
        let r = try box.run(["-qec", "\(Repository.tvimport) import --db tv.sqlite g.xml", box.path("typescript")], executable: "/usr/bin/script")
        #expect(r.status == 0, "\(r.stderr)")
        let typescript = String(decoding: box.bytes("typescript") ?? Data(), as: UTF8.self)
        #expect(typescript.contains("programmes merged"), "no progress line: \(typescript)")
        let plain = try box.run(["import", "--db", "tv2.sqlite", "g.xml"])
        #expect(!plain.stderr.contains("programmes merged"), "progress without a terminal: \(plain.stderr)")
    }

    // MARK: 16. Installed layout

    /// Installed as the README says (binary in bin/, sample in share/tvimport/), the bundled run works.
    @Test func theInstalledBinaryFindsItsSampleInShare() throws {
        let box = try Sandbox()
        let bin = box.path("prefix/bin"), share = box.path("prefix/share/tvimport")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Repository.tvimport, toPath: bin + "/tvimport")
        try FileManager.default.copyItem(atPath: repoRoot.appendingPathComponent("Sources/Job/Resources/sample-guide.xml").path,
                                         toPath: share + "/sample-guide.xml")
        let r = try box.run(["run", "--quiet"], executable: bin + "/tvimport")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.path("feeds/index.html")))
        try FileManager.default.removeItem(atPath: share + "/sample-guide.xml")
        let missing = try box.run(["run", "--quiet"], executable: bin + "/tvimport")
        #expect(missing.status == 78 && missing.stderr.contains("/usr/local/share/tvimport"), "\(missing.stderr)")
    }

    // MARK: import URL (issue #15, item 6)

    @Test func importTakesAURLWithTheFetchersRules() throws {
        let box = try Sandbox()
        let (base, stop) = try startGuideServer(box, guide: guide(slots: [0, 1]))
        defer { stop() }
        let first = box.importing([base + "/good"], db: "tv.sqlite")
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        #expect(first.stdout.contains("2 inserted"), "\(first.stdout)")
        let again = box.importing([base + "/good"], db: "tv.sqlite")
        #expect(again.status == 0)
        #expect(again.stdout.contains("source default: unchanged"), "identical download: \(again.stdout)")
        let before = try storedData(box, "tv.sqlite")
        let failed = box.importing([base + "/html"], db: "tv.sqlite")
        #expect(failed.status == 69, "\(failed.stdout)")
        #expect(failed.stdout.contains("HTML"), "\(failed.stdout)")
        #expect(try storedData(box, "tv.sqlite") == before)
    }

    // MARK: Issue 39, the first hour's second pass

    /// 1. `help WORD` names a word that is no command; a mistyped option names the one meant.
    @Test func helpOfNoCommandAndAMistypedOptionAreUsageErrors() throws {
        let box = try Sandbox()
        let none = try box.run(["help", "nonexistent"])
        #expect(none.status == 64, "\(none.status) \(none.stdout)")
        #expect(none.stderr.contains("no command 'nonexistent'") && none.stderr.contains("(commands: run, import"), "\(none.stderr)")
        #expect(none.stdout.isEmpty, "no general help: \(none.stdout)")
        let typo = try box.run(["help", "imprt"])
        #expect(typo.status == 64 && typo.stderr.contains("did you mean 'import'"), "\(typo.stderr)")
        #expect(try box.run(["help", "import"]).status == 0)
        let version = try box.run(["--verison"])
        #expect(version.status == 64, "\(version.status)")
        #expect(version.stderr.contains("did you mean --version"), "\(version.stderr)")
        let option = try box.run(["import", "--dyr-run", "g.xml"])
        #expect(option.status == 64 && option.stderr.contains("did you mean --dry-run"), "\(option.stderr)")
        let unknown = try box.run(["--zzzzzz"])
        #expect(unknown.status == 64 && !unknown.stderr.contains("did you mean"), "\(unknown.stderr)")
    }

    /// 2. A guide cut short, plain or gzip: the message says so, with the line, then libxml2's words.
    @Test func aTruncatedGuideSaysItEndsEarly() throws {
        let box = try Sandbox()
        let whole = makeGuide(channels: (0..<30).map { "c\($0).test" }, programmes: 40)
        try box.write("whole.xml", whole)
        let bytes = Array(whole.utf8)
        // Cut inside an attribute value, as a download that stopped would.
        let cut = bytes.count / 2 + 7
        try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: box.path("cut.xml")))
        let lines = bytes[..<cut].filter { $0 == 0x0A }.count + 1
        // The report on stdout says why the source failed (--quiet: the one line on stderr).
        let plain = try box.run(["import", "--db", "tv.sqlite", "cut.xml"])
        #expect(plain.status == 65, "\(plain.status) \(plain.stderr)")
        #expect(plain.stdout.contains("cut.xml:\(lines): the file ends before the document is complete (probably truncated): "), "\(plain.stdout)")
        // libxml2's own message follows.
        let after = plain.stdout.components(separatedBy: "(probably truncated): ").last ?? ""
        #expect(after.contains("expected"), "\(plain.stdout)")
        let quiet = try box.run(["import", "--db", "tv.sqlite", "--quiet", "cut.xml"])
        #expect(quiet.stderr.split(separator: "\n").count == 1 && quiet.stderr.contains("probably truncated"), "\(quiet.stderr)")

        try #require(try box.run(["-c", "gzip -c whole.xml > whole.xml.gz && head -c $(( $(wc -c < whole.xml.gz) / 2 )) whole.xml.gz > cut.xml.gz"],
                                 executable: "/bin/sh").status == 0)
        let gzip = try box.run(["import", "--db", "tv.sqlite", "cut.xml.gz"])
        #expect(gzip.status == 65, "\(gzip.status) \(gzip.stderr)")
        #expect(gzip.stdout.contains("cut.xml.gz:") && gzip.stdout.contains("the file ends before the document is complete (probably truncated): gzip data is truncated"), "\(gzip.stdout)")
        #expect(!FileManager.default.fileExists(atPath: box.path("tv.sqlite")), "a refused first import creates no database")
    }

    /// 4. A directory is an input that cannot be read as a file (66); a database that is a
    /// directory, or an import refused before anything was stored, leaves nothing behind.
    @Test func refusedImportsCreateNothing() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("adir"), withIntermediateDirectories: true)
        try box.write("g.xml", guide(slots: [0, 1]))
        try box.write("bad.xml", "<tv><programme start=\"x\"")
        let listing = { Set((try? FileManager.default.contentsOfDirectory(atPath: box.dir.path)) ?? []) }
        let before = listing()

        let directory = box.importing(["adir"], db: "tv.sqlite")
        #expect(directory.status == 66, "\(directory.status) \(directory.stderr)")
        #expect(directory.stderr.contains("adir") && directory.stderr.contains("directory"), "\(directory.stderr)")
        #expect(listing() == before, "left behind: \(listing().subtracting(before))")

        let database = box.importing(["g.xml"], db: "adir")
        #expect(database.status == 73, "\(database.status) \(database.stderr)")
        #expect(listing() == before, "left behind: \(listing().subtracting(before))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.path("adir")).isEmpty)

        let refused = box.importing(["bad.xml"], db: "tv.sqlite")
        #expect(refused.status == 65, "\(refused.status) \(refused.stderr)")
        #expect(listing() == before, "left behind: \(listing().subtracting(before))")

        // The safety guard's refusal of a first import: nothing was done, nothing is created.
        try box.write("past.xml", "<tv><channel id=\"a\"><display-name>A</display-name></channel>"
                      + "<programme start=\"20000101000000 +0000\" stop=\"20000101010000 +0000\" channel=\"a\"><title>Old</title></programme></tv>")
        let guarded = box.importing(["past.xml"], db: "tv.sqlite")
        #expect(guarded.status == 65, "\(guarded.status) \(guarded.stderr)")
        #expect(listing() == before.union(["past.xml"]), "left behind: \(listing().subtracting(before))")

        // A database that exists keeps what it has; a refused import beside it adds no change file.
        #expect(box.importing(["g.xml"], db: "tv.sqlite").status == 0)
        let after = listing()
        #expect(box.importing(["bad.xml"], db: "tv.sqlite").status == 65)
        #expect(listing() == after)
    }

    /// 5. A grabber that fails: with --quiet one line on stderr; without, the report alone says it.
    @Test func aFailingGrabberIsOneLineQuietAndNotSaidTwice() throws {
        let box = try Sandbox()
        try box.write("c.json", """
            {"database": "tv.sqlite", "output": "out", "sources": [{"name": "grab", "command": ["sh", "-c", "echo 'no route to the listings' >&2; echo second line >&2; exit 3"]}]}
            """)
        let quiet = try box.run(["run", "--config", "c.json", "--quiet"])
        #expect(quiet.status == 69, "\(quiet.status) \(quiet.stderr)")
        #expect(quiet.stdout.isEmpty, "\(quiet.stdout)")
        #expect(quiet.stderr.split(separator: "\n").count == 1, "stderr: \(quiet.stderr)")
        #expect(quiet.stderr.contains("source grab") && quiet.stderr.contains("second line"), "\(quiet.stderr)")

        let loud = try box.run(["run", "--config", "c.json"])
        #expect(loud.status == 69)
        #expect(loud.stdout.contains("source grab: failed"), "\(loud.stdout)")
        #expect(!loud.stderr.contains("source grab"), "said on stdout and stderr: \(loud.stderr)")
        let imported = try box.run(["import", "--db", "tv.sqlite", "--quiet", "nonexistent.xml"])
        #expect(imported.stderr.split(separator: "\n").count == 1, "\(imported.stderr)")
    }

    /// 6. A programme start that does not exist: the nearest starts on that channel are named.
    @Test func editOfAMissingStartNamesTheNearestStarts() throws {
        let box = try Sandbox()
        try box.write("g.xml", guide(slots: [0, 1, 2, 3, 4, 5]))
        try #require(box.importing(["g.xml"], db: "tv.sqlite").status == 0)
        let base = guideBase()
        let missing = "alpha.test/" + GuideText.time(base.addingTimeInterval(3 * 1800 + 600)).prefix(14)
        let r = box.edit("Programme", missing, ["note=x"], db: "tv.sqlite")
        #expect(r.status == 65, "\(r.status) \(r.stderr)")
        func iso(_ d: Date) -> String { ISO8601DateFormatter().string(from: d) }
        let third = iso(base.addingTimeInterval(3 * 1800)), fourth = iso(base.addingTimeInterval(4 * 1800))
        #expect(r.stderr.contains("nearest starts on alpha.test") && r.stderr.contains(third) && r.stderr.contains(fourth), "\(r.stderr)")
        #expect(!r.stderr.contains(iso(base)), "only the nearest: \(r.stderr)")
        let channel = box.edit("Programme", "nope.test/" + GuideText.time(base).prefix(14), ["note=x"], db: "tv.sqlite")
        #expect(channel.status == 65 && channel.stderr.contains("no Channel 'nope.test'"), "\(channel.stderr)")
    }

    /// 6. `channels --unmapped` keeps the provider's id (the source with more channels, or the id
    /// that other sources' names match), not a grabber's made-up one, whatever the priorities.
    @Test func unmappedProposesTheProvidersId() throws {
        let box = try Sandbox()
        let provider = guide(["RTE1.ie", "RTE2.ie", "TG4.ie"], slots: [0, 1])
            .replacingOccurrences(of: "Name of RTE2.ie", with: "RTÉ2")
        let grabber = guide(["rte2.grab"], slots: [0, 1]).replacingOccurrences(of: "Name of rte2.grab", with: "RTE 2 HD")
        try box.write("provider.xml", provider)
        try box.write("grabber.xml", grabber)
        try #require(box.importing(["provider.xml"], db: "tv.sqlite") { $0.source = "provider" }.status == 0)
        try #require(box.importing(["grabber.xml"], db: "tv.sqlite") { $0.source = "grab"; $0.priority = 5 }.status == 0)
        let r = box.channels(db: "tv.sqlite", unmapped: true)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"RTE2.ie\": {\"aliases\": [\"rte2.grab\"]}"), "\(r.stdout)")
        #expect(!r.stdout.contains("\"rte2.grab\": {\"aliases\""), "\(r.stdout)")
    }

    /// 10. --verbose lists warnings in file and line order, programmes as CHANNEL START (UTC).
    @Test func verboseWarningsAreInLineOrderWithReadableIdentities() throws {
        let box = try Sandbox()
        let base = guideBase()
        var xml = "<tv>\n<channel id=\"a.test\"><display-name>A</display-name></channel>\n<channel id=\"b.test\"><display-name>B</display-name></channel>\n"
        // b's overlap comes first in the file, a's later: the merge meets a first.
        for (channel, offset) in [("b.test", 0.0), ("a.test", 0.0)] {
            for i in 0..<3 {
                let start = base.addingTimeInterval(Double(i) * 1800 + offset)
                xml += "<programme start=\"\(GuideText.time(start))\" stop=\"\(GuideText.time(start.addingTimeInterval(2400)))\" channel=\"\(channel)\"><title>T\(i)</title></programme>\n"
            }
        }
        try box.write("o.xml", xml + "</tv>\n")
        let r = box.importing(["o.xml"], db: "tv.sqlite") { $0.flags.verbose = true }
        #expect(r.status == 0, "\(r.stderr)")
        let listed = r.stdout.split(separator: "\n").filter { $0.contains("o.xml:") }
        let numbers = listed.compactMap { line in Int(line.split(separator: ":")[1]) }
        #expect(numbers.count == 4 && numbers == numbers.sorted(), "\(listed)")
        let second = ISO8601DateFormatter().string(from: base.addingTimeInterval(1800))
        #expect(listed.contains { $0.contains("b.test \(second) 'T1'") }, "\(listed)")
        #expect(!r.stdout.contains("-|"), "\(r.stdout)")
    }

    /// 9. The "shown guide" line appears only when the shown guide changed differently from the
    /// source's own counts: not on a single source's re-import.
    @Test func theShownGuideLineOnlyWhenItDiffers() throws {
        let box = try Sandbox()
        try box.write("g.xml", guide(slots: [0, 1, 2]))
        try box.write("h.xml", guide(slots: [0, 1, 2, 3]))
        for file in ["g.xml", "g.xml", "h.xml"] {
            let r = box.importing([file], db: "tv.sqlite") { $0.flags.force = true }
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!r.stdout.contains("shown guide"), "one source: \(r.stdout)")
        }
    }
}
