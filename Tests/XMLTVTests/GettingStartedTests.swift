import Foundation
import TestSupport
import Testing
import XMLTV

/// The examples of Sources/XMLTV/XMLTV.docc/GettingStarted.md, as written there: if they stop
/// compiling or say something else, this fails.
@Suite struct GettingStartedTests {
    static let guide = GuideText.document(
        channels: [.init("one.example", name: "One"), .init("two.example", name: "Two")],
        programmes: [.init("one.example", start: 1_893_456_000, stop: 1_893_457_800, title: "News"),
                     .init("one.example", start: 1_893_457_800, stop: 1_893_459_600, title: "Weather"),
                     .init("two.example", start: 1_893_456_000, stop: 1_893_459_600, title: "Film")]
    ).replacingOccurrences(of: "<title>Weather</title>", with: "")

    @Test func theExampleRuns() throws {
        let path = Fixture.write(Self.guide)
        // From here to `oddities`: the article's ten lines.
        let reader = try XMLTVReader(path: path)
        var names: [String: String] = [:], programmes: [String: Int] = [:]
        while let item = try reader.next() {
            switch item {
            case .channel(let channel):
                names[channel.id] = channel.displayNames.first?.text
            case .programme(let programme):
                programmes[programme.channel, default: 0] += 1
            }
        }
        let oddities = reader.warnings.map { "\($0.line ?? 0): \($0.message)" }
        #expect(names == ["one.example": "One", "two.example": "Two"])
        #expect(programmes == ["one.example": 2, "two.example": 1])
        #expect(oddities.count == 1 && oddities[0].hasPrefix("6: "), "\(oddities)")
    }

    @Test func aMissingFileIsAnErrorNamingIt() {
        #expect {
            _ = try XMLTVReader(path: "missing.xml")
        } throws: { error in
            "\(error)" == "missing.xml: cannot open: No such file or directory"
        }
    }

    @Test func optionsChooseChannelsAndFixTheZone() throws {
        let path = Fixture.write(Self.guide)
        var options = XMLTVReaderOptions(includeChannels: ["one.example"])
        options.timeOffsetOverride = 3600   // the feed says +0000 but means +0100
        let reader = try XMLTVReader(path: path, options: options)
        let result = try readAll(reader)
        #expect(result.channels.map(\.id) == ["one.example"])
        #expect(result.programmes.map(\.start) == [1_893_456_000 - 3600, 1_893_457_800 - 3600])
    }

    func readAll(_ reader: XMLTVReader) throws -> ReadResult {
        var result = ReadResult()
        while let item = try reader.next() {
            switch item {
            case .channel(let c): result.channels.append(c)
            case .programme(let p): result.programmes.append(p)
            }
        }
        return result
    }
}
