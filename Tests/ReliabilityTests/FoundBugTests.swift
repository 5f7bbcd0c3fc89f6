import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Inputs that exposed bugs found by the reliability suite (each test was disabled until its bug
/// was fixed), and the checks that came with the fixes.
@Suite struct FoundBugTests {
    /// A channel id can collide with a filtered feed's file name: channel `filter-news` and the
    /// filtered feed `news` both become `filter-news.ics`. One overwrites the other (the channel's
    /// programmes vanish from the feeds), the report counts 4 feeds written for 3 files, and
    /// index.html links `filter-news.ics` twice.
    @Test
    func channelFeedsAndFilteredFeedsNeverShareAFile() throws {
        let box = try GuardedSandbox()
        try box.write("g.xml", Data(makeGuide(channels: ["filter-news", "real.test"], programmes: 3, titlePrefix: "News").utf8))
        try box.write("cfg.json", Data(#"{"sources": [{"name": "g", "url": "g.xml"}], "feeds": {"filtered": [{"name": "news", "title": "All news", "titlePattern": "^News"}]}}"#.utf8))
        let r = try box.tvimport(["import", "--db", "tv.sqlite", "g.xml"])
        try #require(r.status == 0, "\(r.stdout)\(r.stderr)")
        let e = try box.tvimport(["export", "--db", "tv.sqlite", "--out", "feeds", "--config", "cfg.json"])
        try #require(e.status == 0, "\(e.stdout)\(e.stderr)")
        let ics = box.files(under: "feeds").filter { $0.hasSuffix(".ics") }
        // Two channel feeds and one filtered feed.
        #expect(ics.count == 3, "feeds: \(ics.map { ($0 as NSString).lastPathComponent }.sorted())")
        let index = String(decoding: FileManager.default.contents(atPath: box.path("feeds/index.html")) ?? Data(), as: UTF8.self)
        #expect(index.components(separatedBy: "href=\"filter-news.ics\"").count - 1 <= 1, "index.html links filter-news.ics twice")
    }

    /// A named pipe (or a shell's process substitution, `tvimport import --db tv.sqlite <(zcat guide.xml.gz)`)
    /// cannot be imported: XMLTVReader opens the path twice (fopen to sniff the gzip magic, then
    /// xmlReaderForFile), and an import whose programmes are not grouped by channel reads every
    /// file a second time. The first open consumes bytes of the stream: the import either hangs
    /// for ever (the writer has finished: the second open waits for a writer that never comes) or
    /// fails with a misleading parse error ("Extra content at the end of the document").
    @Test
    func aNamedPipeImportsLikeAFile() throws {
        let box = try GuardedSandbox()
        let guide = makeGuide(channels: ["pipe.test"], programmes: 4)
        try #require(mkfifo(box.path("fifo.xml"), 0o600) == 0)
        try box.write("guide.xml", Data(guide.utf8))
        // The writer is a child process: whatever blocks or gets SIGPIPE is not the test runner.
        let writer = try RunningProcess("/bin/sh", ["-c", "cat guide.xml > fifo.xml"], in: box.work)
        let r = try box.tvimport(["import", "--db", "tv.sqlite", "fifo.xml"], timeout: 20)
        writer.stop(SIGKILL)
        #expect(r.status == 0, "exit \(r.status.map(String.init) ?? "timeout"): \(r.stdout)\(r.stderr)")
    }

    /// A pipe whose guide is not grouped by channel is read twice (the first pass finds out, the
    /// second stages it): it is copied once to a temporary file, which is removed afterwards, and
    /// messages name the pipe, not the copy. The copy keeps the bytes as they come (gzip here).
    @Test
    func aNamedPipeNotGroupedByChannelIsStagedFromOneCopy() throws {
        let box = try GuardedSandbox()
        let tmp = box.work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        func interleaved(_ tail: String) -> String {
            var xml = "<?xml version=\"1.0\"?>\n<tv><channel id=\"p1.test\"><display-name>1</display-name></channel>"
                + "<channel id=\"p2.test\"><display-name>2</display-name></channel>\n"
            for i in 0..<20 {
                for c in ["p1.test", "p2.test"] {
                    xml += "<programme start=\"\(GuideText.time(guideBase + i * 1800))\" stop=\"\(GuideText.time(guideBase + i * 1800 + 1800))\" channel=\"\(c)\"><title>T \(i)</title></programme>\n"
                }
            }
            return xml + tail
        }
        try box.write("good.xml", Data(interleaved("</tv>\n").utf8))
        try box.write("bad.xml", Data(interleaved("<programme start=\"x\" channel=\"p1.test\"><title>cut</programme></tv>\n").utf8))
        for (name, source) in [("good.fifo", "good.xml"), ("bad.fifo", "bad.xml")] {
            try #require(mkfifo(box.path(name), 0o600) == 0)
            let writer = try RunningProcess("/bin/sh", ["-c", "gzip -c \(source) > \(name)"], in: box.work)
            let r = try runProcess(Repository.tvimport, ["import", "--db", "tv.sqlite", name], in: box.work, timeout: 20,
                                   environment: ["TMPDIR": tmp.path])
            writer.stop(SIGKILL)
            let output = r.stdout + r.stderr
            if name == "good.fifo" {
                #expect(r.status == 0, "exit \(r.status.map(String.init) ?? "timeout"): \(output)")
                #expect(output.contains("40 programmes read"), "\(output)")
            } else {
                #expect(r.status == 65, "exit \(r.status.map(String.init) ?? "timeout"): \(output)")
                #expect(output.contains("bad.fifo:"), "the error does not name the pipe: \(output)")
            }
            #expect(!output.contains("tvimport-stage-"), "a message names the copy: \(output)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
            #expect(left.isEmpty, "left behind: \(left)")
        }
    }

    /// A gzip file of several members (RFC 1952 allows it; `pigz`, `bgzip` and `cat a.gz b.gz`
    /// make them, `zcat` reads them whole) is rejected as malformed XML: libxml2 2.9.14's gzip
    /// input stops after the first member, so the document looks cut in the middle
    /// ("Specification mandates value for attribute channel", exit 65). Fail-closed, but a valid
    /// guide is refused.
    @Test
    func aMultiMemberGzipImportsLikeASingleOne() throws {
        let box = try GuardedSandbox()
        let guide = Data(makeGuide(channels: ["gz.test"], programmes: 6).utf8)
        try box.write("a.xml", guide.prefix(guide.count / 2))
        try box.write("b.xml", guide.suffix(from: guide.count / 2))
        let gz = try runProcess("/bin/sh", ["-c", "gzip -c a.xml > multi.xml.gz && gzip -c b.xml >> multi.xml.gz"], in: box.work)
        try #require(gz.status == 0)
        let r = try box.tvimport(["import", "--db", "tv.sqlite", "multi.xml.gz"], timeout: 20)
        #expect(r.status == 0, "exit \(r.status.map(String.init) ?? "timeout"): \(r.stdout)\(r.stderr)")
    }

    /// Memory grows with the whitespace between the elements of <tv>: 256 MB of whitespace (a
    /// comment after every MB, so that no text node reaches libxml2's 10 MB limit) takes ~560 MB
    /// of RSS, 2 GB take 4.2 GB, and so does its 4.3 MB gzip: a small download can exhaust the
    /// machine's memory. `xmllint --stream` shows the same growth (libxml2 2.9.14's reader keeps
    /// what it read at depth 1), while a guide of programmes of the same size runs in ~5 MB.
    @Test
    func whitespaceBetweenProgrammesTakesConstantMemory() throws {
        let box = try GuardedSandbox()
        let path = box.path("padded.xml")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.write(Data("<?xml version=\"1.0\"?>\n<tv>".utf8))
        let block = Data(repeating: UInt8(ascii: " "), count: 1 << 20)
        for _ in 0..<256 {
            handle.write(block)
            handle.write(Data("<!---->".utf8))
        }
        handle.write(Data("<programme start=\"\(GuideText.time(guideBase))\" stop=\"\(GuideText.time(guideBase + 1800))\" channel=\"pad.test\"><title>T</title></programme></tv>\n".utf8))
        try handle.close()
        let r = try runProcess("/usr/bin/time", ["-f", "%M", "-o", box.path("rss"), Repository.tvimport, "import", "--db", "tv.sqlite", "padded.xml"],
                               in: box.work, timeout: 120)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let rss = Int(String(decoding: FileManager.default.contents(atPath: box.path("rss")) ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "") ?? 0
        #expect(rss > 0 && rss < 200_000, "peak RSS \(rss) kB for 256 MB of whitespace")
    }

    /// Comments and processing instructions between programmes are no different: libxml2 2.9.14's
    /// reader kept every node until it met an element (256 MB of short comments took 4.2 GB).
    @Test
    func commentsAndInstructionsBetweenProgrammesTakeConstantMemory() throws {
        let box = try GuardedSandbox()
        let path = box.path("commented.xml")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.write(Data("<?xml version=\"1.0\"?>\n<tv>".utf8))
        var block = ""
        while block.utf8.count < 1 << 20 { block += "<!-- \(String(repeating: "c", count: 500)) -->\n<?pi \(String(repeating: "p", count: 500))?>\n" }
        let data = Data(block.utf8)
        for _ in 0..<256 { handle.write(data) }
        handle.write(Data("<programme start=\"\(GuideText.time(guideBase))\" stop=\"\(GuideText.time(guideBase + 1800))\" channel=\"pad.test\"><title>T</title></programme></tv>\n".utf8))
        try handle.close()
        let r = try runProcess("/usr/bin/time", ["-f", "%M", "-o", box.path("rss"), Repository.tvimport, "import", "--db", "tv.sqlite", "commented.xml"],
                               in: box.work, timeout: 120)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let rss = Int(String(decoding: FileManager.default.contents(atPath: box.path("rss")) ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "") ?? 0
        #expect(rss > 0 && rss < 200_000, "peak RSS \(rss) kB for 256 MB of comments and instructions")
    }

    /// A warning quotes the offending attribute whole: `bad start time '<value>'`. libxml2 allows
    /// 10 MB per attribute and the reader keeps 1000 warnings, so a guide can make tvimport hold
    /// and print up to 10 GB of warnings: 60 programmes with a 5 MB start (a 302 KB gzip) take
    /// 984 MB of RSS and print a 300 MB JSON report.
    @Test
    func warningsStaySmallWhateverTheInput() throws {
        let box = try GuardedSandbox()
        var xml = "<?xml version=\"1.0\"?><tv><channel id=\"w.test\"><display-name>W</display-name></channel>\n"
        let bad = String(repeating: "x", count: 1 << 20)
        for _ in 0..<20 { xml += "<programme start=\"\(bad)\" channel=\"w.test\"><title>B</title></programme>\n" }
        xml += "<programme start=\"\(GuideText.time(guideBase))\" stop=\"\(GuideText.time(guideBase + 1800))\" channel=\"w.test\"><title>Good</title></programme></tv>\n"
        try box.write("w.xml", Data(xml.utf8))
        let r = try box.tvimport(["import", "--db", "tv.sqlite", "--format", "json", "w.xml"], timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        // 20 warnings: a few kB of report, not 20 MB.
        #expect(r.stdout.utf8.count < 100_000, "the JSON report is \(r.stdout.utf8.count) bytes for 20 warnings")
    }

    /// An import whose programmes are not grouped by channel stages them in
    /// `$TMPDIR/tvimport-stage-<pid>-<n>.jsonl` (the whole guide as JSON) and removes the file in a
    /// deinit: a killed import leaves it behind for ever (32 MB after 1.5 s of a 24 MB guide), and
    /// no later run cleans up (the exporter does, for its own temporary files).
    @Test
    func aKilledImportLeavesNoStagingFile() throws {
        let box = try GuardedSandbox()
        let tmp = box.work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        var xml = "<?xml version=\"1.0\"?><tv>"
        for c in 0..<50 { xml += "<channel id=\"c\(c)\"><display-name>C</display-name></channel>" }
        for i in 0..<1000 {
            for c in 0..<50 {   // interleaved: not grouped by channel
                xml += "<programme start=\"\(GuideText.time(guideBase + i * 600))\" stop=\"\(GuideText.time(guideBase + i * 600 + 600))\" channel=\"c\(c)\"><title>T \(i)</title><desc>\(String(repeating: "d", count: 200))</desc></programme>\n"
            }
        }
        try box.write("g.xml", Data((xml + "</tv>\n").utf8))
        let p = try RunningProcess(Repository.tvimport, ["import", "--db", "tv.sqlite", "g.xml"], in: box.work,
                                   environment: ["TMPDIR": tmp.path])
        func staged() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).filter { $0.hasPrefix("tvimport-stage-") } }
        p.wait(timeout: 20) { _ in !staged().isEmpty }
        // Below 128: the import ended by itself before it was killed.
        let status = p.stop(SIGKILL)
        try #require(!staged().isEmpty || status < 128, "the import never staged")
        // The next import runs to completion; nothing of the killed one may remain.
        let r = try runProcess(Repository.tvimport, ["import", "--db", "tv.sqlite", "g.xml"], in: box.work, timeout: 120, environment: ["TMPDIR": tmp.path])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(staged().isEmpty, "left behind: \(staged())")
    }
}
