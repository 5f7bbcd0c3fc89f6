import ObjectGraph
import Primitives

/// HTTP dates (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), without Foundation's
/// formatters: Last-Modified is written and If-Modified-Since read on every feed request.
enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ seconds: Int64) -> String {
        let c = UTCTime.components(seconds)
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(weekday), \(two(c.day)) \(months[c.month - 1]) \(c.year) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }

    /// The instant of an IMF-fixdate; nil for anything else (the obsolete forms are not worth
    /// a parser: a client that sends them gets a 200).
    static func parse(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]),
              let month = months.firstIndex(of: String(parts[2])) else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3 else { return nil }
        return UTCTime.seconds(year: year, month: month + 1, day: day, hour: time[0], minute: time[1], second: time[2])
    }
}
