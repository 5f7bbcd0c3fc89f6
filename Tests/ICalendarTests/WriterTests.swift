import Testing
@testable import ICalendar

@Suite("Feed writer")
struct WriterTests {
    @Test("Exact bytes of a small feed (any change to the output shows here)")
    func golden() {
        let event = CalendarEvent(
            uid: "8f763120351b0c0e8d95468e7a539c91@tvimport.example", start: 1_741_118_400, end: 1_741_122_000,
            summary: "News, Weather; Sport", description: "Line 1\nLine 2", categories: ["News", "Info, Politik"],
            location: "BBC One", url: "https://example.org/p/1", stamp: 951_782_400, sequence: 2)
        let properties = CalendarProperties(productID: "-//tvimport//tvimport 0.1//EN", name: "BBC One",
                                            refreshInterval: 43_200)
        let expected = """
            BEGIN:VCALENDAR
            VERSION:2.0
            PRODID:-//tvimport//tvimport 0.1//EN
            CALSCALE:GREGORIAN
            NAME:BBC One
            X-WR-CALNAME:BBC One
            REFRESH-INTERVAL;VALUE=DURATION:PT12H
            X-PUBLISHED-TTL:PT12H
            BEGIN:VEVENT
            UID:8f763120351b0c0e8d95468e7a539c91@tvimport.example
            DTSTAMP:20000229T000000Z
            DTSTART:20250304T200000Z
            DTEND:20250304T210000Z
            SUMMARY:News\\, Weather\\; Sport
            DESCRIPTION:Line 1\\nLine 2
            CATEGORIES:News,Info\\, Politik
            LOCATION:BBC One
            URL;VALUE=URI:https://example.org/p/1
            LAST-MODIFIED:20000229T000000Z
            SEQUENCE:2
            TRANSP:TRANSPARENT
            END:VEVENT
            END:VCALENDAR

            """.replacingOccurrences(of: "\n", with: "\r\n")
        let bytes = ICalendarWriter.write(properties, events: [event])
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test("Calendar properties: RFC 7986 and X-WR-* twins, no METHOD")
    func calendarProperties() {
        let lines = Feed.logicalLines(ICalendarWriter.write(Samples.properties, events: [Samples.event(0)]))
        #expect(Array(lines.prefix(4)) == ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tvimport//tvimport 0.1//EN",
                                           "CALSCALE:GREGORIAN"])
        for line in ["NAME:Das Erste\\, HD\\; \"Test\"", "X-WR-CALNAME:Das Erste\\, HD\\; \"Test\"",
                     "DESCRIPTION:Programme of Das Erste\\nfrom XMLTV", "X-WR-CALDESC:Programme of Das Erste\\nfrom XMLTV",
                     "REFRESH-INTERVAL;VALUE=DURATION:PT12H", "X-PUBLISHED-TTL:PT12H", "COLOR:steelblue",
                     "IMAGE;VALUE=URI:https://example.org/logos/daserste.png",
                     "SOURCE;VALUE=URI:https://example.org/feeds/daserste.ics"] {
            #expect(lines.contains(line), "missing \(line)")
        }
        #expect(!lines.contains { $0.hasPrefix("METHOD") })
        #expect(lines.last == "END:VCALENDAR")
    }

    @Test("Optional calendar properties are left out when unset or invalid")
    func optionalCalendarProperties() {
        var properties = Samples.properties
        properties.description = nil
        properties.color = "#ff0000"
        properties.image = "logo.png"
        properties.source = "https://example.org/feed.ics\r\nMETHOD:CANCEL"
        let lines = Feed.logicalLines(ICalendarWriter.write(properties, events: [Samples.event(0)]))
        for name in ["DESCRIPTION", "X-WR-CALDESC", "COLOR", "IMAGE", "SOURCE", "METHOD"] {
            #expect(!lines.prefix { $0 != "BEGIN:VEVENT" }.contains { $0.hasPrefix(name) }, "\(name) written")
        }
    }

    @Test("Refresh interval as a DURATION", arguments: [
        (43_200, "PT12H"), (3600, "PT1H"), (5400, "PT1H30M"), (90, "PT1M30S"), (604_800, "PT168H"), (0, "PT1S"),
    ])
    func refreshInterval(seconds: Int, expected: String) {
        var properties = Samples.properties
        properties.refreshInterval = seconds
        let bytes = ICalendarWriter.write(properties, events: [])
        #expect(Feed.value(of: "REFRESH-INTERVAL;VALUE=DURATION:", in: bytes) == expected)
        #expect(Feed.value(of: "X-PUBLISHED-TTL:", in: bytes) == expected)
    }

    @Test("UTC DATE-TIME values", arguments: [
        (Int64(0), "19700101T000000Z"), (951_782_400, "20000229T000000Z"), (1_741_118_400, "20250304T200000Z"),
        (-1, "19691231T235959Z"), (4_102_444_799, "20991231T235959Z"), (253_402_300_799, "99991231T235959Z"),
        (Int64.max, "99991231T235959Z"),
    ])
    func dateTimes(seconds: Int64, expected: String) {
        var buffer = ContentLineBuffer()
        buffer.appendUTCDateTime(seconds)
        #expect(String(decoding: buffer.bytes, as: UTF8.self) == expected)
    }

    @Test("Every VEVENT has its properties in order, TRANSP:TRANSPARENT, no empty CATEGORIES")
    func eventShape() {
        let events = [Samples.event(0, categories: []), Samples.event(1, categories: ["", "\u{1}"])]
        let lines = Feed.logicalLines(ICalendarWriter.write(Samples.properties, events: events))
        let names = lines.drop { $0 != "BEGIN:VEVENT" }.prefix { $0 != "END:VEVENT" }
            .map { String($0.prefix { $0 != ":" && $0 != ";" }) }
        #expect(names == ["BEGIN", "UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY", "LAST-MODIFIED", "SEQUENCE", "TRANSP"])
        #expect(lines.filter { $0 == "TRANSP:TRANSPARENT" }.count == 2)
        #expect(!lines.contains { $0.hasPrefix("CATEGORIES") })
    }

    @Test("URLs: IRIs percent-encoded, values with spaces, controls or no scheme dropped")
    func urls() {
        func url(_ value: String) -> String? {
            Feed.value(of: "URL;VALUE=URI:", in: ICalendarWriter.write(Samples.properties,
                                                                      events: [Samples.event(0, url: value)]))
        }
        #expect(url("https://de.example.org/wiki/Müller") == "https://de.example.org/wiki/M%C3%BCller")
        #expect(url("https://example.org/a?b=c,d;e") == "https://example.org/a?b=c,d;e")
        #expect(url("https://example.org/a b") == nil)
        #expect(url("https://example.org/a\nb") == nil)
        #expect(url("https://example.org/a\u{7F}") == nil)
        #expect(url("example.org/no-scheme") == nil)
        #expect(url("") == nil)
    }

    @Test("CRLF only and no control characters anywhere in the output")
    func crlfAndControls() {
        let bytes = ICalendarWriter.write(Samples.properties, events: Samples.trickyEvents)
        _ = Feed.physicalLines(bytes)  // records bare CR / LF
        let withoutCRLF = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "")
        #expect(!withoutCRLF.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        #expect(Feed.value(of: "SUMMARY:", in: ICalendarWriter.write(Samples.properties, events: [Samples.trickyEvents[5]]))
                == "Controlcharsstripped[0m here tab")
    }

    @Test("Deterministic, and the stream in chunks equals the one-shot writer")
    func deterministicAndStreaming() {
        let events = Samples.trickyEvents + (0..<50).map { Samples.event($0 + 10, summary: "Episode \($0)") }
        let once = ICalendarWriter.write(Samples.properties, events: events)
        #expect(once == ICalendarWriter.write(Samples.properties, events: events))
        var stream = ICalendarStream(properties: Samples.properties)
        var chunks: [UInt8] = stream.takeWrittenBytes()
        for (index, event) in events.enumerated() {
            stream.append(event)
            if index % 7 == 0 { chunks += stream.takeWrittenBytes() }
        }
        chunks += stream.finish()
        #expect(chunks == once)
        #expect(stream.finish().isEmpty)
    }
}
