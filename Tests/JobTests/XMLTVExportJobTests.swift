import Foundation
import Testing

/// `export --xmltv` and the config's `"xmltv"` for `run`, through the binary.
@Suite struct XMLTVExportJobTests {
    @Test func runWritesTheConfiguredXMLTVFileAndKeepsItWhenNothingChanged() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide())
        try box.write("c.json", makeConfig(sources: [("uk", box.path("guide.xml"))], extra: ", \"xmltv\": \"guide-out.xml.gz\""))
        let first = box.nightly(config: "c.json")
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout.contains("xmltv: \(box.path("guide-out.xml.gz")) written (2 channels, 8 programmes)"), "stdout: \(first.stdout)")
        let before = box.snapshot(["guide-out.xml.gz"])
        #expect(before.count == 1)
        Thread.sleep(forTimeInterval: 1.1)
        let second = box.nightly(config: "c.json")
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout.contains("xmltv: nothing changed"), "stdout: \(second.stdout)")
        #expect(sameBytesAndTimes(before, box.snapshot(["guide-out.xml.gz"])), "an unchanged run rewrote the XMLTV file")
    }

    @Test func exportWithXMLTVAloneWritesNoFeedsAndReportsUnwritableFiles() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide())
        #expect(box.importing(["guide.xml"], db: "tv.sqlite") { $0.source = "uk" }.status == 0)
        let written = box.exporting(db: "tv.sqlite", xmltv: "all.xml")
        #expect(written.status == 0, "stderr: \(written.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.path("feeds")), "--xmltv alone writes no feeds")
        let text = try String(contentsOfFile: box.path("all.xml"), encoding: .utf8)
        #expect(text.contains("<channel id=\"alpha.test\">") && text.contains("<title>Show 3</title>"))
        let unwritable = box.exporting(db: "tv.sqlite", xmltv: "no/such/dir/all.xml")
        #expect(unwritable.status == 73, "stderr: \(unwritable.stderr)")
        #expect(unwritable.stderr.contains("no/such/dir"), "stderr: \(unwritable.stderr)")
    }
}
