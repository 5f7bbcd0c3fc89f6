import Primitives

// XMLTV times: `YYYY[MM[DD[hh[mm[ss]]]]] [zone]`, converted with integer arithmetic only.

/// XMLTV times, `YYYY[MM[DD[hh[mm[ss]]]]] [zone]` (`20261122030000 +0100`), converted to UTC with
/// integer arithmetic only: no calendar, no locale, nothing an input can make overflow.
///
/// ```swift
/// XMLTVTime.parse("20261122030000 +0100")   // (utc: 1795312800, hadZone: true)
/// ```
public enum XMLTVTime {
    /// UTC seconds since 1970 and whether the string named a zone (no zone means UTC).
    /// Returns nil for anything outside the grammar or with out-of-range fields.
    public static func parse(_ s: String) -> (utc: Int64, hadZone: Bool)? {
        var copy = s
        return copy.withUTF8 { bytes in
            guard let parts = components(bytes) else { return nil }
            return (parts.local - Int64(parts.offset ?? 0), parts.offset != nil)
        }
    }

    /// Local seconds (the wall clock read as if UTC) and the zone offset in seconds east of UTC, if any.
    static func components(_ b: UnsafeBufferPointer<UInt8>) -> (local: Int64, offset: Int?)? {
        var i = 0
        let n = b.count
        while i < n, isSpace(b[i]) { i += 1 }
        let digitsStart = i
        while i < n, isDigit(b[i]) { i += 1 }
        let digitCount = i - digitsStart
        // Checking the count first keeps absurdly long numbers from overflowing anything.
        guard digitCount >= 4, digitCount <= 14, digitCount % 2 == 0 else { return nil }
        func field(_ at: Int, _ width: Int, _ fallback: Int) -> Int {
            guard at + width <= digitCount else { return fallback }
            var v = 0
            for k in 0..<width { v = v * 10 + Int(b[digitsStart + at + k] &- 48) }
            return v
        }
        let year = field(0, 4, 1970), month = field(4, 2, 1), day = field(6, 2, 1)
        let hour = field(8, 2, 0), minute = field(10, 2, 0), second = field(12, 2, 0)
        guard (1...12).contains(month), day >= 1, day <= UTCTime.daysIn(month: month, year: year),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let local = UTCTime.days(year: year, month: month, day: day) * 86_400
            + Int64(hour * 3600 + minute * 60 + second)

        while i < n, isSpace(b[i]) { i += 1 }
        if i == n { return (local, nil) }
        guard let offset = zoneOffset(UnsafeBufferPointer(rebasing: b[i...])) else { return nil }
        return (local, offset)
    }

    /// `+hhmm`, `+hh:mm`, `+hh`, `-…`, `Z` or a common abbreviation; trailing blanks allowed.
    static func zoneOffset(_ z: UnsafeBufferPointer<UInt8>) -> Int? {
        var end = z.count
        while end > 0, isSpace(z[end - 1]) { end -= 1 }
        guard end > 0 else { return nil }
        let sign = z[0]
        if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            // Digits accumulated without an array: this runs for every time attribute.
            var value = 0, digits = 0, colonAt = -1
            for k in 1..<end {
                let c = z[k]
                if isDigit(c), digits < 4 {
                    value = value * 10 + Int(c &- 48)
                    digits += 1
                } else if c == UInt8(ascii: ":"), digits == 2, colonAt < 0 {
                    colonAt = k   // +hh:mm
                } else {
                    return nil
                }
            }
            let hours: Int, minutes: Int
            switch digits {
            case 2 where colonAt < 0: hours = value; minutes = 0
            case 4: hours = value / 100; minutes = value % 100
            default: return nil
            }
            guard hours <= 14, minutes <= 59 else { return nil }
            let seconds = hours * 3600 + minutes * 60
            return sign == UInt8(ascii: "-") ? -seconds : seconds
        }
        guard end <= 5 else { return nil }
        var name = ""
        for k in 0..<end {
            let c = z[k]
            guard (c >= 65 && c <= 90) || (c >= 97 && c <= 122) else { return nil }
            name.unicodeScalars.append(Unicode.Scalar(c >= 97 ? c - 32 : c))
        }
        return namedZones[name].map { $0 * 60 }
    }

    /// Abbreviations seen in real feeds, in minutes east of UTC. Ambiguous ones (IST, CST as China) are
    /// resolved the way XMLTV's own Date::Manip-based tools do.
    static let namedZones: [String: Int] = [
        "Z": 0, "UT": 0, "UTC": 0, "GMT": 0, "WET": 0,
        "BST": 60, "IST": 60, "WEST": 60, "CET": 60, "MET": 60,
        "CEST": 120, "MEST": 120, "EET": 120, "SAST": 120,
        "EEST": 180, "MSK": 180,
        "EST": -300, "EDT": -240, "CST": -360, "CDT": -300,
        "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
        "AKST": -540, "AKDT": -480, "HST": -600,
        "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
        "JST": 540, "KST": 540, "AWST": 480,
        "ACST": 570, "ACDT": 630, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
    ]

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    @inline(__always) static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }

    /// `YYYYMMDDhhmmss` in UTC, for messages.
    static func format(_ utc: Int64) -> String { UTCTime.compact(utc) }
}
