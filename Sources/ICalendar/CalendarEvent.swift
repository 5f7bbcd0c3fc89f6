/// One VEVENT: a programme, with times as UTC seconds since 1970.
public struct CalendarEvent: Sendable, Hashable {
    public var uid: String
    /// Start, UTC seconds since 1970 (DTSTART).
    public var start: Int64
    /// End, UTC seconds since 1970 (DTEND). Callers guarantee `end > start`.
    public var end: Int64
    public var summary: String
    public var description: String?
    /// Written as one CATEGORIES property; empty values are left out.
    public var categories: [String]
    public var location: String?
    /// Written as URL;VALUE=URI, dropped when it is not a plausible URI.
    public var url: String?
    /// The programme's picture: RFC 7986 IMAGE;VALUE=URI, dropped when it is not a plausible URI.
    public var image: String?
    /// UTC seconds since 1970 of the last change (DTSTAMP and LAST-MODIFIED).
    public var stamp: Int64
    public var sequence: Int

    public init(
        uid: String,
        start: Int64,
        end: Int64,
        summary: String,
        description: String? = nil,
        categories: [String] = [],
        location: String? = nil,
        url: String? = nil,
        image: String? = nil,
        stamp: Int64,
        sequence: Int = 0
    ) {
        self.uid = uid
        self.start = start
        self.end = end
        self.summary = summary
        self.description = description
        self.categories = categories
        self.location = location
        self.url = url
        self.image = image
        self.stamp = stamp
        self.sequence = sequence
    }
}
