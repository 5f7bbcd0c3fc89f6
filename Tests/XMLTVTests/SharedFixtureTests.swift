import Foundation
import TestSupport
import Testing
import XMLTV

/// The real-world files in ../shared/fixtures/xmltv (see its MANIFEST.tsv).
@Suite(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"))
struct SharedFixtureTests {
    let directory = URL(fileURLWithPath: Shared.fixtures)

    func path(_ name: String) -> String { Shared.fixture(name) }

    /// Groups by channel and normalises each, as the importer will.
    func normalised(_ result: ReadResult) -> (programmes: [String: [XMLTVProgramme]], warnings: [XMLTVWarning]) {
        var byChannel: [String: [XMLTVProgramme]] = [:]
        for p in result.programmes { byChannel[p.channel, default: []].append(p) }
        var out: [String: [XMLTVProgramme]] = [:]
        var warnings: [XMLTVWarning] = []
        for (channel, list) in byChannel {
            let n = ScheduleNormaliser.normalise(list, channel: channel)
            out[channel] = n.programmes
            warnings += n.warnings
        }
        return (out, warnings)
    }

    @Test func everyFileReadsWithoutCrashing() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let xml = names.filter { $0.hasSuffix(".xml") || $0.hasSuffix(".gz") || $0.hasSuffix(".expected") }
        #expect(xml.count > 40)
        for name in xml {
            let file = directory.appendingPathComponent(name).path
            do {
                let result = try readAll(file)
                _ = normalised(result)
                #expect(name != "ektotv_broken.xml", "broken file read without error")
            } catch let error as XMLTVError {
                #expect(name == "ektotv_broken.xml", "\(error)")
            }
        }
    }

    @Test func brokenFileNamesFileAndLine() throws {
        let file = path("ektotv_broken.xml")
        let error = try #require(readError(file))
        #expect(error.file == file)
        #expect(error.line == 9)
        #expect(error.description.hasPrefix("\(file):9: "))
    }

    @Test func emptyDocumentsGiveNothing() throws {
        let empty = path("xmltv_t_empty.xml")
        let channelsOnly = path("ektotv_channel-only.xml")
        let e = try readAll(empty)
        #expect(e.channels.isEmpty && e.programmes.isEmpty)
        let c = try readAll(channelsOnly)
        #expect(c.channels.map(\.id) == ["1"] && c.programmes.isEmpty)
    }

    @Test func latin1Fixtures() throws {
        let livre = path("xmltv_t_test_livre.xml")
        let result = try readAll(livre)
        #expect(result.programmes.first?.titles.first?.text.contains("£") == true)
    }

    @Test func gzipFixtures() throws {
        let gz = path("iptvorg_test_gzip_guide.xml.gz")
        let big = path("iptvorg_epg.iptvx.one.xml.gz")
        let plain = path("iptvorg_epg.iptvx.one.xml")
        #expect(try XMLTVReader(path: gz).isGzip)
        let small = try readAll(gz)
        #expect(small.channels.contains { $0.id == "Channel4.us@HD" })
        let a = try readAll(big), b = try readAll(plain)
        #expect(a.programmes.count > 100 && abs(a.programmes.count - b.programmes.count) < a.programmes.count / 10)
    }

    @Test func whitespaceCopiesAreExactDuplicates() throws {
        let file = path("xmltv_t_whitespace.xml")
        let result = try readAll(file)
        #expect(result.programmes.count == 5)
        let (out, warnings) = ScheduleNormaliser.normalise(result.programmes, channel: "foo.tv")
        #expect(out.count == 1)
        #expect(out.first?.titles == [LocalizedText(text: "T")])
        #expect(out.first?.descriptions == [LocalizedText(text: "Blah.")])
        #expect(out.first?.start == utc("20010828230500"))
        #expect(warnings.map(\.kind).sorted() == ["duplicate", "duplicate", "duplicate", "duplicate", "missing-stop"])
    }

    @Test func overlapFixtureLikeTvSort() throws {
        let file = path("xmltv_t_overlap.xml")
        let n = normalised(try readAll(file))
        // Same-start pairs tv_sort calls overlaps (A/C, G/H, J/K) are duplicates of one identity here;
        // the zero-length programme inside the hour is reported like tv_sort does.
        let overlaps = n.warnings.filter { $0.kind == "overlap" }
        #expect(overlaps.count == 1)
        #expect(overlaps.first?.channel == "a")
        #expect(overlaps.first?.message.contains("a 2000-01-01T00:00:00Z 'One hour long' (until 2000-01-01T01:00:00Z)") == true)
        #expect(overlaps.first?.message.contains("a 2000-01-01T00:30:00Z 'Zero length in the middle' (until 2000-01-01T00:30:00Z)") == true)
        #expect(n.warnings.filter { $0.kind == "conflicting-duplicate" }.count == 1 + 3 + 1 + 1 + 1)
    }

    @Test func clumpFixtures() throws {
        let file = path("xmltv_t_clump.xml")
        let three = path("xmltv_t_clump_extract_1.xml")
        let result = try readAll(file)
        #expect(result.programmes.map(\.clumpIndex) == [0, 1])
        let n = normalised(result)
        #expect(n.programmes.values.reduce(0) { $0 + $1.count } == 2)
        #expect(!n.warnings.contains { $0.kind == "overlap" || $0.kind.hasSuffix("duplicate") })
        let r3 = try readAll(three)
        #expect(r3.programmes.map(\.clumpCount) == [3, 3, 3])
    }

    @Test func kitchenSinkFixture() throws {
        let file = path("xmltv_t_test.xml")
        let result = try readAll(file)
        let numbers = result.programmes.flatMap(\.episodeNumbers).filter { $0.system == "xmltv_ns" }
        #expect(numbers.contains { $0.raw == "2 . 9 . 0/1" && $0.season == 3 && $0.episode == 10 && $0.part == 1 })
        #expect(result.programmes.contains { !$0.credits.isEmpty })
        #expect(result.channels.contains { $0.displayNames.count == 2 })
    }

    @Test func unknownElementsAreIgnored() throws {
        let base = path("jellyfin_livetv_etag-base.xml")
        let extra = path("jellyfin_livetv_etag-unknown-field.xml")
        let reordered = path("jellyfin_livetv_etag-reordered.xml")
        let title = path("jellyfin_livetv_etag-title-change.xml")
        func strip(_ r: ReadResult) -> [XMLTVProgramme] { r.programmes.map { var p = $0; p.line = 0; p.sourceHash = nil; return p } }
        let a = strip(try readAll(base))
        #expect(a == strip(try readAll(extra)))
        #expect(a == strip(try readAll(reordered)))
        #expect(a != strip(try readAll(title)))
    }

    @Test func noTitleAndEmptyAttributes() throws {
        let file = path("jellyfin_livetv_notitle.xml")
        let result = try readAll(file)
        #expect(result.programmes.count == 1)
        #expect(result.programmes.first?.icons == [Icon(src: "https://domain.tld/image.png")])
        #expect(result.programmes.first?.date == nil)
        #expect(result.warnings.contains { $0.kind == "missing-title" && $0.line == 2 })
    }

    @Test func freeviewBeforeDSTEnd() throws {
        let file = path("freeview_ie_2025-10-25T1606.xml")
        let result = try readAll(file)
        #expect(result.channels.count == 9)
        #expect(result.programmes.count == 2072)
        let n = normalised(result)
        #expect(n.programmes["VirginMediaThree.ie"] == nil)
        #expect(n.programmes.count == 8)
        #expect(n.programmes.values.reduce(0) { $0 + $1.count } == 2072 - 188)
        #expect(n.warnings.filter { $0.kind == "duplicate" }.count == 188)
        #expect(!n.warnings.contains { $0.kind == "conflicting-duplicate" })
        for list in n.programmes.values {
            #expect(list.allSatisfy { $0.stop == nil || $0.stop! >= $0.start })
            #expect(zip(list, list.dropFirst()).allSatisfy { $0.start < $1.start })
        }
        // 16 programmes start in summer time and stop in winter time
        let straddling = result.programmes.filter { $0.start < utc("20251026010000") && ($0.stop ?? 0) > utc("20251026010000") }
        #expect(straddling.count >= 8)
        #expect(result.programmes.flatMap(\.episodeNumbers).contains { $0.raw == "01.02" && $0.season == 2 && $0.episode == 3 })
    }

    @Test func freeviewAfterDSTEnd() throws {
        let file = path("freeview_ie_2025-10-26T0027.xml")
        let result = try readAll(file)
        #expect(result.channels.count == 9)
        #expect(result.programmes.count == 2045)
        let n = normalised(result)
        #expect(n.programmes.values.reduce(0) { $0 + $1.count } == 2045 - 51)
        #expect(n.warnings.filter { $0.kind == "duplicate" }.count == 51)
    }
}
