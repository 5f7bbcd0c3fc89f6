import Foundation
import Listings
import Merge
import ObjectGraph
import TestSupport
import Testing
import XMLTV
import XMLTVExport
import XMLTVImport

let sharedFixtures = Shared.fixtures
let dtd = "/usr/share/xmltv/xmltv.dtd"
let validatorsPresent = Tool.isInstalled("xmllint") && Tool.isInstalled("tv_validate_file") && FileManager.default.fileExists(atPath: dtd)

func temporaryDirectory() throws -> String { try Scratch.directory("XMLTVExportTests").path }

func importInto(_ store: Store, _ files: [String], source: String = "t") throws {
    _ = try importGuide(into: store, files: files, options: ImportOptions(source: source, force: true, now: 0), dryRun: false)
}

/// Runs a program (TestSupport's runner); its exit status and both outputs.
func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let r = try Subprocess.run(arguments[0], Array(arguments.dropFirst()), environment: environment)
    return (r.status, r.output + r.stderr)
}

/// Both validators the contract names: the DTD (xmllint) and XMLTV's own tv_validate_file, kept
/// off the network by XMLTV_SUPPLEMENT.
/// tv_validate_file also wants channel ids shaped like domain names ("bbc1.uk"); ids are the
/// sources' (aliases can map them), so with `sourceIDs` its "Invalid channel-id" lines, and only
/// those, are accepted.
func expectValid(_ path: String, sourceIDs: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let dtdCheck = try run(["/usr/bin/xmllint", "--noout", "--nonet", "--dtdvalid", dtd, path])
    #expect(dtdCheck.status == 0, "xmllint: \(dtdCheck.output)", sourceLocation: sourceLocation)
    let xmltvCheck = try run(["/usr/bin/tv_validate_file", path], environment: ["XMLTV_SUPPLEMENT": "/usr/share/xmltv"])
    let problems = xmltvCheck.output.split(separator: "\n").filter { $0.hasPrefix("Line ") || $0.contains("No programme") }
    if sourceIDs {
        let others = problems.filter { !$0.contains("Invalid channel-id") }
        #expect(others.isEmpty, "tv_validate_file: \(xmltvCheck.output)", sourceLocation: sourceLocation)
    } else {
        #expect(xmltvCheck.status == 0, "tv_validate_file: \(xmltvCheck.output)", sourceLocation: sourceLocation)
    }
}

/// A guide using every field the model stores, with text that needs escaping.
let richGuide = """
    <?xml version="1.0" encoding="UTF-8"?>
    <tv>
      <channel id="b-b.uk"><display-name lang="en">B &amp; B</display-name><display-name>BB</display-name>
        <icon src="http://x/b.png" width="10" height="20"/><url>http://b.example/?a=1&amp;b=2</url></channel>
      <channel id="a.uk"><display-name>A "One"</display-name></channel>
      <channel id="empty.uk"><display-name>Nothing on</display-name></channel>
      <programme start="20300101060000 +0100" stop="20300101070000 +0100" channel="b-b.uk">
        <title lang="en">Tom &lt;&amp;&gt; Jerry</title><title lang="de">Tom und Jerry</title>
        <sub-title>Part "one"</sub-title><desc lang="en">Line one
    line two</desc><desc lang="fr">Une
    deux</desc>
        <credits><actor role="Tom" guest="yes">Ann</actor><director>Dee</director><actor>Bob</actor><guest>Gil</guest></credits>
        <date>1999</date><category lang="en">Comedy</category><category>Kids</category><keyword>cat</keyword><keyword>mouse</keyword>
        <language>en</language><orig-language>de</orig-language><length units="minutes">55</length>
        <icon src="http://x/p.png"/><url>http://p.example/</url><country>UK</country><country>US</country>
        <episode-num system="xmltv_ns">1.4.0/2</episode-num><episode-num system="xmltv_ns">00.05</episode-num><episode-num system="onscreen">S02E05</episode-num>
        <video><quality>HDTV</quality><aspect>16:9</aspect><colour>yes</colour></video><audio><stereo>dolby</stereo></audio>
        <previously-shown start="20291201"/><premiere>First</premiere><last-chance/><new/>
        <subtitles type="teletext"/><subtitles/><rating system="BBFC"><value>PG</value></rating><star-rating><value>3/5</value></star-rating>
      </programme>
      <programme start="20300101070000 +0000" stop="20300101073000 +0000" channel="b-b.uk" clumpidx="0/2"><title>C1</title></programme>
      <programme start="20300101070000 +0000" stop="20300101073000 +0000" channel="b-b.uk" clumpidx="1/2"><title>C2</title></programme>
      <programme start="20300101050000 +0000" stop="20300101060000 +0000" channel="a.uk"><title>Early</title></programme>
    </tv>
    """

