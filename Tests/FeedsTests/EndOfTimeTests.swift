import Feeds
import Foundation
import Listings
import ObjectGraph
import Testing

/// Times from the store are not trusted to leave room: a programme without a stop at the end of
/// time gets no end after its start, so it is left out of its feed, and the export goes on.
@Suite struct EndOfTimeTests {
    @Test func aProgrammeWithoutAStopAtTheEndOfTimeIsLeftOut() throws {
        let directory = NSTemporaryDirectory() + "tvimport-end-of-time-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.inMemory(model: TVModel.model())
        let now: Int64 = 1_900_000_000
        try store.write { c in
            let channel = try c.insert("Channel", ["xmltvId": .string("one.tv"), "displayName": .string("One")])
            try c.insert("Programme", ["start": .date(now), "stop": .date(now + 3600), "title": .string("Kept")], related: ["channel": channel])
            try c.insert("Programme", ["start": .date(Int64.max - 10), "title": .string("Last")], related: ["channel": channel])
        }
        var options = ExportOptions(outputDirectory: directory)
        options.now = now
        let report = try FeedExporter(store: store, options: options).export()
        #expect(report.events == 1)
        let feed = try String(contentsOfFile: directory + "/one.tv.ics", encoding: .utf8)
        #expect(feed.contains("SUMMARY:Kept") && !feed.contains("SUMMARY:Last"))
    }
}
