import Foundation
import Primitives
import TestSupport
import Testing

@Suite struct FNV1aTests {
    /// Published FNV-1a 64 test vectors (the reference implementation's test suite).
    @Test(arguments: [("", "cbf29ce484222325"), ("a", "af63dc4c8601ec8c"), ("foobar", "85944171f73967e8")])
    func knownVectors(text: String, hex: String) {
        #expect(FNV1a.hex(text) == hex)
        var hash = FNV1a()
        for byte in text.utf8 { hash.add(byte) }
        #expect(hash.hex == hex)
    }

    @Test func chunksGiveTheSameHashAsOnePass() {
        let bytes = Array("The quick brown fox jumps over the lazy dog".utf8)
        var whole = FNV1a(), chunked = FNV1a()
        whole.add(bytes)
        chunked.add(bytes[..<7])
        chunked.add(bytes[7...])
        #expect(whole == chunked)
    }

    @Test func anotherBasisGivesAnotherHash() {
        var a = FNV1a(), b = FNV1a(basis: 0x6C62_272E_07BB_0142)
        a.add("x".utf8)
        b.add("x".utf8)
        #expect(a.value != b.value)
    }

    @Test func littleEndianWordIsItsEightBytes() {
        var word = FNV1a(), bytes = FNV1a()
        word.add(littleEndian: 0x0807_0605_0403_0201)
        bytes.add([1, 2, 3, 4, 5, 6, 7, 8] as [UInt8])
        #expect(word == bytes)
    }

    /// The word-wise variant's values are stored in databases: pinned.
    @Test func wordwiseIsPinned() {
        let bytes = Array("<programme start=\"20261122030000 +0000\">".utf8)
        let value = bytes.withUnsafeBufferPointer(FNV1a.wordwise)
        #expect(value == bytes.withUnsafeBufferPointer(FNV1a.wordwise))
        #expect(String(value, radix: 16) == "\(Self.pinnedWordwise)")
        #expect([UInt8]().withUnsafeBufferPointer(FNV1a.wordwise) != value)
    }
    static let pinnedWordwise = "f8f9457b9648d415"  // computed independently (Python, the same steps)

    /// `FNV1a.Wordwise` fed in any pieces gives `wordwise` of the whole, and `wordwise` is the
    /// steps its stored values were made with (written out here once more, as they were).
    @Test func wordwiseInPiecesIsTheWholeAndTheStoredSteps() {
        func stored(_ bytes: [UInt8]) -> UInt64 {
            var h = FNV1a.standardBasis, i = 0
            while i + 8 <= bytes.count {
                var word: UInt64 = 0
                for k in 0..<8 { word |= UInt64(bytes[i + k]) << (UInt64(k) * 8) }
                h = (h ^ word) &* 0x100_0000_01b3
                h ^= h >> 29
                i += 8
            }
            while i < bytes.count { h = (h ^ UInt64(bytes[i])) &* 0x100_0000_01b3; i += 1 }
            return (h ^ UInt64(bytes.count)) &* 0x100_0000_01b3
        }
        var random = SplitMix64(seed: 64)
        for length in Array(0...40) + [255, 1000, 4099] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let whole = bytes.withUnsafeBufferPointer(FNV1a.wordwise)
            #expect(whole == stored(bytes), "length \(length)")
            for _ in 0..<6 {
                var hash = FNV1a.Wordwise(), at = 0
                while at < length {
                    let next = min(length, at + Int.random(in: 0...11, using: &random))
                    bytes[at..<next].withUnsafeBytes { hash.add($0) }
                    at = next
                }
                #expect(hash.value == whole, "length \(length) in pieces")
            }
        }
    }
}

@Suite struct UTCTimeTests {
    @Test func epochAndKnownDays() {
        #expect(UTCTime.days(year: 1970, month: 1, day: 1) == 0)
        #expect(UTCTime.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(UTCTime.days(year: 1969, month: 12, day: 31) == -1)
        #expect(UTCTime.seconds(year: 2026, month: 11, day: 22, hour: 3) == 1_795_316_400)
    }

    @Test func civilDateRoundTripsEveryDayOfFourCenturies() {
        var days = UTCTime.days(year: 1800, month: 1, day: 1)
        for year in 1800..<2200 {
            for month in 1...12 {
                for day in 1...UTCTime.daysIn(month: month, year: year) {
                    #expect(UTCTime.days(year: year, month: month, day: day) == days)
                    let civil = UTCTime.civilDate(days: days)
                    if civil != (year, month, day) { Issue.record("day \(days): \(civil), expected \(year)-\(month)-\(day)") }
                    days += 1
                }
            }
        }
    }

