/// Writes whole iCalendar feeds (RFC 5545 with the RFC 7986 calendar properties).
public enum ICalendarWriter {
    /// The complete feed as UTF-8 bytes with CRLF line ends. Same input, same bytes.
    public static func write(_ properties: CalendarProperties, events: [CalendarEvent]) -> [UInt8] {
        var stream = ICalendarStream(properties: properties, expectedEvents: events.count)
        for event in events { stream.append(event) }
        return stream.finish()
    }
}

/// Writes a feed event by event, for feeds too large to build as one `[CalendarEvent]`.
/// `takeWrittenBytes()` lets a caller move finished output to a file as it goes.
public struct ICalendarStream {
    private var buffer: ContentLineBuffer
    private var isFinished = false

    /// Writes the VCALENDAR header. `expectedEvents` only sizes the buffer.
    public init(properties: CalendarProperties, expectedEvents: Int = 0) {
        buffer = ContentLineBuffer(capacity: 1024 + 400 * max(0, expectedEvents))
        writeHeader(properties)
    }

    /// Writes one VEVENT.
    public mutating func append(_ event: CalendarEvent) {
        guard !isFinished else {
            assertionFailure("append(_:) after finish()")
            return
        }
        writeEvent(event)
    }

    /// The bytes written since the last call (or since the start), leaving the stream open.
    public mutating func takeWrittenBytes() -> [UInt8] {
        buffer.take()
    }

    /// Writes END:VCALENDAR and returns the bytes not yet taken. Later calls return nothing.
    public mutating func finish() -> [UInt8] {
        if !isFinished {
            isFinished = true
            buffer.appendASCII("END:VCALENDAR")
            buffer.endLine()
        }
        return buffer.take()
    }

    // MARK: Components

    private mutating func writeHeader(_ properties: CalendarProperties) {
        line("BEGIN:VCALENDAR")
        line("VERSION:2.0")
        text("PRODID:", properties.productID)
        line("CALSCALE:GREGORIAN")
        text("NAME:", properties.name)
        text("X-WR-CALNAME:", properties.name)
        if let description = properties.description {
            text("DESCRIPTION:", description)
            text("X-WR-CALDESC:", description)
        }
        buffer.appendASCII("REFRESH-INTERVAL;VALUE=DURATION:")
        buffer.appendDuration(seconds: properties.refreshInterval)
        buffer.endLine()
        // Outlook and Google read the non-standard TTL rather than REFRESH-INTERVAL.
        buffer.appendASCII("X-PUBLISHED-TTL:")
        buffer.appendDuration(seconds: properties.refreshInterval)
        buffer.endLine()
        if let color = properties.color, ValueChecks.isColorName(color) {
            buffer.appendASCII("COLOR:")
            buffer.appendVerbatim(color)
            buffer.endLine()
        }
        if let image = properties.image.flatMap(ValueChecks.uri) {
            buffer.appendASCII("IMAGE;VALUE=URI:")
            buffer.appendVerbatim(image)
            buffer.endLine()
        }
        if let source = properties.source.flatMap(ValueChecks.uri) {
            buffer.appendASCII("SOURCE;VALUE=URI:")
            buffer.appendVerbatim(source)
            buffer.endLine()
        }
    }

    private mutating func writeEvent(_ event: CalendarEvent) {
        assert(event.end > event.start, "event \(event.uid) ends before it starts")
        // Release builds keep the feed valid for every consumer: DTEND must follow DTSTART.
        let end = event.end > event.start ? event.end : event.start &+ 60

        line("BEGIN:VEVENT")
        text("UID:", event.uid)
        dateTime("DTSTAMP:", event.stamp)
        dateTime("DTSTART:", event.start)
        dateTime("DTEND:", end)
        text("SUMMARY:", event.summary)
        if let description = event.description { text("DESCRIPTION:", description) }
        writeCategories(event.categories)
        if let location = event.location { text("LOCATION:", location) }
        if let url = event.url.flatMap(ValueChecks.uri) {
            buffer.appendASCII("URL;VALUE=URI:")
            buffer.appendVerbatim(url)
            buffer.endLine()
        }
        if let image = event.image.flatMap(ValueChecks.uri) {
            buffer.appendASCII("IMAGE;VALUE=URI;DISPLAY=THUMBNAIL:")
            buffer.appendVerbatim(image)
            buffer.endLine()
        }
        dateTime("LAST-MODIFIED:", event.stamp)
        buffer.appendASCII("SEQUENCE:")
        buffer.appendDecimal(Int64(max(event.sequence, 0)))
        buffer.endLine()
        // Programmes are listings, not appointments: keep them out of free/busy.
        line("TRANSP:TRANSPARENT")
        line("END:VEVENT")
    }

    /// One property with a comma list (ics-py rejects repeated CATEGORIES). Values that would be
    /// empty after escaping are left out: an empty list item means nothing to any client.
    private mutating func writeCategories(_ categories: [String]) {
        var wroteAny = false
        for category in categories where !TextEscaping.isEmptyAfterEscaping(category) {
            if wroteAny {
                buffer.appendByte(UInt8(ascii: ","))
            } else {
                buffer.appendASCII("CATEGORIES:")
                wroteAny = true
            }
            buffer.appendText(category)
        }
        if wroteAny { buffer.endLine() }
    }

    // MARK: Content lines

    private mutating func line(_ content: StaticString) {
        buffer.appendASCII(content)
        buffer.endLine()
    }

    private mutating func text(_ nameAndColon: StaticString, _ value: String) {
        buffer.appendASCII(nameAndColon)
        buffer.appendText(value)
        buffer.endLine()
    }

    private mutating func dateTime(_ nameAndColon: StaticString, _ seconds: Int64) {
        buffer.appendASCII(nameAndColon)
        buffer.appendUTCDateTime(seconds)
        buffer.endLine()
    }
}

/// Checks for values that are written verbatim, so they must not break the content line.
enum ValueChecks {
    /// RFC 7986 COLOR takes a CSS3 colour name: letters only.
    static func isColorName(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") }
    }

    /// The URI to write, or nil to drop the property: it needs a scheme (RFC 3986 section 3.1) and
    /// no spaces or control characters. Non-ASCII octets are percent-encoded, which is how an IRI
    /// maps to a URI (RFC 3987 section 3.1) and keeps the value plain ASCII.
    static func uri(_ value: String) -> String? {
        let utf8 = Array(value.utf8)
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon + 1 < utf8.count,
              isASCIILetter(utf8[0]),
              utf8[1..<colon].allSatisfy({ isASCIILetter($0) || isASCIIDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
        else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        for byte in utf8 {
            if byte <= 0x20 || byte == 0x7F { return nil }
            if byte >= 0x80 {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private static func isASCIIDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