@Suite struct XMLTVExportTests {
    @Test(.enabled(if: validatorsPresent, "needs xmllint, tv_validate_file and the XMLTV DTD (scripts/install-deps: xmltv-util)"))
    func exportIsValidOrderedAndRoundTripsByteForByte() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try richGuide.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let first = try Store(path: dir + "/first.sqlite", model: TVModel.model())
        try importInto(first, [dir + "/in.xml"])
        let report = try XMLTVExporter(store: first).export(to: dir + "/out.xml")
        #expect(report.written && report.channels == 2 && report.programmes == 4)
        let text = try String(contentsOfFile: dir + "/out.xml", encoding: .utf8)
        // Channels by id, the channel without programmes left out (tv_validate_file counts it as an error).
        #expect(text.range(of: "<channel id=\"a.uk\">")!.lowerBound < text.range(of: "<channel id=\"b-b.uk\">")!.lowerBound)
        #expect(!text.contains("empty.uk"))
        #expect(text.contains("<programme start=\"20300101050000 +0000\" stop=\"20300101060000 +0000\" channel=\"b-b.uk\">"))
        #expect(text.contains("clumpidx=\"1/2\""))
        #expect(text.contains("<credits>\n      <director>Dee</director>\n      <actor role=\"Tom\" guest=\"yes\">Ann</actor>\n      <actor>Bob</actor>\n      <guest>Gil</guest>\n    </credits>"))
        #expect(text.contains("<video><colour>yes</colour><aspect>16:9</aspect><quality>HDTV</quality></video>"))
        #expect(text.contains("<title>Tom &lt;&amp;&gt; Jerry</title>\n    <title lang=\"de\">Tom und Jerry</title>"))
        #expect(text.contains("<length units=\"seconds\">3300</length>"))
        #expect(text.contains("1.4.0/2") && !text.contains("00.05"))
        try expectValid(dir + "/out.xml")

