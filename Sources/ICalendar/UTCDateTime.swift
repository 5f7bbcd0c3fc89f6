/// A UTC calendar date and time from seconds since 1970, proleptic Gregorian, no Foundation.
struct UTCDateTime: Equatable {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: DATE-TIME has four year digits.
    static let earliest: Int64 = -62_135_596_800
    static let latest: Int64 = 253_402_300_799

    init(secondsSince1970: Int64) {
        let clamped = min(max(secondsSince1970, Self.earliest), Self.latest)
        var days = clamped / 86_400
        var secondOfDay = clamped % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        hour = Int(secondOfDay / 3600)
        minute = Int(secondOfDay % 3600 / 60)
        second = Int(secondOfDay % 60)
        (year, month, day) = Self.civilDate(daysSince1970: days)
    }

    /// Counts in 400-year eras starting on 0000-03-01, so that the leap day ends each year.
    private static func civilDate(daysSince1970: Int64) -> (Int, Int, Int) {
        let shifted = daysSince1970 + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 = March
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
