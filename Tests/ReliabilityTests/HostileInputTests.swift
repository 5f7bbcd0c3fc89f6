import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One hostile input: its file name, bytes, and the exit codes that are acceptable.
struct HostileCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: @Sendable () throws -> Data
    var allowed: Set<Int32>
    /// For the iCalendar injection case: the programmes of the injected channel.
    var veventsPerInjectedFeed: Int? = nil
    var testDescription: String { name }
}

private let b = guideBase
private func d(_ s: String) -> Data { Data(s.utf8) }
private let nines = String(repeating: "9", count: 99)

/// gzip through /bin/gzip (Foundation on Linux has no zlib API).
private func gzipped(_ data: Data) throws -> Data {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gz-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try data.write(to: dir.appendingPathComponent("f"))
    let r = try runProcess("/bin/gzip", ["-9", "f"], in: dir)
    guard r.status == 0 else { throw CocoaError(.fileWriteUnknown) }
    return try Data(contentsOf: dir.appendingPathComponent("f.gz"))
}

let injected = "&#13;&#10;END:VEVENT&#13;&#10;BEGIN:VEVENT&#13;&#10;UID:injected@evil&#13;&#10;SUMMARY:Injected&#13;&#10;DTSTART:20260101T000000Z"
let evilToken = "tvimport-rel-\(getpid())"
let evilIDs = ["../../../escape-\(evilToken)", "/tmp/abs-\(evilToken)", "a/b/c", "..", ".", "index.html", "feeds/../../up",
               "x\\..\\..\\win", "~", ""]

