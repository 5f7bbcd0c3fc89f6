import Primitives

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
        (year, month, day) = UTCTime.civilDate(days: days)
    }
}
