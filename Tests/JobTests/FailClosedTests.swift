import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A bad download never hurts the guide: after each kind of failure the database, the feeds and
/// the last good download are byte-identical to before, and the exit code says why.
@Suite(.serialized) struct FailClosedTests {
    func startServer(_ box: Sandbox, guide: String) throws -> (String, () -> Void) { try startGuideServer(box, guide: guide) }

    /// Bytes of every file that must not change: the database (and its WAL, if any), the feeds,
    /// the fetch cache.
    func snapshot(_ box: Sandbox) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in ["tv.sqlite", "tv.sqlite-wal"] where FileManager.default.fileExists(atPath: box.path(name)) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: box.path(name)))
        }
        for folder in ["out", "tv.sqlite.cache"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: box.path(folder))) ?? [] {
                files[folder + "/" + name] = try Data(contentsOf: URL(fileURLWithPath: box.path(folder + "/" + name)))
            }
        }
        return files
    }

    @Test func everyFailureLeavesDatabaseFeedsAndCacheAsTheyWere() throws {
        let box = try Sandbox()
        let (base, stop) = try startServer(box, guide: makeGuide(channels: ["alpha.test", "beta.test", "gamma.test"], programmes: 6))
        defer { stop() }
        try box.write("good.json", makeConfig(sources: [("web", base + "/good")]))
        let first = box.nightly(config: "good.json")
        try #require(first.status == 0, "stderr: \(first.stderr)")
        let before = try snapshot(box)
        #expect(before.keys.contains("out/index.html"))
        #expect(before.keys.contains { $0.hasPrefix("tv.sqlite.cache/") }, "the last good download is kept")
        let passwd = (try? Data(contentsOf: URL(fileURLWithPath: "/etc/passwd"))) ?? Data()

        // One retry and short timeouts keep the suite quick; the retry logic has its own tests.
        let quick = #", "fetch": {"retries": 1, "lowSpeedTime": 2, "totalBudget": 20}"#
        let cases: [(path: String, status: Int32, says: String, extra: String)] = [
            ("/missing", 69, "404", quick),
            ("/error", 69, "500", quick),
            ("/html", 69, "HTML", quick),
            ("/reset", 69, "transfer ended early", quick),
            ("/good", 69, "limit", #", "fetch": {"retries": 0, "maxBytes": 100}"#),
            ("/redirect-file", 69, "redirect", quick),
            ("/slow", 69, "web", #", "fetch": {"retries": 0, "lowSpeedTime": 2}"#),
            ("/empty", 65, "safety guard", quick),
            ("/malformed", 65, "/malformed", quick),
            ("/truncated.gz", 65, "/truncated.gz", quick),
        ]
        for c in cases {
            try box.write("bad.json", makeConfig(sources: [("web", base + c.path)], extra: c.extra))
            let r = box.nightly(config: "bad.json")
            #expect(r.status == c.status, "\(c.path): exit \(r.status), stderr: \(r.stderr)")
            // The report on stdout names the source and the cause (once: not on stderr too).
            #expect(r.stdout.contains(c.says), "\(c.path): the report does not name the cause: \(r.stdout)")
            #expect(r.stdout.contains("source web: failed"), "\(c.path): the report does not name the source: \(r.stdout)")
            let after = try snapshot(box)
            #expect(!after.values.contains { !passwd.isEmpty && $0.range(of: passwd.prefix(64)) != nil }, "\(c.path): a local file leaked in")
            #expect(after == before, "\(c.path): changed \(Set(after.keys).union(before.keys).filter { after[$0] != before[$0] }.sorted())")
        }
    }

    @Test func aDryRunOfAnHTTPSourceLeavesDatabaseFeedsAndCacheAsTheyWere() throws {
        let box = try Sandbox()
        let (base, stop) = try startServer(box, guide: makeGuide(channels: ["alpha.test", "beta.test"], programmes: 5))
        defer { stop() }
        try box.write("good.json", makeConfig(sources: [("web", base + "/good")]))
        try #require(box.nightly(config: "good.json").status == 0)
        let before = try snapshot(box)
        // --force: the validators are ignored, so the guide is downloaded, parsed and merged again.
        let r = box.nightly(config: "good.json") { $0.flags.dryRun = true; $0.flags.force = true; $0.flags.json = true }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("\"dryRun\" : true"))
        #expect(try snapshot(box) == before)
    }

    /// A guide not grouped by channel is staged in a temporary file; when that cannot be written
    /// (here: TMPDIR does not exist; in life: a full disk) the input is not to blame: exit 73,
    /// the message names the file, and the database is as it was.
    @Test func aStagingFileThatCannotBeWrittenIs73AndChangesNothing() throws {
        let box = try Sandbox()
        try box.write("g0.xml", makeGuide())
        #expect(box.importing(["g0.xml"], db: "tv.sqlite") { $0.source = "s" }.status == 0)
        // The same programmes, interleaved: alpha, beta, alpha, beta, ...
        let lines = makeGuide(titlePrefix: "Other").split(separator: "\n", omittingEmptySubsequences: false)
        let programmes = lines.filter { $0.contains("<programme") }
        let alpha = programmes.filter { $0.contains("alpha.test") }, beta = programmes.filter { $0.contains("beta.test") }
        let interleaved = zip(alpha, beta).flatMap { [$0, $1] }
        try #require(interleaved.count >= 4 && interleaved.allSatisfy { $0.contains("</programme>") })
        let head = lines.filter { !$0.contains("<programme") && !$0.contains("</tv>") }
        try box.write("g1.xml", (head + interleaved + ["</tv>", ""]).joined(separator: "\n"))
        let before = box.snapshot(["tv.sqlite", "tv.sqlite-wal"])
        let r = try box.run(["import", "--db", "tv.sqlite", "--source", "s", "g1.xml"], environment: ["TMPDIR": box.path("no-such-dir")])
        #expect(r.status == 73, "\(r.stdout) \(r.stderr)")
        #expect((r.stdout + r.stderr).contains("cannot create the staging file " + box.path("no-such-dir")))
        #expect(sameBytes(box.snapshot(["tv.sqlite", "tv.sqlite-wal"]), before))
        // With a temporary directory, the same guide imports.
        #expect(box.importing(["g1.xml"], db: "tv.sqlite") { $0.source = "s" }.status == 0)
    }
}
