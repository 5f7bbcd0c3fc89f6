import Testing
import XMLTV

@Suite struct NormaliserTests {
    func programme(_ start: String, _ stop: String? = nil, _ title: String = "T", clump: (Int, Int) = (0, 1),
                   line: Int) -> XMLTVProgramme {
        XMLTVProgramme(channel: "c", start: utc(start), stop: stop.map(utc), clumpIndex: clump.0, clumpCount: clump.1,
                       titles: [LocalizedText(text: title)], line: line)
    }

    @Test func sortsByStartThenClump() {
        let input = [
            programme("20250101020000", line: 3),
            programme("20250101010000", clump: (1, 2), line: 2),
            programme("20250101010000", clump: (0, 2), line: 1),
        ]
        let (out, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(out.map(\.line) == [1, 2, 3])
        // clump members share the next start as stop and do not overlap each other
        #expect(out[0].stop == utc("20250101020000") && out[1].stop == utc("20250101020000"))
        #expect(warnings.map(\.kind) == ["missing-stop"])
        #expect(warnings.first?.line == 3 && warnings.first?.channel == "c")
    }

    @Test func lastDuplicateWinsExactVersusConflicting() {
        let input = [
            programme("20250101010000", "20250101020000", "A", line: 10),
            programme("20250101010000", "20250101020000", "A", line: 20),
            programme("20250101010000", "20250101020000", "B", line: 30),
            programme("20250101020000", "20250101030000", "C", line: 40),
            programme("20250101020000", "20250101030000", "C", line: 5),
        ]
        let (out, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(out.map(\.line) == [30, 40])
        #expect(out.first?.titles.first?.text == "B")
        let kinds = warnings.map { "\($0.kind)@\($0.line!)" }.sorted()
        #expect(kinds == ["conflicting-duplicate@10", "conflicting-duplicate@20", "duplicate@5"])
    }

    @Test func missingStopsComeFromTheNextStart() {
        let input = [
            programme("20250101010000", line: 1),
            programme("20250101020000", "20250101023000", line: 2),
            programme("20250101030000", line: 3),
        ]
        let (out, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(out.map(\.stop) == [utc("20250101020000"), utc("20250101023000"), nil])
        #expect(warnings.map(\.kind) == ["missing-stop"])
        #expect(warnings.first?.line == 3)
    }

    @Test func stopBeforeStartIsRepairedOrDropped() {
        // 23:30-00:30 written with the wrong day: repaired to the next day.
        let input = [
            programme("20250101233000", "20250101003000", line: 1),
            programme("20250102003000", "20250102010000", line: 2),
            // stop + 24h would run past the next start: dropped, then inferred from the next start
            programme("20250102120000", "20250102110000", line: 3),
            programme("20250102130000", "20250102140000", line: 4),
            // more than a day backwards: dropped, nothing to infer from
            programme("20250105120000", "20250103110000", line: 5),
        ]
        let (out, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(out[0].stop == utc("20250102003000"))
        #expect(out[2].stop == utc("20250102130000"))
        #expect(out[4].stop == nil)
        #expect(warnings.map { "\($0.kind)@\($0.line!)" }.sorted()
            == ["dropped-stop@3", "dropped-stop@5", "missing-stop@5", "repaired-stop@1"])
        #expect(out.allSatisfy { $0.stop == nil || $0.stop! >= $0.start })
    }

    @Test func overlapsUseHalfOpenIntervals() {
        let input = [
            programme("20000101000000", "20000101000000", "Zero length", line: 1),
            programme("20000101000001", "20000101010000", "One hour long", line: 2),
            programme("20000101003000", "20000101003000", "Zero length in the middle", line: 3),
            programme("20000101010000", "20000101020000", "Adjacent", line: 4),
            programme("20000101013000", "20000101020000", "Overlapping", line: 5),
        ]
        let (_, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(warnings.map { "\($0.kind)@\($0.line!)" } == ["overlap@3", "overlap@5"])
        #expect(warnings.first?.message.contains("c 2000-01-01T00:00:01Z 'One hour long' (until 2000-01-01T01:00:00Z)") == true)
    }

    @Test func clumpMembersDoNotOverlapEachOther() {
        let input = [
            programme("20250101010000", "20250101020000", "A", clump: (0, 2), line: 1),
            programme("20250101010000", "20250101020000", "B", clump: (1, 2), line: 2),
            programme("20250101013000", "20250101020000", "C", line: 3),
        ]
        let (out, warnings) = ScheduleNormaliser.normalise(input, channel: "c")
        #expect(out.count == 3)
        #expect(warnings.map { "\($0.kind)@\($0.line!)" } == ["overlap@3"])
    }

    @Test func emptyAndSingle() {
        #expect(ScheduleNormaliser.normalise([XMLTVProgramme](), channel: "c").programmes.isEmpty)
        let one = ScheduleNormaliser.normalise([programme("20250101010000", "20250101020000", line: 1)], channel: "c")
        #expect(one.programmes.count == 1 && one.warnings.isEmpty)
    }
}