let hostileCases: [HostileCase] = [
    HostileCase(name: "truncated.xml", bytes: {
        let g = d(makeGuide(channels: ["trunc.test"], programmes: 40)); return g.prefix(g.count * 2 / 3)
    }, allowed: [65]),
    HostileCase(name: "truncated.xml.gz", bytes: {
        let z = try gzipped(d(makeGuide(channels: ["trunc.test"], programmes: 40))); return z.prefix(z.count - 200)
    }, allowed: [65]),
    HostileCase(name: "error-page.xml", bytes: {
        d("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n")
    }, allowed: [65]),
    HostileCase(name: "empty-tv.xml", bytes: { d("<tv/>") }, allowed: [65]),
    HostileCase(name: "channels-only.xml", bytes: { d(makeGuide(channels: ["c1.test", "c2.test"], programmes: 0)) }, allowed: [65]),
    HostileCase(name: "past-only.xml", bytes: {
        d(makeGuide(channels: ["past.test"], programmes: 6, start: b - 10 * 86_400))
    }, allowed: [65]),
    HostileCase(name: "xxe-file.xml", bytes: {
        d("""
          <?xml version="1.0"?>
          <!DOCTYPE tv [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
          <tv><channel id="xxe.test"><display-name>&xxe;</display-name></channel>
          <programme start="\(xmltvTime(b))" stop="\(xmltvTime(b + 1800))" channel="xxe.test"><title>A &xxe; B</title><desc>&xxe;</desc></programme></tv>
          """)
    }, allowed: [0, 65]),
    HostileCase(name: "xxe-http.xml", bytes: {
        d("""
          <?xml version="1.0"?>
          <!DOCTYPE tv [ <!ENTITY a SYSTEM "http://127.0.0.1:9/x"> <!ENTITY % p SYSTEM "http://127.0.0.1:9/p"> %p; ]>
          <tv><programme start="\(xmltvTime(b))" stop="\(xmltvTime(b + 1800))" channel="http.test"><title>T &a;</title></programme></tv>
          """)
    }, allowed: [0, 65]),
    HostileCase(name: "billion-laughs.xml", bytes: {
        var x = "<?xml version=\"1.0\"?>\n<!DOCTYPE tv [\n <!ENTITY lol \"lol\">\n <!ENTITY lol1 \"" + String(repeating: "&lol;", count: 10) + "\">\n"
        for i in 2...9 { x += " <!ENTITY lol\(i) \"" + String(repeating: "&lol\(i - 1);", count: 10) + "\">\n" }
        x += "]>\n<tv><channel id=\"lol.test\"><display-name>&lol9;</display-name></channel>"
        x += "<programme start=\"\(xmltvTime(b))\" stop=\"\(xmltvTime(b + 1800))\" channel=\"lol.test\"><title>&lol9;</title><desc>&lol9;</desc></programme></tv>\n"
        return d(x)
    }, allowed: [0, 65]),
    HostileCase(name: "ids-traversal.xml", bytes: {
        var x = "<?xml version=\"1.0\"?>\n<tv>\n"
        for (i, c) in evilIDs.enumerated() { x += "<channel id=\"\(c)\"><display-name>Evil \(i)</display-name></channel>\n" }
        for (i, c) in evilIDs.enumerated() {
            x += "<programme start=\"\(xmltvTime(b))\" stop=\"\(xmltvTime(b + 1800))\" channel=\"\(c)\"><title>Evil \(i)</title></programme>\n"
        }
        return d(x + "</tv>\n")
    }, allowed: [0]),
    HostileCase(name: "ids-control.xml", bytes: {
        d("<?xml version=\"1.0\"?><tv><channel id=\"ctl&#1;x\"><display-name>x</display-name></channel><programme start=\"\(xmltvTime(b))\" channel=\"ctl&#1;x\"><title>T</title></programme></tv>")
    }, allowed: [65]),
    HostileCase(name: "bad-numbers.xml", bytes: {
        let rows: [(String, String?, String?, String?)] = [
            ("20261332000000 +0000", nil, nil, nil), ("20261122250000 +0000", nil, nil, nil), (nines, nil, nil, nil),
            (nines + " +0000", nil, nil, nil), ("20261122030000 +" + nines, nil, nil, nil),
            (xmltvTime(b), nines, nil, nil),
            (xmltvTime(b + 1800), xmltvTime(b + 3600), nines + "/" + nines, nil),
            (xmltvTime(b + 3600), xmltvTime(b + 5400), "0/" + nines, nines),
            (xmltvTime(b + 5400), xmltvTime(b + 7200), "-1/2", "-" + nines),
            (xmltvTime(b + 7200), xmltvTime(b + 9000), nil, "9223372036854775807"),
        ]
        var x = "<?xml version=\"1.0\"?>\n<tv><channel id=\"num.test\"><display-name>N</display-name></channel>\n"
        for (start, stop, clump, length) in rows {
            x += "<programme start=\"\(start)\"" + (stop.map { " stop=\"\($0)\"" } ?? "") + " channel=\"num.test\""
                + (clump.map { " clumpidx=\"\($0)\"" } ?? "") + "><title>N</title>"
                + (length.map { "<length units=\"hours\">\($0)</length>" } ?? "")
                + "<episode-num system=\"xmltv_ns\">\(nines).\(nines).\(nines)</episode-num></programme>\n"
        }
        return d(x + "</tv>\n")
    }, allowed: [0]),
    HostileCase(name: "invalid-utf8.xml", bytes: {
        var x = d("<?xml version=\"1.0\" encoding=\"UTF-8\"?><tv><programme start=\"\(xmltvTime(b))\" channel=\"u.test\"><title>bad ")
        x.append(contentsOf: [0xff, 0xfe, 0xc3, 0x28, 0xc0, 0xaf])
        x.append(d(" bytes</title></programme></tv>"))
        return x
    }, allowed: [65]),
    HostileCase(name: "huge-title.xml", bytes: {
        var x = d("<?xml version=\"1.0\"?><tv><programme start=\"\(xmltvTime(b))\" stop=\"\(xmltvTime(b + 1800))\" channel=\"huge.test\"><title>")
        x.append(Data(repeating: UInt8(ascii: "A"), count: 10 * 1024 * 1024))
        x.append(d("</title></programme></tv>"))
        return x
    }, allowed: [0, 65]),
    HostileCase(name: "ical-injection.xml", bytes: {
        var x = "<?xml version=\"1.0\"?>\n<tv><channel id=\"inject.test\"><display-name>Inj\(injected.replacingOccurrences(of: "VEVENT", with: "VCALENDAR"))</display-name></channel>\n"
        x += "<programme start=\"\(xmltvTime(b))\" stop=\"\(xmltvTime(b + 1800))\" channel=\"inject.test\"><title>Evil\(injected)</title>"
        x += "<sub-title>S\(injected)</sub-title><desc>line\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:Injected\n</desc><category>c\(injected)</category></programme>\n"
        x += "<programme start=\"\(xmltvTime(b + 1800))\" stop=\"\(xmltvTime(b + 3600))\" channel=\"inject.test\"><title>Second;,\\ title</title></programme>\n"
        return d(x + "</tv>\n")
    }, allowed: [0], veventsPerInjectedFeed: 2),
]

