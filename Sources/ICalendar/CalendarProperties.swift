/// Calendar-level properties of one feed (RFC 5545 section 3.7, RFC 7986 section 5).
public struct CalendarProperties: Sendable, Hashable {
    /// PRODID, e.g. "-//tvimport//tvimport 0.1//EN".
    public var productID: String
    /// Written as NAME (RFC 7986) and X-WR-CALNAME (Apple, Google, Outlook).
    public var name: String
    /// Written as DESCRIPTION (RFC 7986) and X-WR-CALDESC when set.
    public var description: String?
    /// Seconds; written as REFRESH-INTERVAL;VALUE=DURATION and X-PUBLISHED-TTL.
    public var refreshInterval: Int
    /// A CSS3 colour name (RFC 7986 COLOR); dropped unless it is letters only.
    public var color: String?
    /// A URI (RFC 7986 IMAGE;VALUE=URI); dropped if it is not a plausible URI.
    public var image: String?
    /// A URI (RFC 7986 SOURCE;VALUE=URI) where the feed can be refreshed from.
    public var source: String?

    public init(
        productID: String,
        name: String,
        description: String? = nil,
        refreshInterval: Int = 12 * 3600,
        color: String? = nil,
        image: String? = nil,
        source: String? = nil
    ) {
        self.productID = productID
        self.name = name
        self.description = description
        self.refreshInterval = refreshInterval
        self.color = color
        self.image = image
        self.source = source
    }
}
