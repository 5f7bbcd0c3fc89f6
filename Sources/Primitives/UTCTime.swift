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

    /// Civil date and time of an instant; any Int64 (a stored value may be anything), without
    /// overflow: the day is floored by quotient and remainder, not by subtracting from `seconds`.
    public static func components(_ seconds: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var (days, rem) = seconds.quotientAndRemainder(dividingBy: 86_400)
        if rem < 0 { days -= 1; rem += 86_400 }
        let (y, m, d) = civilDate(days: days)
        let r = Int(rem)
        return (y, m, d, r / 3600, r % 3600 / 60, r % 60)
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
        func number(_ from: Int, _ count: Int) -> Int? { digits(b, from, count) }
        guard let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2), let h = number(11, 2),
              let mi = number(14, 2), let s = number(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        return seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    /// A date and time as people and forms write it: `YYYY-MM-DDTHH:MM[:SS[.fraction]]` then
    /// `Z`, `±HH:MM`, `±HHMM` or nothing (UTC), the offset applied; nil for anything else (a
    /// day that does not exist, an hour of 24, an offset beyond ±14:59, trailing text).
    /// Every field has a fixed number of digits, so no input can overflow.
    ///
    ///     UTCTime.parseDateTime("2026-11-27T10:00+05:00")   // 2026-11-27T05:00:00Z
    ///     UTCTime.parseDateTime("2026-11-27T10:00Zjunk")    // nil
    public static func parseDateTime(_ text: String) -> Int64? {
        let b = Array(text.utf8.prefix(64))
        guard text.utf8.count <= 64, b.count >= 16 else { return nil }
        func digits(_ from: Int, _ count: Int) -> Int? { UTCTime.digits(b, from, count) }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              b[13] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2), let hour = digits(11, 2), let minute = digits(14, 2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60 else { return nil }
        var i = 16, second = 0
        if i < b.count, b[i] == UInt8(ascii: ":") {
            guard let s = digits(i + 1, 2), s < 61 else { return nil }
            second = s
            i += 3
            if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
                i += 1
                let start = i
                while i < b.count, b[i] >= 48, b[i] <= 57, i - start < 9 { i += 1 }
                guard i > start else { return nil }
            }
        }
        var offset = 0
        if i < b.count {
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                guard let oh = digits(i + 1, 2) else { return nil }
                i += 3
                if i < b.count, b[i] == UInt8(ascii: ":") { i += 1 }
                guard let om = digits(i, 2), oh <= 14, om < 60 else { return nil }
                i += 2
                offset = sign * (oh * 3600 + om * 60)
            default:
                return nil
            }
        }
        guard i == b.count else { return nil }
        return seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second) - Int64(offset)
    }

    /// The number written by `count` ASCII digits of `b` from `from` (nil if any is not a digit,
    /// or `b` ends before): fixed widths, so no overflow.
    static func digits(_ b: [UInt8], _ from: Int, _ count: Int) -> Int? {
        guard from >= 0, count <= 18, from + count <= b.count else { return nil }
        var n = 0
        for i in from..<(from + count) {
            guard b[i] >= 48, b[i] <= 57 else { return nil }
            n = n * 10 + Int(b[i] - 48)
        }
        return n
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
