import Foundation
@testable import Publish
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34: publish sends only the regular files tvimport writes, and needs its credentials
/// even on a night with nothing to send.
struct HostileFilesTests {
    /// An export directory with one of everything that is not a feed.
    func hostileDirectory() throws -> (Sandbox, String) {
        let box = try Sandbox()
        let dir = box.path("out")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try box.write("out/alpha.test.ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
        try box.write("out/index.html", "<!DOCTYPE html>")
        try box.write("out/notes.txt", "not a feed")
        try box.write("out/.tvimport-export.json", "{}")
        #expect(symlink("/etc/passwd", dir + "/passwd.ics") == 0)
        #expect(symlink(dir + "/alpha.test.ics", dir + "/link.ics") == 0)
        #expect(mkfifo(dir + "/fifo.ics", 0o600) == 0)
        try FileManager.default.createDirectory(atPath: dir + "/dir.ics", withIntermediateDirectories: false)
        return (box, dir)
    }

    @Test func onlyRegularFilesWithTheExportersNamesAreCollected() throws {
        let (box, dir) = try hostileDirectory()
        _ = box
        #expect(try LocalObject.collect(feedDirectory: dir).map(\.name) == ["alpha.test.ics", "index.html"])
        let scan = try LocalObject.scan(feedDirectory: dir)
        #expect(scan.objects.map(\.name) == ["alpha.test.ics", "index.html"])
        #expect(scan.skipped.map(\.description) == ["dir.ics (a directory)", "fifo.ics (not a regular file)", "link.ics (a symbolic link)",
                                                      "notes.txt (not a file tvimport writes)", "passwd.ics (a symbolic link)"])
        // A link or a FIFO put in place after the scan is not opened either (O_NOFOLLOW, fstat).
        #expect(throws: PublishError.self) { try FileDigests(file: dir + "/passwd.ics") }
        #expect(throws: PublishError.self) { try FileDigests(file: dir + "/fifo.ics") }
        #expect(throws: PublishError.self) { try FileDigests(file: "/dev/zero") }   // a device (here /dev/null is a regular file)
        // The guide too: a link is skipped, named.
        #expect(symlink("/etc/passwd", box.path("guide.xml")) == 0)
        let withGuide = try LocalObject.scan(feedDirectory: dir, guide: box.path("guide.xml"))
        #expect(!withGuide.objects.contains { $0.kind == .guide })
        #expect(withGuide.skipped.contains { $0.name == box.path("guide.xml") && $0.reason == "a symbolic link" })
    }
}

@Suite(.enabled(if: motoIsInstalled, "needs moto[server] and boto3 in .venv (scripts/install-deps)"))
struct HostilePublishTests {
    func config(_ box: Sandbox, endpoint: String) -> String {
        """
        {"database": "tv.sqlite", "output": "feeds", "sources": [{"name": "main", "url": "\(box.path("guide.xml"))"}],
         "fetch": {"retries": 0},
         "publish": {"s3": {"endpoint": "\(endpoint)", "bucket": "feeds", "prefix": "tv/", "region": "us-east-1"}}}
        """
    }

    @Test("a symbolic link in the feed directory is never uploaded, and publish says what it skipped")
    func symbolicLinksAreSkipped() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("config.json", config(box, endpoint: store.endpoint))
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha"]))
        #expect(try box.tvimport(["run", "--config", "config.json"], environment: store.environment).status == 0)
        #expect(symlink("/etc/passwd", box.path("feeds/passwd.ics")) == 0)
        try box.write("feeds/notes.txt", "mine")
        let r = try box.tvimport(["publish", "--config", "config.json", "--verify"], environment: store.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.output.contains("skipped notes.txt (not a file tvimport writes), passwd.ics (a symbolic link)"), "\(r.output)")
        let stored = try store.objects(prefix: "tv/")
        #expect(stored["tv/passwd.ics"] == nil && stored["tv/notes.txt"] == nil, "\(stored.keys.sorted())")
        #expect(stored["tv/alpha.test.ics"] != nil)
    }

    @Test("without credentials publish is a configuration error (78) even with nothing to send")
    func missingCredentialsWithNothingToSend() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("config.json", config(box, endpoint: store.endpoint))
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha"]))
        #expect(try box.tvimport(["run", "--config", "config.json"], environment: store.environment).status == 0)
        let unchanged = try box.tvimport(["publish", "--config", "config.json"], environment: store.environment)
        #expect(unchanged.status == 0 && unchanged.output.contains("nothing changed"), "\(unchanged.output)")
        let r = try box.tvimport(["publish", "--config", "config.json"])
        #expect(r.status == 78, "\(r.output)\(r.stderr)")
        #expect(r.stderr.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(r.stderr)")
        // A dry run still needs none.
        #expect(try box.tvimport(["publish", "--config", "config.json", "--dry-run"]).status == 0)
    }
}
