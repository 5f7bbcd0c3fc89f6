/// UTC instants (seconds since 1970-01-01T00:00:00Z) and their civil dates, proleptic Gregorian,
/// with integer arithmetic only: Primitives imports no Foundation, so that the XMLTV reader can
/// use it (docs/design.md#platform-notes).
///
/// ```swift
/// let t = UTCTime.seconds(year: 2026, month: 11, day: 22, hour: 3)
/// UTCTime.iso8601(t)                           // "2026-11-22T03:00:00Z"
/// UTCTime.parseISO8601("2026-11-22T03:00:00Z") // t
/// UTCTime.components(t).day                    // 22
/// ```
public enum UTCTime {
    /// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil: counts 400-year
    /// eras from 0000-03-01, so the leap day ends each year).
    @inlinable
    public static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day counted from 1970-01-01 (civil_from_days, the inverse of `days`).
    public static func civilDate(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    /// Seconds since 1970 of a civil UTC date and time.
    @inlinable
    public static func seconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Int64 {
        days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Civil date and time of an instant.
    public static func components(_ seconds: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rem = Int(seconds - days * 86_400)
        let (y, m, d) = civilDate(days: days)
        return (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
    }

    /// `2026-11-22T03:00:00Z`
    public static func iso8601(_ seconds: Int64) -> String {
        let (y, m, d, hh, mm, ss) = components(seconds)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(hh, 2)):\(pad(mm, 2)):\(pad(ss, 2))Z"
    }

    /// `20261122030000` (XMLTV's form, without a zone).
    public static func compact(_ seconds: Int64) -> String {
        let (y, m, d, hh, mm, ss) = components(seconds)
        return pad(y, 4) + pad(m, 2) + pad(d, 2) + pad(hh, 2) + pad(mm, 2) + pad(ss, 2)
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`, the form `iso8601(_:)` writes; nil for anything else.
    public static func parseISO8601(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var n = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                n = n * 10 + Int(b[i] - 48)
            }
            return n
        }
        guard let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2), let h = number(11, 2),
              let mi = number(14, 2), let s = number(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        return seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    /// Whether `year` has 29 February.
    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// Days in a month of a year.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
