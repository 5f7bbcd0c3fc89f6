/// HTTP dates (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), without Foundation's
/// formatters: serve writes Last-Modified and reads If-Modified-Since on every feed request, and
/// downloads read a server's Retry-After.
///
/// Whatever a peer sends cannot make the arithmetic overflow: the form has a fixed length and
/// every number a fixed count of digits, read as such.
///
/// ```swift
/// HTTPDate.format(784_111_777)                        // "Sun, 06 Nov 1994 08:49:37 GMT"
/// HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")     // 784111777
/// ```
public enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate of an instant (seconds since 1970, UTC).
    public static func format(_ seconds: Int64) -> String {
        let c = UTCTime.components(seconds)
        var days = seconds / 86400
        if seconds % 86400 < 0 { days -= 1 }
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        // Four digits (IMF-fixdate), also before the year 1000 (the fuzz target found year 1 written as "1").
        let year = c.year >= 0 && c.year < 1000 ? String(String(c.year + 10000).dropFirst()) : "\(c.year)"
        return "\(weekday), \(two(c.day)) \(months[c.month - 1]) \(year) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }

    /// The instant of an IMF-fixdate; nil for anything else (the obsolete forms are not worth
    /// a parser: a client that sends them gets a 200, a Retry-After in them is not honoured).
    ///
    /// A year of `999999999999` or an hour of `9999999999999999` is not a date (it once trapped).
    public static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8.prefix(30))
        guard b.count == 29, text.utf8.count == 29 else { return nil }
        func digits(_ from: Int, _ count: Int) -> Int? {
            var n = 0
            for byte in b[from..<(from + count)] {
                guard byte >= 48, byte <= 57 else { return nil }
                n = n * 10 + Int(byte - 48)
            }
            return n
        }
        func word(_ from: Int) -> String { String(decoding: b[from..<(from + 3)], as: UTF8.self) }
        guard weekdays.contains(word(0)), b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
              b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20, word(26) == "GMT",
              let month = months.firstIndex(of: word(8)),
              let day = digits(5, 2), let year = digits(12, 4), let hour = digits(17, 2), let minute = digits(20, 2), let second = digits(23, 2),
              (1...UTCTime.daysIn(month: month + 1, year: year)).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        return UTCTime.seconds(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
    }
}
