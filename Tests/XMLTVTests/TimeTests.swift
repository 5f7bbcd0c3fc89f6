import Testing
import XMLTV

@Suite struct TimeTests {
    @Test(arguments: [
        ("19700101000000", Int64(0), false),
        ("1970", 0, false),
        ("197001", 0, false),
        ("19700102", 86_400, false),
        ("1970010101", 3600, false),
        ("197001010001", 60, false),
        ("20251026013000 +0100", 1_761_438_600, true),
        ("20251026010000 +0000", 1_761_440_400, true),
        ("20251026010000 Z", 1_761_440_400, true),
        ("20251026010000Z", 1_761_440_400, true),
        ("20251026010000 UTC", 1_761_440_400, true),
        ("20251026010000 GMT", 1_761_440_400, true),
        ("20010829000500 BST", 999_039_900, true),
        ("20010829000500 +0100", 999_039_900, true),
        ("20010829000500+0100", 999_039_900, true),
        ("20010829010500 +02:00", 999_039_900, true),
        ("20010829010500 CEST", 999_039_900, true),
        ("20010828180500 -05", 999_039_900, true),
        ("20010828180500 EST", 999_039_900, true),
        ("20010828190500 EDT", 999_039_900, true),
        ("200108290005 +0100", 999_039_900, true),
        ("20000229120000", 951_825_600, false),
        ("20161231235960", 1_483_228_800, false),
        ("20011228113100 -0400", 1_009_553_460, true),
        ("  20011228113100  ", 1_009_539_060, false),
    ] as [(String, Int64, Bool)])
    func parsesValidTimes(input: String, expected: Int64, hadZone: Bool) {
        let parsed = XMLTVTime.parse(input)
        #expect(parsed?.utc == expected, "\(input)")
        #expect(parsed?.hadZone == hadZone, "\(input)")
    }

    @Test(arguments: [
        "", "abc", "197", "19701", "2025102601300", "20251301000000", "20250230000000", "20230229000000",
        "20250101240000", "20250101006000", "20250101000061", "20250101000000 +2500", "20250101000000 +01:",
        "20250101000000 XYZ", "20250101000000 +1", "20250101000000 +01000", "20250101000000 0100",
        String(repeating: "9", count: 99), "20250101000000 +" + String(repeating: "9", count: 99),
        "20250101000000 junk after", "2025-01-01 00:00:00",
    ])
    func rejectsInvalidTimes(input: String) {
        #expect(XMLTVTime.parse(input) == nil, "\(input)")
    }

    @Test func dstEndIsTwoDistinctInstants() {
        let beforeSwitch = XMLTVTime.parse("20251026013000 +0100")!.utc   // 00:30 UTC
        let afterSwitch = XMLTVTime.parse("20251026010000 +0000")!.utc    // 01:00 UTC
        #expect(afterSwitch - beforeSwitch == 1800)
    }

    @Test func farDatesDoNotTrap() {
        #expect(XMLTVTime.parse("00000101000000") != nil)
        #expect(XMLTVTime.parse("99991231235959 +1400") != nil)
    }
}
