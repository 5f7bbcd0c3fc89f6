import Foundation
import Primitives
import Testing
import XMLTV

/// How the reader gets its bytes: opened once, gzip inflated by the reader (every member), values
/// in messages bounded.
@Suite struct InputTests {
    /// A guide of `count` programmes on one channel (big enough to span several gzip blocks).
    static func guide(_ count: Int = 200) -> Data {
        var body = "<channel id=\"a\"><display-name>A</display-name></channel>\n"
        for i in 0..<count {
            let start = String(format: "202501%02d%02d%02d00 +0000", 1 + i / 96, i / 4 % 24, i % 4 * 15)
            body += "<programme start=\"\(start)\" channel=\"a\"><title>Programme \(i)</title></programme>\n"
        }
        return Data(Fixture.tv(body).utf8)
    }

    @Test func everyMemberOfAMultiMemberGzipIsRead() throws {
        let xml = Self.guide()
        var gz = Data()
        // Cut anywhere, even inside a tag: the members are one stream.
        for part in [xml.prefix(1000), xml.dropFirst(1000).prefix(3333), xml.dropFirst(4333)] {
            gz.append(Fixture.gzip(Data(part)))
        }
        let path = Fixture.write(gz, name: "multi.xml.gz")
        let result = try readAll(path)
        #expect(result.programmes.count == 200)
        #expect(result.warnings.map(\.kind) == [])
        let reader = try XMLTVReader(path: path)
        while try reader.next() != nil {}
        #expect(reader.bytesRead == Int64(xml.count))
    }

    /// libxml2 alone says "Extra content at the end of the document" for all three.
    @Test(arguments: [("empty.xml", Data()), ("blank.xml", Data("  \n\t\n".utf8)), ("empty.xml.gz", Fixture.gzip(Data()))])
    func anEmptyFileSaysSo(name: String, bytes: Data) throws {
        let path = Fixture.write(bytes, name: name)
        do {
            _ = try readAll(path)
            Issue.record("\(name) was read without an error")
        } catch {
            let error = "\(error)"
            #expect(error.contains(name), "\(error)")
            #expect(error.contains(bytes.count == 0 || name.hasSuffix(".gz") ? "the file is empty" : "only whitespace"), "\(error)")
            #expect(name.hasSuffix(".gz") == error.contains("gzip"), "\(error)")
        }
    }

    @Test func anEmptyMemberIsFine() throws {
        var gz = Fixture.gzip(Data())
        gz.append(Fixture.gzip(Self.guide(3)))
        #expect(try readAll(Fixture.write(gz, name: "empty-first.xml.gz")).programmes.count == 3)
    }

    /// Like `gzip -d`: zero padding after the last member is ignored silently, anything else with
    /// a warning ("decompression OK, trailing garbage ignored"); the document is still complete.
    @Test func trailingZerosAreIgnoredAndTrailingGarbageWarned() throws {
        var padded = Fixture.gzip(Self.guide(3))
        padded.append(Data(repeating: 0, count: 70_000))
        let quiet = try readAll(Fixture.write(padded, name: "padded.xml.gz"))
        #expect(quiet.programmes.count == 3 && quiet.warnings.isEmpty)

        for garbage in [Data("garbage\n".utf8), Data([0, 0, 0, 7]), Data([0x1f, 0x00, 0x01])] {
            var gz = Fixture.gzip(Self.guide(3))
            gz.append(garbage)
            let result = try readAll(Fixture.write(gz, name: "garbage.xml.gz"))
            #expect(result.programmes.count == 3)
            #expect(result.warnings.map(\.kind) == ["gzip-trailing-garbage"], "\(Array(garbage))")
        }
    }

    @Test func aTruncatedOrCorruptMemberIsAnError() throws {
        let xml = Self.guide()
        let first = Fixture.gzip(Data(xml.prefix(2000))), second = Fixture.gzip(Data(xml.dropFirst(2000)))
        // The second member cut in its data, in its trailer, and after its magic bytes.
        for cut in [second.count / 2, second.count - 3, 2] {
            let path = Fixture.write(first + second.prefix(cut), name: "cut.xml.gz")
            let error = try #require(readError(path), "cut at \(cut)")
            #expect(error.file == path)
            #expect(error.message.contains("gzip data is truncated"), "\(error)")
        }
        // A lone first magic byte after a member: gzip says "unexpected end of file".
        let half = try #require(readError(Fixture.write(Fixture.gzip(Self.guide(3)) + Data([0x1f]), name: "half.xml.gz")))
        #expect(half.message.contains("truncated"), "\(half)")

        var corrupt = Fixture.gzip(xml)
        corrupt[corrupt.count / 2] ^= 0xff
        corrupt[corrupt.count / 2 + 1] ^= 0x55
        let error = try #require(readError(Fixture.write(corrupt, name: "corrupt.xml.gz")))
        #expect(error.message.contains("gzip") || error.line != nil, "\(error)")
    }

    @Test func aTruncatedSingleMemberNamesTheCause() throws {
        let gz = Fixture.gzip(Self.guide())
        let error = try #require(readError(Fixture.write(gz.prefix(gz.count - 4), name: "cut.xml.gz")))
        #expect(error.message == "gzip data is truncated (the file ends inside a compressed member)")
    }

