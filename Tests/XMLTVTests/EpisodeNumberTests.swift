import Testing
import XMLTV

@Suite struct EpisodeNumberTests {
    @Test func xmltvNSWithPart() {
        let e = EpisodeNumber(system: "xmltv_ns", raw: "2 . 9 . 0/1")
        #expect(e.season == 3 && e.episode == 10 && e.part == 1 && e.partCount == 1)
        #expect(e.seasonCount == nil && e.episodeCount == nil)
    }

    @Test func xmltvNSWithEpisodeCount() {
        let e = EpisodeNumber(system: "xmltv_ns", raw: "18.50/30.")
        #expect(e.season == 19 && e.episode == 51 && e.episodeCount == 30 && e.part == nil)
        let f = EpisodeNumber(system: "xmltv_ns", raw: "3.13/24.")
        #expect(f.season == 4 && f.episode == 14 && f.episodeCount == 24)
    }

    @Test func freeviewTwoFields() {
        let e = EpisodeNumber(system: "xmltv_ns", raw: "01.02")
        #expect(e.season == 2 && e.episode == 3 && e.part == nil)
        let zero = EpisodeNumber(system: "xmltv_ns", raw: "00.00")
        #expect(zero.season == 1 && zero.episode == 1)
    }

    @Test func emptyFieldsAndSeasonCount() {
        let e = EpisodeNumber(system: "xmltv_ns", raw: "0 . 1 . ")
        #expect(e.season == 1 && e.episode == 2 && e.part == nil)
        let g = EpisodeNumber(system: "xmltv_ns", raw: "1/5 . . ")
        #expect(g.season == 2 && g.seasonCount == 5 && g.episode == nil)
        let bad = EpisodeNumber(system: "xmltv_ns", raw: "x.y.z")
        #expect(bad.season == nil && bad.episode == nil && bad.raw == "x.y.z")
    }

    @Test func onscreen() {
        let e = EpisodeNumber(system: "onscreen", raw: "S04E14")
        #expect(e.season == 4 && e.episode == 14)
        let f = EpisodeNumber(system: "onscreen", raw: "s2 e7")
        #expect(f.season == 2 && f.episode == 7)
    }

    @Test func otherSystemsKeepRawOnly() {
        let e = EpisodeNumber(system: "dd_progid", raw: "EP123456789012")
        #expect(e.season == nil && e.episode == nil && e.raw == "EP123456789012")
    }
}
