import Primitives
import Testing

/// Issue 34: dates as forms and people write them, the exporter's file names, and civil dates of
/// any stored value.
struct DateTimeInputTests {
    @Test func parseDateTimeAppliesItsOffsetAndRefusesTheRest() {
        let ten = UTCTime.seconds(year: 2026, month: 11, day: 27, hour: 10)
        #expect(UTCTime.parseDateTime("2026-11-27T10:00") == ten)
        #expect(UTCTime.parseDateTime("2026-11-27T10:00:00Z") == ten)
        #expect(UTCTime.parseDateTime("2026-11-27T10:00+05:00") == ten - 5 * 3600)
        #expect(UTCTime.parseDateTime("2026-11-27T10:00:30.5-0330") == ten + 30 + 3 * 3600 + 1800)
        #expect(UTCTime.parseDateTime("2026-12-31T23:59:60Z") == UTCTime.seconds(year: 2027, month: 1, day: 1))
        for bad in ["2026-11-27T10:00Zjunk", "2026-11-27T10:00+99:99", "2026-11-27T10:00+15:00", "2026-11-27T10:00+05", "2026-02-29T10:00",
                    "2026-11-27T24:00", "2026-11-27 10:00", "2026-11-27T10:00:", "2026-11-27T10:00.5", "+2026-11-27T10:00",
                    "99999-11-27T10:00", "2026-11-27T10:00" + String(repeating: "0", count: 100), ""] {
            #expect(UTCTime.parseDateTime(bad) == nil, "\(bad)")
        }
        #expect(UTCTime.parseDateTime("2024-02-29T00:00") != nil)
    }

    @Test func componentsTakeAnyInt64() {
        for t in [Int64.min, Int64.min + 1, -1, 0, Int64.max] {
            let c = UTCTime.components(t)
            #expect((0..<24).contains(c.hour) && (0..<60).contains(c.minute) && (0..<60).contains(c.second) && (1...12).contains(c.month))
        }
        #expect(UTCTime.iso8601(-1) == "1969-12-31T23:59:59Z")
    }

    @Test func exporterNames() {
        for name in ["alpha.test.ics", "index.html", "filter~news.ics", "a%2Fb.ics"] { #expect(FeedFileName.isExporterName(name), "\(name)") }
        for name in ["passwd", ".x.ics", "a/b.ics", "..", "x.ics.txt", "é.ics", "a\u{0}.ics", "", String(repeating: "a", count: 300) + ".ics"] {
            #expect(!FeedFileName.isExporterName(name), "\(name)")
        }
    }
}
