import Foundation
import Testing
import XMLTV

@Suite struct ReaderTests {
    static let kitchenSink = Fixture.tv("""
      <channel id="bbc1.uk">
        <display-name lang="en">BBC
           One</display-name>
        <display-name>1</display-name>
        <icon src="http://x/1.png" width="40" height=""/>
        <url>http://bbc.co.uk/</url>
      </channel>
      <!-- a comment between items -->
      <programme start="20250101200000 +0000" stop="20250101210000 +0000" channel="bbc1.uk" clumpidx="1/2">
        <title lang="en">  The
          News </title>
        <title lang="cy">Y Newyddion</title>
        <sub-title>Part   <![CDATA[one]]></sub-title>
        <desc lang="en">
          Line one.
          Line two.   </desc>
        <credits>
          <director>Jane Doe</director>
          <actor role="Herself" guest="yes">Ann <image>http://x/a.jpg</image>Smith</actor>
          <guest>Bob</guest>
          <x-unknown>ignored</x-unknown>
        </credits>
        <date>2024</date>
        <category lang="en">News</category>
        <category lang="en"></category>
        <keyword>politics</keyword>
        <language>en</language>
        <orig-language>fr</orig-language>
        <length units="minutes">60</length>
        <icon src="http://x/p.png"/>
        <url>http://x/p</url>
        <country>GB</country>
        <episode-num system="xmltv_ns">2 . 9 . 0/1</episode-num>
        <episode-num system="onscreen">S04E14</episode-num>
        <video><present>yes</present><colour>yes</colour><aspect>16:9</aspect><quality>HDTV</quality></video>
        <audio><stereo>dolby digital</stereo></audio>
        <previously-shown start="20240101" channel="bbc2.uk"/>
        <premiere>First showing</premiere>
        <last-chance/>
        <new/>
        <subtitles type="teletext"><language>en</language></subtitles>
        <subtitles type="deaf-signed"/>
        <rating system="BBFC"><value>PG</value><icon src="http://x/pg.png"/></rating>
        <star-rating><value>3/5</value></star-rating>
        <x-whatever><title>not a title</title><deep><deeper/></deep></x-whatever>
      </programme>
    """)