/// Each hostile input is imported as its own source into a database that holds a good guide.
@Suite struct HostileInputTests {
    static let passwdMarkers = ["root:x:0:0", "/usr/sbin/nologin"]

    @Test(arguments: hostileCases)
    func hostileInput(_ c: HostileCase) throws {
        let box = try GuardedSandbox()
        try box.write("base.xml", d(makeGuide(channels: ["alpha.test", "beta.test"], programmes: 6)))
        let base = try box.tvimport(["import", "--db", "tv.sqlite", "base.xml"])
        try #require(base.status == 0, "base import: \(base.stderr)")
        try box.write(c.name, try c.bytes())
        let before = checksum(box.path("tv.sqlite"))
        let treeBefore = box.tree()

        let r = try box.tvimport(["import", "--db", "tv.sqlite", "--source", "hostile", c.name], timeout: 20)
        let status = try #require(r.status, "\(c.name): still running after 20 s")
        #expect(status < 128, "\(c.name): died of signal \(status - 128): \(r.stderr)")
        #expect(c.allowed.contains(status), "\(c.name): exit \(status), expected one of \(c.allowed.sorted()); stderr: \(r.stderr)")
        #expect(r.seconds < 20)
        #expect(!r.stderr.contains("Fatal error"), "\(c.name): \(r.stderr)")
        if status != 0 {
            #expect(checksum(box.path("tv.sqlite")) == before, "\(c.name): rejected but the database file changed")
        }

        let export = try box.tvimport(["export", "--db", "tv.sqlite", "--out", "feeds"], timeout: 60)
        #expect(export.status == 0, "\(c.name): export: \(export.stderr)")

        // Nothing outside work/, nothing at the absolute paths the ids name.
        let allowedPrefixes = ["work/tv.sqlite", "work/changes", "work/feeds", "work/base.xml", "work/\(c.name)"]
        let unexpected = box.tree().subtracting(treeBefore).filter { p in !allowedPrefixes.contains { p.hasPrefix($0) } }
        #expect(unexpected.isEmpty, "\(c.name): files written outside the expected places: \(unexpected.sorted())")
        for p in ["/tmp/abs-\(evilToken)", box.guardDir.deletingLastPathComponent().appendingPathComponent("escape-\(evilToken)").path,
                  "/escape-\(evilToken)"] {
            #expect(!FileManager.default.fileExists(atPath: p), "\(c.name): a hostile id wrote \(p)")
        }

        // Nothing of /etc/passwd in the database or the feeds.
        let stored = box.files(under: ".").filter { !$0.hasSuffix(".xml") && !$0.hasSuffix(".gz") }
        for file in stored {
            let data = FileManager.default.contents(atPath: file) ?? Data()
            for marker in Self.passwdMarkers {
                #expect(data.range(of: d(marker)) == nil, "\(c.name): \(file) holds '\(marker)' from /etc/passwd")
            }
        }

        // Every feed is one calendar with one VEVENT per programme, whatever the text tried to inject.
        for file in box.files(under: "feeds") where file.hasSuffix(".ics") {
            let data = try #require(FileManager.default.contents(atPath: file))
            let text = String(decoding: data, as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            #expect(text.hasPrefix("BEGIN:VCALENDAR\r\n") && text.hasSuffix("END:VCALENDAR\r\n"), "\(file)")
            #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "\(file): a bare LF")
            #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\r"), "\(file): a bare CR")
            let begins = lines.filter { $0 == "BEGIN:VEVENT" }.count
            #expect(begins == lines.filter { $0 == "END:VEVENT" }.count, "\(file)")
            #expect(begins == lines.filter { $0.hasPrefix("UID:") }.count, "\(file)")
            #expect(lines.filter { $0 == "BEGIN:VCALENDAR" }.count == 1, "\(file)")
            #expect(!lines.contains { $0.hasPrefix("SUMMARY:Injected") || $0.hasPrefix("UID:injected") }, "\(file): injected a line")
            if let expected = c.veventsPerInjectedFeed, file.contains("inject") {
                #expect(begins == expected, "\(file): \(begins) VEVENTs for \(expected) programmes")
            }
        }
        if c.veventsPerInjectedFeed != nil {
            #expect(box.files(under: "feeds").contains { $0.contains("inject") && $0.hasSuffix(".ics") }, "no feed for inject.test")
        }
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