    @Test func leapYears() {
        #expect(UTCTime.isLeap(2000) && UTCTime.isLeap(2024))
        #expect(!UTCTime.isLeap(1900) && !UTCTime.isLeap(2026))
        #expect(UTCTime.daysIn(month: 2, year: 2100) == 28)
    }

    @Test func textForms() {
        let t = UTCTime.seconds(year: 2026, month: 11, day: 22, hour: 3, minute: 4, second: 5)
        #expect(UTCTime.iso8601(t) == "2026-11-22T03:04:05Z")
        #expect(UTCTime.compact(t) == "20261122030405")
        #expect(UTCTime.parseISO8601("2026-11-22T03:04:05Z") == t)
        #expect(UTCTime.iso8601(-1) == "1969-12-31T23:59:59Z")
        for bad in ["2026-13-22T03:00:00Z", "2026-11-22 03:00:00Z", "2026-11-22T03:00:00", "x"] {
            #expect(UTCTime.parseISO8601(bad) == nil, "\(bad)")
        }
    }
}

@Suite final class DurableFileTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "primitives-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    @Test func replaceWritesTheBytesAndLeavesNoTemporaryFile() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/feed.ics"
        try DurableFile.replace(path, with: Array("old".utf8))
        try DurableFile.replace(path, with: Array("new".utf8))
        #expect(FileManager.default.contents(atPath: path) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["feed.ics"])
    }

    /// The check that skips a write which would not change a file: same size and same bytes,
    /// against bytes in memory or another file; a missing file never holds anything.
    @Test func holdsComparesSizeThenBytes() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/a.ics", other = directory + "/b.ics"
        #expect(!DurableFile.holds(path, .bytes([])))
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try DurableFile.replace(path, with: bytes)
        #expect(DurableFile.holds(path, .bytes(bytes)))
        var changed = bytes
        changed[150_000] ^= 1   // past the first block
        #expect(!DurableFile.holds(path, .bytes(changed)))
        #expect(!DurableFile.holds(path, .bytes(Array(bytes.dropLast()))))
        try DurableFile.replace(other, with: changed)
        #expect(!DurableFile.holds(path, .file(other)))
        try DurableFile.replace(other, with: bytes)
        #expect(DurableFile.holds(path, .file(other)))
        #expect(!DurableFile.holds(path, .file(directory + "/missing")))
        try DurableFile.replace(path, with: [])
        #expect(DurableFile.holds(path, .bytes([])))
    }

    @Test func temporaryFilesNameTheirProcess() {
        let temporary = DurableFile.temporaryPath(for: directory + "/a-b.ics")
        let name = String(temporary.split(separator: "/").last ?? "")
        #expect(name.hasPrefix(".a-b.ics.tmp-"))
        #expect(DurableFile.temporaryOwner(ofName: name) == getpid())
        #expect(DurableFile.temporaryOwner(ofName: "a-b.ics") == nil)
        #expect(DurableFile.temporaryOwner(ofName: ".hidden") == nil)
    }

    @Test func moveIntoPlaceReplacesTheTarget() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try DurableFile.write(Array("streamed".utf8), to: directory + "/x.tmp", sync: false)
        try DurableFile.write(Array("old".utf8), to: directory + "/x.json", sync: false)
        try DurableFile.moveIntoPlace(directory + "/x.tmp", to: directory + "/x.json")
        #expect(FileManager.default.contents(atPath: directory + "/x.json") == Data("streamed".utf8))
        #expect(!FileManager.default.fileExists(atPath: directory + "/x.tmp"))
        try DurableFile.syncFileSystem(containing: directory)
    }

    @Test func failuresNameThePathAndTheReason() {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/missing/feed.ics"
        #expect {
            try DurableFile.replace(path, with: [1])
        } throws: { error in
            guard let error = error as? FileError else { return false }
            return error.description.contains("/missing/") && error.code == ENOENT && error.reason.contains("No such file")
        }
    }
}

/// HTTP dates: what serve writes in Last-Modified and reads from If-Modified-Since, and what
/// downloads read from Retry-After.
@Suite struct HTTPDateTests {
    @Test func formatsAndParsesIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse(HTTPDate.format(1_764_000_000)) == 1_764_000_000)
        #expect(HTTPDate.format(UTCTime.seconds(year: 1, month: 1, day: 1)).contains(" 0001 "))
    }

    @Test func refusesOtherForms() {
        for text in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
                     "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 99999 08:49:37 GMT", ""] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }
}
