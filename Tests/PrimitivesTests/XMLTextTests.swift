import Foundation
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
