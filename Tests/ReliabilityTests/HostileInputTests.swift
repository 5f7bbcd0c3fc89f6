import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The hostile corpus (truncated and damaged gzip, error pages, XXE, entity bombs, traversal and
/// control characters in ids, absurd numbers, iCalendar injection, ...) lives in one place,
/// scripts/hostile, which is also its one driver: each input is imported as its own source into a
/// database holding a good guide, and the script checks exit codes, time, that a refused input
/// leaves the database byte-identical, that nothing is written outside the sandbox, that no byte
/// of /etc/passwd reaches the database or the feeds and that every feed keeps one VEVENT per
/// programme. This test runs it on the debug build.
@Suite struct HostileInputTests {
    @Test(.enabled(if: Tool.isInstalled("python3"), "needs python3 to run scripts/hostile"))
    func theHostileCorpusIsRefusedCleanly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Subprocess.run("python3", [Repository.path("scripts/hostile"), directory.path],
                                        environment: ["TVIMPORT_BIN": Repository.tvimport], timeout: 600)
        #expect(result.exitStatus == 0, "scripts/hostile failed:\n\(result.output)\n\(result.stderr)")
        // The script ran the corpus, not nothing: one line per input.
        #expect(result.output.split(separator: "\n").filter { $0.contains(" exit ") }.count >= 30, "\(result.output)")
    }

    /// A missing input file is exit 66 and changes nothing.
    @Test func missingFile() throws {
        let box = try GuardedSandbox()
        let r = try box.tvimport(["import", "--db", "tv.sqlite", "nope.xml"], timeout: 20)
        #expect(r.status == 66, "\(r.stderr)")
    }
}

/// A damaged database is refused, never crashed on and never overwritten.
@Suite struct HostileDatabaseTests {
    @Test(arguments: ["truncated", "random", "header-only", "text"])
    func damagedDatabaseIsRefusedAndLeftAlone(_ kind: String) throws {
        let box = try GuardedSandbox()
        try box.write("g.xml", Data(makeGuide(channels: ["db.test"], programmes: 4).utf8))
        let good = try box.tvimport(["import", "--db", "good.sqlite", "g.xml"])
        try #require(good.status == 0, "\(good.stdout)\(good.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("good.sqlite")))
        let damaged: Data
        switch kind {
        case "truncated": damaged = bytes.prefix(bytes.count / 2)
        case "random": damaged = Data((0..<5000).map { _ in UInt8.random(in: 0...255) })
        case "header-only": damaged = Data("SQLite format 3\u{0}garbage".utf8)
        default: damaged = Data("not a database\n".utf8)
        }
        try box.write("tv.sqlite", damaged)
        for args in [["import", "--db", "tv.sqlite", "g.xml"], ["status", "--db", "tv.sqlite"],
                     ["export", "--db", "tv.sqlite", "--out", "feeds"]] {
            let r = try box.tvimport(args, timeout: 20)
            let status = try #require(r.status, "\(args[0]): timeout")
            #expect(status != 0 && status < 128, "\(kind) \(args[0]): exit \(status): \(r.stderr)")
            #expect(FileManager.default.contents(atPath: box.path("tv.sqlite")) == damaged, "\(kind) \(args[0]) changed the file")
        }
        #expect(box.files(under: "feeds").filter { $0.hasSuffix(".ics") }.isEmpty)
    }
}
