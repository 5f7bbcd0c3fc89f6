import Testing
import XMLTV
@testable import Merge
@testable import XMLTVImport

/// The staging file's records (guides not grouped by channel): every field of a programme comes
/// back exactly, and a damaged record is an error, never a crash or a wrong programme.
@Suite struct StagingCodecTests {
    /// A programme with every field set to something other than its default.
    static func everything() -> XMLTVProgramme {
        var p = XMLTVProgramme(channel: "bbc1.uk/ü", start: -86_400, stop: 1_800_000_000, clumpIndex: 1, clumpCount: 2,
                               titles: [LocalizedText(text: "Title \"quoted\"\n", lang: "en"), LocalizedText(text: "Titel")], line: 42)
        p.subTitles = [LocalizedText(text: "Sub", lang: "de")]
        p.descriptions = [LocalizedText(text: String(repeating: "Long 🎬 text. ", count: 20), lang: "fr")]
        p.credits = [Credit(role: "actor", name: "A. Actor", character: "Hero", isGuest: true), Credit(role: "director", name: "D")]
        p.date = "2024"
        p.categories = [LocalizedText(text: "Film", lang: "en")]
        p.keywords = [LocalizedText(text: "keyword")]
        p.language = "en"
        p.originalLanguage = "ja"
        p.length = 5400
        p.icons = [Icon(src: "https://example.org/a.png", width: 100, height: -1), Icon(src: "b.png")]
        p.urls = ["https://example.org/"]
        p.countries = ["GB", "IE"]
        p.episodeNumbers = [EpisodeNumber(system: "xmltv_ns", raw: "2/5.3/10.0/2"), EpisodeNumber(system: "dd_progid", raw: "EP1")]
        p.video = ["present": "yes", "aspect": "16:9", "quality": "HDTV", "colour": "no"]
        p.audio = ["stereo": "dolby digital", "present": "yes"]
        p.previouslyShown = true
        p.previouslyShownStart = "20240101000000 +0000"
        p.previouslyShownChannel = "bbc2.uk"
        p.premiere = true
        p.lastChance = true
        p.isNew = true
        p.subtitles = ["teletext", ""]
        p.ratings = [Rating(system: "BBFC", value: "15"), Rating(value: "PG")]
        p.starRatings = [Rating(value: "3/5")]
        p.sourceHash = 0xFEDC_BA98_7654_3210
        return p
    }

    static func encoded(_ p: XMLTVProgramme) -> [UInt8] {
        var w = ByteWriter()
        StagingCodec.encode(p, into: &w)
        return w.bytes
    }

    /// When XMLTVProgramme gains a field, this names it: set it in `everything()`, and the round
    /// trip below then fails until StagingCodec carries it.
    @Test func theSampleSetsEveryField() {
        let plain = Mirror(reflecting: XMLTVProgramme(channel: "", start: 0))
        let sample = Mirror(reflecting: Self.everything())
        for (a, b) in zip(plain.children, sample.children) {
            #expect(String(describing: a.value) != String(describing: b.value), "field \(a.label ?? "?") keeps its default in the sample")
        }
    }

    @Test func everyFieldRoundTrips() throws {
        let p = Self.everything()
        let bytes = Self.encoded(p)
        let back = try bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            defer { #expect(r.isAtEnd) }
            return try StagingCodec.decode(&r)
        }
        #expect(back == p)
        let minimal = XMLTVProgramme(channel: "", start: Int64.min)
        #expect(try Self.encoded(minimal).withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return try StagingCodec.decode(&r)
        } == minimal)
    }

    @Test func aCutRecordIsAnError() {
        let bytes = Self.encoded(Self.everything())
        for cut in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: ByteReader.Truncated.self) {
                try Array(bytes[..<cut]).withUnsafeBytes { raw in
                    var r = ByteReader(raw)
                    _ = try StagingCodec.decode(&r)
                }
            }
        }
    }
}
