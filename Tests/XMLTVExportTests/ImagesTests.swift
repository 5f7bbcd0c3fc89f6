import Foundation
import Listings
import ObjectGraph
import TestSupport
import Testing
import XMLTVExport

/// Icons with sizes and DTD 0.6 images on channels, programmes and credits: stored, exported in
/// the DTD's places and round-tripped.
@Suite struct ImagesTests {
    /// Several icons with sizes, images of every kind (one with attributes outside the DTD's
    /// values, which are dropped), a credit's picture and an icon without sizes.
    static let guide = """
        <?xml version="1.0" encoding="UTF-8"?>
        <tv>
          <channel id="one.uk"><display-name>One</display-name>
            <icon src="http://x/one-s.png" width="50" height="40"/><icon src="http://x/one-l.png" width="500"/></channel>
          <channel id="two.uk"><display-name>Two</display-name><icon src="http://x/two.png"/></channel>
          <programme start="20300101060000 +0000" stop="20300101070000 +0000" channel="one.uk">
            <title>Film</title>
            <credits><director>Dee<image type="person" system="tmdb">http://x/dee.jpg</image><url>http://x/dee</url></director>
              <actor role="Hero">Ann <image type="character">http://x/hero.jpg</image><image type="person" size="2">http://x/ann.jpg</image></actor></credits>
            <icon src="http://x/film-p.jpg" width="270" height="360"/><icon src="http://x/film-l.jpg" width="960" height="540"/>
            <rating system="BBFC"><value>PG</value><icon src="http://x/pg.png"/></rating>
            <image type="poster" size="1" orient="P" system="tvdb">http://x/poster1.jpg</image>
            <image type="backdrop" size="3" orient="L">http://x/backdrop.jpg</image>
            <image type="banner" size="9" orient="Q" system="odd">http://x/odd.jpg</image>
            <image>http://x/plain.jpg</image>
          </programme>
          <programme start="20300101070000 +0000" stop="20300101080000 +0000" channel="one.uk">
            <title>Poster only</title><image type="still">http://x/still.jpg</image><image type="poster">http://x/poster2.jpg</image>
          </programme>
          <programme start="20300101060000 +0000" stop="20300101070000 +0000" channel="two.uk">
            <title>Plain</title><icon src="http://x/plain-icon.jpg"/>
          </programme>
        </tv>
        """

