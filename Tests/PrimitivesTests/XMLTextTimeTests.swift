import Primitives
import Testing

/// `XMLText.append(compactTime:)` keeps the last day's digits for the next time: a run of times
/// on one day, across midnight, before 1970 and outside four-digit years must all be written as
/// `UTCTime.compact` writes them.
@Suite struct XMLTextTimeTests {
    @Test func timesOnTheSameDayAndAcrossDaysAreWrittenAsUTCTimeWritesThem() {
        var times: [Int64] = []
        var generator = SystemRandomNumberGenerator()
        for base: Int64 in [1_893_456_000, 0, -86_400, 253_402_300_000, -62_167_219_200] {
            var t = base
            for _ in 0..<200 {
                times.append(t)
                t += Int64.random(in: 0...7_200, using: &generator)
            }
        }
        // A time outside four-digit years between two on the same day, then the same day again.
        times += [1_893_456_000, 253_402_300_800, 1_893_456_001, .max, .min, -1, 86_399, 86_400]
        var xml = XMLText()
        for t in times {
            xml.append(compactTime: t)
            xml.raw("\n")
        }
        let expected = times.map { UTCTime.compact($0) + "\n" }.joined()
        #expect(String(decoding: xml.bytes, as: UTF8.self) == expected)
    }
}
