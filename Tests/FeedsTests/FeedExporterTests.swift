import Feeds
import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import Testing
import XMLTVImport

/// The exporter against a real store: feeds are written once, kept byte-for-byte and mtime when
/// nothing changed, and file names from hostile ids stay inside the output directory.
@Suite final class FeedExporterTests {
    let directory = NSTemporaryDirectory() + "tvimport-feeds-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func guide(titleOfSecond: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <tv>
          <channel id="one.tv"><display-name>One</display-name></channel>
          <channel id="../evil/x"><display-name>Evil</display-name></channel>
          <programme start="20301001100000 +0000" stop="20301001110000 +0000" channel="one.tv"><title>News, weather; more</title><category>News</category></programme>
          <programme start="20301001110000 +0000" stop="20301001120000 +0000" channel="one.tv"><title>\(titleOfSecond)</title></programme>
          <programme start="20301001100000 +0000" stop="20301001110000 +0000" channel="../evil/x"><title>Escape</title></programme>
        </tv>
        """
    }

    func importGuide(_ text: String, into store: Store) throws {
        let file = directory + "/guide-\(UUID().uuidString).xml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        _ = try XMLTVImport.importGuide(into: store, files: [file], options: ImportOptions(source: "t", force: true, now: 0), dryRun: false)
    }

    func mtime(_ path: String) throws -> Date {
        try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as! Date
    }

    /// A store holding `guide(titleOfSecond: "Film")` and the options of an export into `feeds/`.
    func importedGuide() throws -> (Store, ExportOptions) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/tv.sqlite", model: TVModel.model())
        try importGuide(guide(titleOfSecond: "Film"), into: store)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = UTCTime.seconds(year: 2030, month: 10, day: 1)
        return (store, options)
    }

    @Test func exportingTwiceKeepsBytesAndMtimes() throws {
        let (store, options) = try importedGuide()
        let first = try FeedExporter(store: store, options: options).export()
        #expect(first.written.contains("one.tv.ics"))
        let path = directory + "/feeds/one.tv.ics"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let before = try mtime(path)
        Thread.sleep(forTimeInterval: 1.1)
        let second = try FeedExporter(store: store, options: options).export()
        #expect(second.written.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try mtime(path) == before)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("SUMMARY:News\\, weather\\; more\r\n"))
        #expect(text.contains("CATEGORIES:News\r\n"))
    }

    /// A quiet export reads no feed: a kept feed's counts for the index come from the last
    /// export's state while the file has the size and mtime it was counted with. Here the feed is
    /// overwritten behind the exporter's back with as many bytes and its mtime put back: the index
    /// still shows the counts of the state (a read would count no event). Once the mtime differs,
    /// the file is counted again.
    @Test func aQuietExportTakesKeptFeedsCountsFromItsState() throws {
        let (store, options) = try importedGuide()
        _ = try FeedExporter(store: store, options: options).export()
        let path = directory + "/feeds/one.tv.ics", index = directory + "/feeds/index.html"
        let row = "<td>One</td><td>2</td>"
        #expect(try String(contentsOfFile: index, encoding: .utf8).contains(row))
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        var st = stat()
        #expect(stat(path, &st) == 0)
        try Data(repeating: UInt8(ascii: "x"), count: size).write(to: URL(fileURLWithPath: path))
        // The mtime put back to the nanosecond (FileManager's dates are coarser).
        var times = [st.st_atim, st.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        // Nothing dirty, as on a night whose sources did not change.
        let quiet = try FeedExporter(store: store, options: options).export(channels: [])
        #expect(quiet.written.isEmpty, "\(quiet.written)")
        #expect(try String(contentsOfFile: index, encoding: .utf8).contains(row), "the counts came from the state, not the file")

        times[1].tv_sec -= 60
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        _ = try FeedExporter(store: store, options: options).export(channels: [])
        #expect(try String(contentsOfFile: index, encoding: .utf8).contains("<td>One</td><td>0</td>"), "a file changed behind its back is counted again")
    }

    /// Feeds are rendered and written on a thread of their own: a feed that cannot be replaced
    /// (here a directory stands where the file goes) still fails the export, naming the file, and
    /// leaves no temporary file behind.
    @Test func aFeedThatCannotBeReplacedFailsTheExportAndNamesIt() throws {
        let (store, options) = try importedGuide()
        try FileManager.default.createDirectory(atPath: directory + "/feeds/one.tv.ics", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/feeds/one.tv.ics/occupied"))
        #expect {
            try FeedExporter(store: store, options: options).export()
        } throws: { error in
            "\(error)".contains("one.tv.ics")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/feeds")
        #expect(!left.contains { $0.contains(".tmp-") }, "\(left)")
    }

    @Test func hostileIdsCannotLeaveTheOutputDirectory() throws {
        #expect(FeedExporter.fileName(for: "../evil/x") == "%2E.%2Fevil%2Fx.ics")
        #expect(FeedExporter.fileName(for: "a/b") != FeedExporter.fileName(for: "a%2Fb"))
        #expect(!FeedExporter.fileName(for: "\u{0}/..").contains("/"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/tv.sqlite", model: TVModel.model())
        try importGuide(guide(titleOfSecond: "Film"), into: store)
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = UTCTime.seconds(year: 2030, month: 10, day: 1)
        _ = try FeedExporter(store: store, options: options).export()
        let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/feeds").sorted()
        #expect(files.contains("%2E.%2Fevil%2Fx.ics"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/evil"))
    }
}