    @Test func iconsAndImagesAreStoredWithEveryAttributeTheDTDAllows() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.guide.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let store = try Store(path: dir + "/tv.sqlite", model: TVModel.model())
        try importInto(store, [dir + "/in.xml"])
        try store.read { context in
            let one = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("one.uk")), keys: ["icon", "icons"]))
            #expect(one["icon"].stringValue == "http://x/one-s.png")
            #expect(one["icons"].stringValue == "50\t40\thttp://x/one-s.png\n500\t\thttp://x/one-l.png")
            // One icon without a size: `icon` says it all.
            let two = try #require(try context.first("Channel", where: .compare("xmltvId", .equal, .string("two.uk")), keys: ["icon", "icons"]))
            #expect(two["icon"].stringValue == "http://x/two.png" && two["icons"].isNull)

            let programmes = try context.fetchAll("Programme", orderBy: [SortKey("title")], keys: ["title", "icon", "icons", "images"])
            let film = try #require(programmes.first { $0["title"].stringValue == "Film" })
            #expect(film["icon"].stringValue == "http://x/film-p.jpg")
            #expect(film["icons"].stringValue == "270\t360\thttp://x/film-p.jpg\n960\t540\thttp://x/film-l.jpg")
            #expect(film["images"].stringValue == """
                poster\t1\tP\ttvdb\thttp://x/poster1.jpg
                backdrop\t3\tL\t\thttp://x/backdrop.jpg
                \t\t\todd\thttp://x/odd.jpg
                \t\t\t\thttp://x/plain.jpg
                """)
            // What pages and feeds show: the first icon, else the first poster.
            #expect(ShownImage.programme(icon: film["icon"].stringValue, images: film["images"].stringValue) == "http://x/film-p.jpg")
            let posterOnly = try #require(programmes.first { $0["title"].stringValue == "Poster only" })
            #expect(posterOnly["icon"].isNull)
            #expect(ShownImage.programme(icon: nil, images: posterOnly["images"].stringValue) == "http://x/poster2.jpg")
            #expect(ShownImage.programme(icon: nil, images: "still\t\t\t\thttp://x/s.jpg") == nil)

            let credits = try context.fetchAll("Credit", orderBy: [SortKey("name")], keys: ["name", "images"])
            #expect(credits.map { $0["name"].stringValue ?? "" } == ["Ann", "Dee"])
            #expect(credits[0]["images"].stringValue == "character\t\t\t\thttp://x/hero.jpg\nperson\t2\t\t\thttp://x/ann.jpg")
            #expect(credits[1]["images"].stringValue == "person\t\t\ttmdb\thttp://x/dee.jpg")
        }
    }

    @Test(.enabled(if: validatorsPresent, "needs xmllint, tv_validate_file and the XMLTV DTD (scripts/install-deps: xmltv-util)"))
    func theExportWritesThemInTheDTDsPlacesAndRoundTripsByteForByte() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.guide.write(toFile: dir + "/in.xml", atomically: true, encoding: .utf8)
        let first = try Store(path: dir + "/first.sqlite", model: TVModel.model())
        try importInto(first, [dir + "/in.xml"])
        _ = try XMLTVExporter(store: first).export(to: dir + "/out.xml")
        let text = try String(contentsOfFile: dir + "/out.xml", encoding: .utf8)
        #expect(text.contains("""
                <display-name>One</display-name>
                <icon src="http://x/one-s.png" width="50" height="40"/>
                <icon src="http://x/one-l.png" width="500"/>
              </channel>
            """))
        #expect(text.contains("<icon src=\"http://x/two.png\"/>"))
        #expect(text.contains("""
                  <director>Dee<image type="person" system="tmdb">http://x/dee.jpg</image></director>
                  <actor role="Hero">Ann<image type="character">http://x/hero.jpg</image><image type="person" size="2">http://x/ann.jpg</image></actor>
            """))
        #expect(text.contains("""
                <icon src="http://x/film-p.jpg" width="270" height="360"/>
                <icon src="http://x/film-l.jpg" width="960" height="540"/>
            """))
        // Images come last, after the ratings, as the DTD orders a programme's children.
        #expect(text.contains("""
                <rating system="BBFC"><value>PG</value></rating>
                <image type="poster" size="1" orient="P" system="tvdb">http://x/poster1.jpg</image>
                <image type="backdrop" size="3" orient="L">http://x/backdrop.jpg</image>
                <image system="odd">http://x/odd.jpg</image>
                <image>http://x/plain.jpg</image>
              </programme>
            """))
        try expectValid(dir + "/out.xml")

        let second = try Store(path: dir + "/second.sqlite", model: TVModel.model())
        try importInto(second, [dir + "/out.xml"])
        _ = try XMLTVExporter(store: second).export(to: dir + "/again.xml")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/again.xml")) == Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml")))
    }

    /// The shared fixtures with images (XMLTV's own test.xml, Jellyfin's custom.xml, the DTD's
    /// example): every icon and image survives, the export is valid and round-trips.
    @Test(.enabled(if: validatorsPresent && FileManager.default.fileExists(atPath: sharedFixtures + "/MANIFEST.tsv"),
                   "needs ../shared/fixtures/xmltv and the XMLTV validators (scripts/install-deps: xmltv-util)"))
    func sharedFixturesKeepEveryImage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fixtures = ["jellyfin_xmltv_custom.xml", "ektotv_example.xml", "xmltv_t_test.xml"]
        let first = try Store(path: dir + "/first.sqlite", model: TVModel.model())
        for fixture in fixtures { try importInto(first, [sharedFixtures + "/" + fixture], source: fixture) }
        _ = try XMLTVExporter(store: first).export(to: dir + "/out.xml")
        let text = try String(contentsOfFile: dir + "/out.xml", encoding: .utf8)
        for icon in ["<icon src=\"p8680420_b_v3_bc.jpg\" width=\"270\" height=\"360\"/>", "<icon src=\"p8680420_b_s2_ad.jpg\" width=\"1400\" height=\"1400\"/>",
                     "<icon src=\"s10108_dark_360w_270h.png\" width=\"360\" height=\"270\"/>",
                     "<icon src=\"https://example.com/channel_one_icon.jpg\" width=\"100\" height=\"100\"/>",
                     "<image type=\"poster\" size=\"2\" orient=\"P\" system=\"tmdb\">https://tmdb.com/programme_one_poster_2.jpg</image>",
                     "<image type=\"backdrop\" size=\"3\" orient=\"L\" system=\"tmdb\">https://tmdb.com/programme_one_backdrop_3.jpg</image>",
                     "<image type=\"poster\" size=\"2\" orient=\"L\" system=\"myapp\">https://www.example.com/xxxx.jpg</image>",
                     "Daya Vaidya<image type=\"person\">https://example.com/xxx.jpg</image></actor>"] {
            #expect(text.contains(icon), "missing \(icon)")
        }
        try expectValid(dir + "/out.xml", sourceIDs: true)
        let second = try Store(path: dir + "/second.sqlite", model: TVModel.model())
        try importInto(second, [dir + "/out.xml"])
        _ = try XMLTVExporter(store: second).export(to: dir + "/again.xml")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/again.xml")) == Data(contentsOf: URL(fileURLWithPath: dir + "/out.xml")))
    }
}
