import Testing
@testable import XMLTV

/// The staging format (guides not grouped by channel are staged on disk): a record comes back as
/// the reader made it, every field of the decoded programme included, and damaged bytes are an
/// error, never a crash or a wrong programme.
@Suite struct StagedRecordTests {
    /// A programme with every child the decoder knows, nested elements, attributes and non-ASCII text.
    static let everything = Fixture.tv("""
    <programme channel="bbc1.uk/ü" start="19691231000000 +0000" stop="20270115080000 +0000" clumpidx="1/2">
      <title lang="en">Title "quoted"</title><title>Titel</title>
      <sub-title lang="de">Sub</sub-title>
      <desc lang="fr">Long 🎬 text.
    Second line.</desc>
      <credits><director>D</director><actor role="Hero" guest="yes">A. Actor</actor></credits>
      <date>2024</date>
      <category lang="en">Film</category>
      <keyword>keyword</keyword>
      <language>en</language><orig-language>ja</orig-language>
      <length units="minutes">90</length>
      <icon src="https://example.org/a.png" width="100" height="-1"/><icon src="b.png"/>
      <url>https://example.org/</url>
      <country>GB</country><country>IE</country>
      <episode-num system="xmltv_ns">2/5.3/10.0/2</episode-num><episode-num system="dd_progid">EP1</episode-num>
      <video><present>yes</present><aspect>16:9</aspect><quality>HDTV</quality><colour>no</colour></video>
      <audio><present>yes</present><stereo>dolby digital</stereo></audio>
      <previously-shown start="20240101000000 +0000" channel="bbc2.uk"/>
      <premiere/><last-chance/><new/>
      <subtitles type="teletext"/><subtitles/>
      <rating system="BBFC"><value>15</value></rating><rating><value>PG</value></rating>
      <star-rating><value>3/5</value></star-rating><image type="poster" size="2" orient="P" system="tvdb">http://x/poster.jpg</image>
    </programme>
    <programme channel="c" start="20260101000000 +0000"><title>No stop</title></programme>
    """)

    static func records() throws -> [ProgrammeRecord] {
        let reader = try XMLTVReader(path: Fixture.write(everything))
        var records: [ProgrammeRecord] = []
        while let item = try reader.nextRecord() {
            if case .programme(let p) = item { records.append(p) }
        }
        return records
    }

    static func staged(_ record: ProgrammeRecord) -> [UInt8] {
        var bytes: [UInt8] = []
        record.stage(into: &bytes)
        return bytes
    }

    @Test func aRecordComesBackAsRead() throws {
        let records = try Self.records()
        #expect(records.count == 2)
        let sample = records[0].decoded()
        // The sample sets every field of the programme, so the round trip below checks them all.
        let plain = Mirror(reflecting: XMLTVProgramme(channel: "", start: 0))
        for (a, b) in zip(plain.children, Mirror(reflecting: sample).children) {
            #expect(String(describing: a.value) != String(describing: b.value), "field \(a.label ?? "?") keeps its default in the sample")
        }
        for record in records {
            let back = try Self.staged(record).withUnsafeBytes { try ProgrammeRecord(staged: $0) }
            #expect(back.decoded() == record.decoded())
            #expect(back.sourceHash == record.sourceHash)
            #expect(back.tape == record.tape)
            #expect(back.textBytes == record.textBytes)
            #expect((back.channel, back.start, back.stop, back.clumpIndex, back.clumpCount, back.line)
                    == (record.channel, record.start, record.stop, record.clumpIndex, record.clumpCount, record.line))
        }
        #expect(records[1].stop == nil)
    }

    @Test func aCutRecordIsAnError() throws {
        let bytes = Self.staged(try Self.records()[0])
        for cut in 0..<bytes.count {
            #expect(throws: DamagedStagedRecord.self) {
                try Array(bytes[..<cut]).withUnsafeBytes { _ = try ProgrammeRecord(staged: $0) }
            }
        }
    }

    /// Every single byte changed, in every record: an error, or (where the change leaves a record
    /// that reads) never a crash; a changed tape or hash is always noticed.
    @Test func aChangedByteIsNeverACrash() throws {
        let record = try Self.records()[0]
        let bytes = Self.staged(record)
        let tapeStart = bytes.count - record.tape.count
        for i in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[i] ^= flip
                let back = try? damaged.withUnsafeBytes { try ProgrammeRecord(staged: $0) }
                if i >= 41 && i < 49 || i >= tapeStart { #expect(back == nil, "byte \(i) ^ \(flip)") }
                if let back { _ = back.decoded() }
            }
        }
    }
}