    @Test func readsEveryField() throws {
        let result = try readAll(Fixture.write(Self.kitchenSink))
        #expect(result.channels.count == 1 && result.programmes.count == 1)
        let c = try #require(result.channels.first)
        #expect(c.id == "bbc1.uk" && c.line == 3)
        #expect(c.displayNames == [LocalizedText(text: "BBC One", lang: "en"), LocalizedText(text: "1")])
        #expect(c.icons == [Icon(src: "http://x/1.png", width: 40, height: nil)])
        #expect(c.urls == ["http://bbc.co.uk/"])

        let p = try #require(result.programmes.first)
        #expect(p.line == 11 && p.channel == "bbc1.uk")
        #expect(p.start == utc("20250101200000") && p.stop == utc("20250101210000"))
        #expect(p.clumpIndex == 1 && p.clumpCount == 2)
        #expect(p.titles == [LocalizedText(text: "The News", lang: "en"), LocalizedText(text: "Y Newyddion", lang: "cy")])
        #expect(p.subTitles == [LocalizedText(text: "Part one")])
        #expect(p.descriptions == [LocalizedText(text: "Line one.\n      Line two.", lang: "en")])
        #expect(p.credits == [
            Credit(role: "director", name: "Jane Doe"),
            Credit(role: "actor", name: "Ann Smith", character: "Herself", isGuest: true, images: [Image(src: "http://x/a.jpg")]),
            Credit(role: "guest", name: "Bob", isGuest: true),
        ])
        #expect(p.date == "2024")
        #expect(p.categories == [LocalizedText(text: "News", lang: "en")])
        #expect(p.keywords == [LocalizedText(text: "politics")])
        #expect(p.language == "en" && p.originalLanguage == "fr")
        #expect(p.length == 3600)
        #expect(p.icons == [Icon(src: "http://x/p.png")] && p.urls == ["http://x/p"] && p.countries == ["GB"])
        #expect(p.episodeNumbers.count == 2)
        #expect(p.episodeNumbers.first?.season == 3 && p.episodeNumbers.last?.episode == 14)
        #expect(p.video == ["present": "yes", "colour": "yes", "aspect": "16:9", "quality": "HDTV"])
        #expect(p.audio == ["stereo": "dolby digital"])
        #expect(p.previouslyShown && p.previouslyShownStart == "20240101" && p.previouslyShownChannel == "bbc2.uk")
        #expect(p.premiere && p.lastChance && p.isNew)
        #expect(p.subtitles == ["teletext", "deaf-signed"])
        #expect(p.ratings == [Rating(system: "BBFC", value: "PG")])
        #expect(p.starRatings == [Rating(value: "3/5")])
        #expect(result.warnings.isEmpty)
    }

    @Test func itemsComeInDocumentOrderWithLines() throws {
        let text = Fixture.tv("""
          <programme start="20250101000000" channel="a"><title>1</title></programme>
          <channel id="a"><display-name>A</display-name></channel>
          <programme start="20250101010000" channel="a"><title>2</title></programme>
        """)
        let reader = try XMLTVReader(path: Fixture.write(text))
        var kinds: [String] = []
        while let item = try reader.next() {
            switch item {
            case .channel(let c): kinds.append("c\(c.line)")
            case .programme(let p): kinds.append("p\(p.line)")
            }
        }
        #expect(kinds == ["p3", "c4", "p5"])
        #expect(try reader.next() == nil)
        #expect(reader.bytesRead == Int64(text.utf8.count))
        #expect(reader.warnings.map(\.kind) == ["timezone"])
    }

    @Test func channelFilterSkipsWithoutBuilding() throws {
        let text = Fixture.tv("""
          <channel id="a"/><channel id="b"/><channel id="c"/>
          <programme start="bad" channel="b"><title>bad time but filtered</title></programme>
          <programme start="20250101000000" channel="a"><title>A</title></programme>
          <programme start="20250101000000" channel="c"><title>C</title></programme>
        """)
        let path = Fixture.write(text)
        let include = try readAll(path, options: .init(includeChannels: ["a", "b"], excludeChannels: ["b"]))
        #expect(include.channels.map(\.id) == ["a"])
        #expect(include.programmes.map(\.channel) == ["a"])
        #expect(!include.warnings.contains { $0.kind == "bad-time" })
        let exclude = try readAll(path, options: .init(excludeChannels: ["a"]))
        #expect(exclude.channels.map(\.id) == ["b", "c"])
        #expect(exclude.programmes.map(\.channel) == ["c"])
        #expect(exclude.warnings.contains { $0.kind == "bad-time" && $0.line == 4 && $0.channel == "b" })
    }

    @Test func badTimesAndMissingParts() throws {
        let text = Fixture.tv("""
          <programme start="20251301000000" channel="a"><title>bad start</title></programme>
          <programme channel="a"><title>no start</title></programme>
          <programme start="20250101000000 +0100" stop="2025xx" channel="a"><title>bad stop</title></programme>
          <programme start="20250101000000 +0100" channel="a" clumpidx="3/2"></programme>
          <programme start="20250101000000 +0100"><title>no channel</title></programme>
        """)
        let result = try readAll(Fixture.write(text))
        #expect(result.programmes.count == 2)
        #expect(result.programmes[0].stop == nil && result.programmes[0].titles.first?.text == "bad stop")
        #expect(result.programmes[1].clumpIndex == 0 && result.programmes[1].clumpCount == 1)
        let kinds = result.warnings.map { "\($0.kind)@\($0.line ?? 0)" }
        #expect(kinds == ["bad-time@3", "bad-time@4", "bad-time@5", "bad-clumpidx@6", "missing-title@6", "missing-channel@7"])
    }

    @Test func timeOffsetOverrideReplacesZone() throws {
        let text = Fixture.tv("""
          <programme start="20250101120000 +0000" stop="20250101130000" channel="a"><title>x</title></programme>
        """)
        let result = try readAll(Fixture.write(text), options: .init(timeOffsetOverride: 3600))
        #expect(result.programmes.first?.start == utc("20250101110000"))
        #expect(result.programmes.first?.stop == utc("20250101120000"))
        #expect(result.warnings.isEmpty)
    }

    @Test func whitespaceIsCollapsedInTitlesAndTrimmedInDescriptions() throws {
        let text = Fixture.tv("""
          <programme start="20010829000500 BST" channel="foo.tv"><title>T</title><desc>  Blah.
            </desc></programme>
          <programme start="20010829000500 BST" channel="foo.tv"><title>    T  </title><desc>  Blah.    </desc></programme>
          <programme start="20010829000500 BST" channel="foo.tv"><title>\tT\n\n  U </title><desc>\nBlah.\r\n  more\n</desc></programme>
        """)
        let result = try readAll(Fixture.write(text))
        #expect(result.programmes.map { $0.titles[0].text } == ["T", "T", "T U"])
        #expect(result.programmes.map { $0.descriptions[0].text } == ["Blah.", "Blah.", "Blah.\n  more"])
    }

    @Test func latin1IsDecoded() throws {
        var bytes = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<tv><programme start=\"20250101000000\" channel=\"a\"><title>".utf8)
        bytes.append(contentsOf: [0xA3, 0x31, 0x20, 0x43, 0x61, 0x66, 0xE9])  // "£1 Café" in Latin-1
        bytes.append(Data("</title></programme></tv>".utf8))
        let result = try readAll(Fixture.write(bytes, name: "latin1.xml"))
        #expect(result.programmes.first?.titles.first?.text == "£1 Café")
    }

    @Test func bomAndNoDeclaration() throws {
        var bytes = Data([0xEF, 0xBB, 0xBF])
        bytes.append(Data("<tv><channel id='é'><display-name>Ü</display-name></channel></tv>".utf8))
        let result = try readAll(Fixture.write(bytes, name: "bom.xml"))
        #expect(result.channels.first?.id == "é" && result.channels.first?.displayNames.first?.text == "Ü")
    }

    @Test func gzipIsDetectedByMagicBytesNotName() throws {
        let gz = Fixture.gzip(Data(Self.kitchenSink.utf8))
        let path = Fixture.write(gz, name: "plain-looking.xml")
        let reader = try XMLTVReader(path: path)
        #expect(reader.isGzip)
        let result = try readAll(path)
        #expect(result.programmes.count == 1 && result.channels.count == 1)
        let plain = try XMLTVReader(path: Fixture.write(Self.kitchenSink, name: "guide.xml.gz"))
        #expect(!plain.isGzip)
    }

    @Test(arguments: [20, 9, 4])
    func truncatedGzipIsAnError(cut: Int) throws {
        var big = ""
        for i in 0..<400 {
            big += "<programme start=\"2025010100\(String(format: "%02d", i % 60))00\" channel=\"c\(i)\"><title>Programme \(i)</title></programme>\n"
        }
        let gz = Fixture.gzip(Data(Fixture.tv(big).utf8))
        let path = Fixture.write(gz.prefix(gz.count - cut), name: "cut.xml.gz")
        let error = readError(path)
        #expect(error != nil)
        #expect(error?.file == path)
    }

    @Test func truncatedXMLIsAnErrorWithLine() throws {
        let text = Fixture.tv("""
          <programme start="20250101000000" channel="a"><title>1</title></programme>
          <programme start="20250101010000" channel="a"><title>2</title></programme>
        """)
        let cut = String(text.prefix(text.count - 20))
        let path = Fixture.write(cut)
        let reader = try XMLTVReader(path: path)
        #expect(throws: XMLTVError.self) { while try reader.next() != nil {} }
        // once failed, the reader keeps failing
        #expect(throws: XMLTVError.self) { _ = try reader.next() }
        let error = try #require(readError(path))
        #expect(error.line != nil)
        #expect(error.description.hasPrefix("\(path):"))

        let noClose = Fixture.write("<tv><channel id='a'/>")
        #expect(readError(noClose) != nil)
    }

    @Test func malformedXMLNamesFileAndLine() throws {
        let path = Fixture.write("<tv>\n<programme start='20250101' channel='a'>\n<title>x\n</programme>\n</tv>\n")
        let error = try #require(readError(path))
        #expect(error.file == path && error.line == 4)
    }

    @Test func wrongRootEmptyFileAndMissingFile() throws {
        #expect(readError(Fixture.write("<html></html>")) != nil)
        #expect(readError(Fixture.write("")) != nil)
        #expect(throws: XMLTVError.self) { _ = try XMLTVReader(path: "/nonexistent/guide.xml") }
        let empty = try readAll(Fixture.write("<?xml version='1.0'?><tv/>"))
        #expect(empty.channels.isEmpty && empty.programmes.isEmpty)
    }

    @Test func externalEntitiesAreNeverLoaded() throws {
        let text = """
        <?xml version="1.0"?>
        <!DOCTYPE tv SYSTEM "http://example.invalid/xmltv.dtd" [
          <!ENTITY x SYSTEM "file:///etc/passwd">
        ]>
        <tv><programme start="20250101000000" channel="a"><title>a&x;b</title><desc>&x;</desc></programme></tv>
        """
        let path = Fixture.write(text)
        let result: ReadResult
        do { result = try readAll(path) } catch { return }  // refusing the file is fine too
        let values = result.programmes.flatMap { $0.titles + $0.descriptions }.map(\.text)
        #expect(!values.contains { $0.contains("root:") })
    }

    /// References in attribute values are replaced, as in element text: an icon URL with
    /// "&amp;" keeps its query string, a numeric reference becomes its character.
    @Test func referencesInAttributesAreReplaced() throws {
        let body = """
        <channel id="news&amp;weather.example"><icon src="https://img.example/a.png?w=1&amp;h=2"/></channel>
        <programme start="20250101000000 +0000" channel="news&#38;weather.example">
          <title lang="&#x65;n">Caf&#233;</title>
          <credits><actor role="Tom &amp; Jerry">A</actor></credits>
        </programme>
        """
        let result = try readAll(Fixture.write(Fixture.tv(body)))
        #expect(result.channels.map(\.id) == ["news&weather.example"])
        #expect(result.channels.first?.icons.first?.src == "https://img.example/a.png?w=1&h=2")
        let p = try #require(result.programmes.first)
        #expect(p.channel == "news&weather.example")
        #expect(p.titles == [LocalizedText(text: "Café", lang: "en")])
        #expect(p.credits.first?.character == "Tom & Jerry")
    }

    /// The missing-title warning agrees with what is decoded: a title's own text counts, text of
    /// an element nested in it does not.
    @Test func missingTitleWarningMatchesTheDecodedTitle() throws {
        let body = """
        <programme start="20250101000000 +0000" channel="c"><title><x/>Foo</title></programme>
        <programme start="20250101010000 +0000" channel="c"><title><x>Bar</x> </title></programme>
        """
        let result = try readAll(Fixture.write(Fixture.tv(body)))
        #expect(result.programmes.map { $0.titles.map(\.text) } == [["Foo"], []])
        #expect(result.warnings.filter { $0.kind == "missing-title" }.map(\.line) == [result.programmes[1].line])
    }

    /// A DTD's attribute defaults are not the file's data: a programme reads the same with or
    /// without one.
    @Test func dtdAttributeDefaultsAreNotData() throws {
        let text = """
        <?xml version="1.0"?>
        <!DOCTYPE tv [<!ATTLIST title lang CDATA "xx">]>
        <tv><programme start="20250101000000 +0000" channel="c"><title>T</title></programme></tv>
        """
        let result = try readAll(Fixture.write(text))
        #expect(result.programmes.first?.titles == [LocalizedText(text: "T")])
    }

    /// Elements nested past any real guide's depth are refused with a message, not a crash.
    @Test func absurdNestingIsAnError() throws {
        let deep = String(repeating: "<x>", count: 300) + String(repeating: "</x>", count: 300)
        let path = Fixture.write(Fixture.tv("<programme start=\"20250101000000\" channel=\"c\"><title>T</title>\(deep)</programme>"))
        #expect { _ = try readAll(path) } throws: { ($0 as? XMLTVError)?.message.contains("nested deeper than 256") == true }
    }

    @Test func billionLaughsIsBounded() throws {
        var dtd = "<!ENTITY l0 \"ha\">\n"
        for i in 1...10 { dtd += "<!ENTITY l\(i) \"" + String(repeating: "&l\(i - 1);", count: 10) + "\">\n" }
        let text = "<?xml version=\"1.0\"?>\n<!DOCTYPE tv [\n\(dtd)]>\n<tv><programme start=\"20250101000000\" channel=\"a\"><title>&l10;</title></programme></tv>\n"
        let started = Date()
        let path = Fixture.write(text)
        if let result = try? readAll(path) {
            #expect(result.programmes.allSatisfy { $0.titles.allSatisfy { $0.text.utf8.count < 1_000_000 } })
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func warningsAreCapped() throws {
        var body = ""
        for i in 0..<50 { body += "<programme start=\"bad\(i)\" channel=\"a\"/>\n" }
        let reader = try XMLTVReader(path: Fixture.write(Fixture.tv(body)), options: .init(maxWarnings: 10))
        while try reader.next() != nil {}
        #expect(reader.warnings.count == 10 && reader.suppressedWarningCount == 40)
    }
}