        // Round trip: the export imported into an empty database exports the same bytes.
        let second = try Store(path: dir + "/second.sqlite", model: TVModel.model())
        try importInto(second, [dir + "/out.xml"])
        _ = try XMLTVExporter(store: second).export(to: dir + "/again.xml")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/again.xml")) == Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml")))
    }

    @Test func unchangedExportKeepsBytesAndMtimeAndGzipIsDeterministic() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try richGuide.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        for name in ["out.xml", "out.xml.gz"] {
            let path = dir + "/" + name
            #expect(try XMLTVExporter(store: store).export(to: path).written)
            let old = Date(timeIntervalSince1970: 1_000_000_000)
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(try XMLTVExporter(store: store).export(to: path).written == false)
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == old)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty)
        }
        // The gzip file holds the plain file's text (read back by the importer's own gzip input).
        let plain = try Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml"))
        let unzipped = try run(["/bin/sh", "-c", "gzip -dc '\(dir)/out.xml.gz' | cmp - '\(dir)/out.xml'"])
        #expect(unzipped.status == 0, "\(unzipped.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml.gz")).prefix(2) == Data([0x1F, 0x8B]))
        #expect(!plain.isEmpty)

        // A change is written atomically: the new file replaces the old one.
        try store.write { context in
            let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string("a.uk")))!
            _ = try context.update(c.id, ["displayName": .string("A Two")])
        }
        #expect(try XMLTVExporter(store: store).export(to: dir + "/out.xml").written)
        #expect(try String(contentsOfFile: dir + "/out.xml", encoding: .utf8).contains("<display-name>A Two</display-name>"))
    }

    /// Stored lines are cut where the export always cut them, as Swift strings cut them: a CR LF
    /// pair is one Character (no line break inside), and an `=` joined to a combining mark (or
    /// after a prepended mark) is not the key's end. The expected bytes are what the export
    /// wrote before it read rows as bytes.
    @Test func storedFormsAreCutByCharactersByteForByte() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv><channel id="a.uk"><display-name>A</display-name></channel>
            <programme start="20300101000000 +0000" stop="20300101010000 +0000" channel="a.uk"><title>x</title></programme></tv>
            """.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        try store.write { context in
            let p = try context.first("Programme")!
            _ = try context.update(p.id, [
                "title": .string("T\u{01}i\"t<l>e&\r\n\tx"),
                "otherLanguages": .string("junk first\ntitle\tde\tTitel\nweiter\ndesc\t\tBeschreibung\t mit Tab\nsub-title\tfr\tSous\r\ntitre\ntitle\ten"),
                "keywords": .string("a\r\nb\n\nc"),
                "episodeNum": .string("xmltv_ns=1.2.3\nxmltv_ns= 1 . 2/3 . \r\nxmltv_ns=1.\u{301}.3\nonscreen=\u{301}x=y\nsys\u{600}=v\nonscreen\u{301}=a=b\nxmltv_ns=0.1/.2\nxmltv_ns=..\nxmltv_ns=1/2/3..\nnone"),
                "video": .string("quality=HD\naspect=4:3\nquality=SD\ncolour=no=yes\nbogus=1\npresent"),
                "audio": .string("stereo=dolby\u{301}\nstereo\u{301}=x"),
                "rating": .string("=G\nMPAA=PG-13\nBBFC\n\u{301}=x"),
                "subtitles": .string("teletext\nuntyped\nonscreen\nfoo\n"),
            ])
        }
        _ = try XMLTVExporter(store: store).export(to: dir + "/out.xml")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml")))
        let expected = Array("""
              <programme start="20300101000000 +0000" stop="20300101010000 +0000" channel="a.uk">
                <title>Ti"t&lt;l&gt;e&amp;&#13;\n\tx</title>
                <title lang="de">Titel
            weiter</title>
                <sub-title lang="fr">Sous&#13;\ntitre\ntitle\ten</sub-title>
                <desc>Beschreibung\t mit Tab</desc>
                <keyword>a&#13;\nb</keyword>
                <keyword></keyword>
                <keyword>c</keyword>
                <episode-num system="xmltv_ns">1.2.3</episode-num>
                <episode-num system="onscreen=\u{301}x">y</episode-num>
                <episode-num system="sys\u{600}=v"></episode-num>
                <episode-num system="onscreen\u{301}">a=b</episode-num>
                <episode-num system="xmltv_ns">..</episode-num>
                <episode-num system="none"></episode-num>
                <video><present></present><colour>no=yes</colour><aspect>4:3</aspect><quality>SD</quality></video>
                <audio><stereo>dolby\u{301}</stereo></audio>
                <subtitles type="teletext"/>
                <subtitles/>
                <subtitles type="onscreen"/>
                <subtitles/>
                <subtitles/>
                <rating><value>G</value></rating>
                <rating system="MPAA"><value>PG-13</value></rating>
                <rating system="BBFC"><value></value></rating>
                <rating system="\u{301}"><value>x</value></rating>
              </programme>

            """.utf8)
        let start = try #require(bytes.firstRange(of: Array("  <programme".utf8)))
        #expect(Array(bytes[start.lowerBound...].prefix(expected.count)) == expected, "\(String(decoding: bytes[start.lowerBound...], as: UTF8.self))")
    }

    @Test func hiddenChannelsAreLeftOut() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try richGuide.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        try store.write { context in
            let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string("a.uk")))!
            _ = try context.update(c.id, ["hidden": .bool(true)])
        }
        let report = try XMLTVExporter(store: store).export(to: dir + "/out.xml")
        #expect(report.channels == 1 && report.programmes == 3)
        #expect(try !String(contentsOfFile: dir + "/out.xml", encoding: .utf8).contains("a.uk"))
    }

    @Test func anUnwritableDestinationFailsAndLeavesNothing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(path: dir + "/db.sqlite", model: TVModel.model())
        #expect(throws: XMLTVExportError.self) { try XMLTVExporter(store: store).export(to: dir + "/missing/dir/out.xml") }
    }

    @Test(.enabled(if: validatorsPresent && FileManager.default.fileExists(atPath: sharedFixtures + "/MANIFEST.tsv"),
                   "needs ../shared/fixtures/xmltv and the XMLTV validators (scripts/install-deps: xmltv-util)"),
          arguments: ["xmltv_t_test.xml", "jellyfin_xmltv_custom.xml", "jellyfin_xmltv_schedulesdirect.xml", "freeview_ie_2025-10-25T1606.xml",
                      "xmltv_t_clump.xml", "jellyfin_xmltv_MultilanguageData.xml", "iptvorg_epgshare01.online.xml", "jellyfin_livetv_notitle.xml"])
    func sharedFixturesExportValidAndRoundTrip(fixture: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try Store(path: dir + "/first.sqlite", model: TVModel.model())
        try importInto(first, [sharedFixtures + "/" + fixture])
        _ = try XMLTVExporter(store: first).export(to: dir + "/out.xml")
        try expectValid(dir + "/out.xml", sourceIDs: true)
        let second = try Store(path: dir + "/second.sqlite", model: TVModel.model())
        try importInto(second, [dir + "/out.xml"])
        _ = try XMLTVExporter(store: second).export(to: dir + "/again.xml")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/again.xml")) == Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml")))
    }
}