    @Test(arguments: [false, true])
    func aNamedPipeIsReadOnce(gzip: Bool) throws {
        let path = Fixture.directory.appendingPathComponent("\(UUID().uuidString).fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let bytes = gzip ? Fixture.gzip(Self.guide()) : Self.guide()
        // The writer blocks until the reader opens the pipe; it must open it only once.
        let writer = Thread {
            let fd = open(path, O_WRONLY)
            guard fd >= 0 else { return }
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let reader = try XMLTVReader(path: path)
        #expect(reader.isGzip == gzip)
        var count = 0
        while let item = try reader.next() {
            if case .programme = item { count += 1 }
        }
        #expect(count == 200)
    }

    @Test func aDirectoryOrAMissingFileIsAnErrorNamingIt() throws {
        let missing = "/nonexistent/guide.xml"
        #expect(throws: XMLTVError.self) { _ = try XMLTVReader(path: missing) }
        do {
            _ = try XMLTVReader(path: Fixture.directory.path)
            Issue.record("a directory was opened as a guide")
        } catch {
            #expect(error.file == Fixture.directory.path && error.message.hasPrefix("cannot read"), "\(error)")
        }
    }

    /// Whitespace, comments and processing instructions between (and inside) elements are read
    /// through whatever their amount; memory is checked against the binary in ReliabilityTests.
    @Test func commentsAndInstructionsBetweenElementsAreSkipped() throws {
        var body = ""
        for i in 0..<50 {
            body += String(repeating: "<!-- x -->\n<?pi data?>\n   ", count: 2000)
            body += "<programme start=\"2025010112\(i / 10)\(i % 10)00\" channel=\"a\"><title>T<!-- c -->\(i)</title></programme>\n"
        }
        let result = try readAll(Fixture.write(Fixture.tv(body)))
        #expect(result.programmes.map { $0.titles[0].text } == (0..<50).map { "T\($0)" })
        // Line numbers are not disturbed by how the bytes are handed to libxml2.
        #expect(result.programmes.first?.line == 3 + 4000)
        #expect(result.programmes.last?.line == 3 + 50 * 4000 + 49)
    }

    /// libxml2 refuses one text node over 10 MB; comments in between do not get round that.
    @Test func elementTextIsBoundedAcrossComments() throws {
        let chunk = String(repeating: "d", count: 1 << 20) + "<!---->"
        let text = Fixture.tv("<programme start=\"20250101000000\" channel=\"a\"><title>T</title><desc>"
                              + String(repeating: chunk, count: 11) + "</desc></programme>")
        let error = try #require(readError(Fixture.write(text)))
        #expect(error.message.contains("longer than 10000000 bytes"), "\(error)")
        #expect(error.line == 3)
    }

    @Test func excerptsAreBounded() {
        #expect("short".excerpt() == "short")
        let exact = String(repeating: "x", count: 80)
        #expect(exact.excerpt() == exact)
        let long = String(repeating: "é", count: 1000)
        #expect(long.excerpt() == String(repeating: "é", count: 80) + "… (2000 bytes)")
        // One character of a million combining marks is still cut.
        let zalgo = "e" + String(repeating: "\u{301}", count: 1_000_000)
        #expect(zalgo.excerpt().unicodeScalars.count < 100)
    }

    @Test func warningsQuoteExcerptsOfHugeValues() throws {
        let huge = String(repeating: "9", count: 3_000_000)
        let hugeChannel = String(repeating: "c", count: 1_000_000)
        let text = Fixture.tv("""
          <programme start="\(huge)" channel="a"><title>T</title></programme>
          <programme start="20250101000000" stop="\(huge)" clumpidx="\(huge)" channel="a"><title>T</title></programme>
          <programme start="20250101010000" channel="\(hugeChannel)"><title>\(huge)</title></programme>
          <programme start="20250101010000" channel="\(hugeChannel)"><title>\(huge)</title></programme>
        """)
        let result = try readAll(Fixture.write(text))
        #expect(result.warnings.count >= 3)
        for w in result.warnings {
            #expect(w.message.utf8.count < 400, "\(w.kind): \(w.message.utf8.count) bytes")
            #expect((w.channel?.utf8.count ?? 0) < 200)
        }
        #expect(result.warnings.contains { $0.message.contains("… (3000000 bytes)") })
        let normalised = ScheduleNormaliser.normalise(result.programmes.filter { $0.channel == hugeChannel }, channel: hugeChannel)
        #expect(normalised.warnings.map(\.kind).contains("duplicate"))
        for w in normalised.warnings {
            #expect(w.message.utf8.count < 600 && (w.channel?.utf8.count ?? 0) < 200, "\(w.message.utf8.count) bytes")
        }
    }

    @Test func libxml2MessagesAreBounded() throws {
        let name = String(repeating: "n", count: 40_000)
        let error = try #require(readError(Fixture.write("<tv><\(name)></tv>")))
        #expect(error.message.utf8.count < 400, "\(error.message.utf8.count) bytes")
        let root = try #require(readError(Fixture.write("<\(name)/>")))
        #expect(root.message.utf8.count < 400, "\(root.message.utf8.count) bytes")
    }
}
