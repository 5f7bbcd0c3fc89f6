import Feeds
import Foundation
import Listings
import ObjectGraph
import Primitives
import TestSupport
import Testing

/// RFC 7986 IMAGE in each event: the programme's first icon, else its first poster image; none
/// for a programme with neither, or with only a picture that is not a URI.
@Suite struct ProgrammeImageTests {
    @Test func eventsShowTheFirstIconOrPoster() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let guide = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv><channel id="a.tv"><display-name>A</display-name></channel>
            <programme start="20301001060000 +0000" stop="20301001070000 +0000" channel="a.tv"><title>Icons</title>
              <icon src="http://x/first.jpg" width="10" height="20"/><icon src="http://x/second.jpg"/>
              <image type="poster">http://x/poster-not-shown.jpg</image></programme>
            <programme start="20301001070000 +0000" stop="20301001080000 +0000" channel="a.tv"><title>Poster</title>
              <image type="backdrop">http://x/backdrop.jpg</image><image type="poster" size="2">http://x/poster.jpg</image></programme>
            <programme start="20301001080000 +0000" stop="20301001090000 +0000" channel="a.tv"><title>Backdrop only</title>
              <image type="backdrop">http://x/backdrop.jpg</image></programme>
            <programme start="20301001090000 +0000" stop="20301001100000 +0000" channel="a.tv"><title>Relative</title><icon src="stars.png"/></programme>
            </tv>
            """
        try guide.write(toFile: directory + "/in.xml", atomically: true, encoding: .utf8)
        let observed = try ObservedStore(path: directory + "/tv.sqlite")
        try observed.importGuide([directory + "/in.xml"], now: UTCTime.seconds(year: 2030, month: 9, day: 30))
        var options = ExportOptions(outputDirectory: directory + "/feeds")
        options.now = UTCTime.seconds(year: 2030, month: 10, day: 1)
        _ = try FeedExporter(store: observed.store, options: options).export()
        let text = try String(contentsOfFile: directory + "/feeds/a.tv.ics", encoding: .utf8)
        let events = text.components(separatedBy: "BEGIN:VEVENT").dropFirst()
        let images = events.map { event in event.components(separatedBy: "\r\n").first { $0.hasPrefix("IMAGE") } }
        #expect(images == ["IMAGE;VALUE=URI;DISPLAY=THUMBNAIL:http://x/first.jpg", "IMAGE;VALUE=URI;DISPLAY=THUMBNAIL:http://x/poster.jpg", nil, nil])
        if FeedParsers.isInstalled {
            let parsed = try FeedParsers.parse([directory + "/feeds/a.tv.ics"])
            for (library, result) in parsed.files.values.first ?? [:] {
                #expect(result.error == nil && result.events?.count == 4, "\(library): \(result.error ?? "")")
            }
        }
    }
}
