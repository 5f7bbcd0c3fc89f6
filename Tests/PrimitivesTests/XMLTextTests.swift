import Foundation
import TestSupport
import Primitives
import Testing

@Suite struct XMLTextTests {
    /// The escapes byte by byte, as the XMLTV export has always written them.
    static func reference(_ bytes: [UInt8], attribute: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for b in bytes {
            switch b {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case UInt8(ascii: "\"") where attribute: out += Array("&quot;".utf8)
            case 0x0D: out += Array("&#13;".utf8)
            case 0x09 where attribute: out += Array("&#9;".utf8)
            case 0x0A where attribute: out += Array("&#10;".utf8)
            case 0x09, 0x0A: out.append(b)
            case 0..<0x20: break
            default: out.append(b)
            }
        }
        return out
    }

    /// Every byte that needs care, at every offset around the eight-byte steps, in text and in
    /// attributes, among plain and non-ASCII bytes.
    @Test(arguments: [false, true])
    func escapesEveryByteAtEveryOffset(attribute: Bool) {
        let specials: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F, 0x22, 0x26, 0x3C, 0x3E, 0x7F, 0x80, 0xC3, 0xFF, 0x20, 0x27]
        for length in 0..<20 {
            for offset in 0..<max(1, length) {
                for special in specials {
                    var bytes = Array("Caf\u{E9} & news <x>".utf8.prefix(length))
                    if offset < bytes.count { bytes[offset] = special }
                    var xml = XMLText()
                    bytes.withUnsafeBufferPointer { attribute ? xml.attribute($0) : xml.text($0) }
                    #expect(xml.bytes == Self.reference(bytes, attribute: attribute), "\(bytes) at \(offset)")
                }
            }
        }
    }

    @Test func integersAndTimes() {
        var xml = XMLText()
        for n: Int64 in [0, 7, -42, 1_234_567_890, .max, .min] {
            xml.append(integer: n)
            xml.raw(" ")
        }
        for t: Int64 in [0, 1_893_456_000, -1, 253_402_300_799] {
            xml.append(compactTime: t)
            xml.raw(" ")
        }
        let expected = "0 7 -42 1234567890 \(Int64.max) \(Int64.min) "
            + [0, 1_893_456_000, -1, 253_402_300_799].map { UTCTime.compact($0) + " " }.joined()
        #expect(String(decoding: xml.bytes, as: UTF8.self) == expected)
    }
}

@Suite struct ParallelGzipTests {
    static func gunzip(_ bytes: [UInt8]) throws -> (status: Int32, bytes: [UInt8]) {
        let file = NSTemporaryDirectory() + "ParallelGzipTests-\(UUID().uuidString).gz"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let r = try Subprocess.run("/bin/gzip", ["-dc", file])
        return (r.status, [UInt8](r.stdout))
    }

    static func compress(_ input: [UInt8], pieces: Int, blockSize: Int) -> [UInt8] {
        let gzip = ParallelGzip(blockSize: blockSize)
        var output: [UInt8] = []
        let size = max(1, input.count / pieces)
        var rest = input[...]
        while !rest.isEmpty {
            Array(rest.prefix(size)).withUnsafeBufferPointer {
                gzip.compress($0, finish: false) { (chunk: ArraySlice<UInt8>) in output += chunk }
            }
            rest = rest.dropFirst(size)
        }
        gzip.compress(UnsafeBufferPointer(start: nil, count: 0), finish: true) { (chunk: ArraySlice<UInt8>) in output += chunk }
        return output
    }

    /// Many blocks (each primed with the one before), written in pieces that do not fall on
    /// block boundaries: gzip reads the original back, and the bytes depend only on the input.
    @Test(arguments: [0, 1, 1000, 4096, 300_001])
    func manyBlocksGiveOneValidDeterministicMember(count: Int) throws {
        var state: UInt32 = 7
        let input = (0..<count).map { i -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return i % 3 == 0 ? UInt8(truncatingIfNeeded: state >> 24) : Array("<programme> news ".utf8)[i % 17]
        }
        let gzipped = Self.compress(input, pieces: 7, blockSize: 4096)
        let back = try Self.gunzip(gzipped)
        #expect(back.status == 0)
        #expect(back.bytes == input)
        #expect(Self.compress(input, pieces: 3, blockSize: 4096) == gzipped)
        #expect(Array(gzipped.prefix(4)) == [0x1F, 0x8B, 8, 0])
    }
}
