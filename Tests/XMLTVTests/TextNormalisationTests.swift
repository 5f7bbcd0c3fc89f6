import Testing
@testable import XMLTV

/// `normalisedText` checks eight bytes a step before it rewrites anything: compared here with
/// the rules applied one byte at a time, over random texts rich in blanks, control bytes and
/// multi-byte characters at every offset of a word.
@Suite struct TextNormalisationTests {
    /// The rules as written: trim blanks; collapse: every run of blanks is one space;
    /// multiline: CR LF and a lone CR are one line break.
    static func reference(_ bytes: [UInt8], _ mode: TextMode) -> String {
        func isBlank(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }
        var lo = 0, hi = bytes.count
        while lo < hi, isBlank(bytes[lo]) { lo += 1 }
        while hi > lo, isBlank(bytes[hi - 1]) { hi -= 1 }
        var out: [UInt8] = []
        var i = lo
        while i < hi {
            let c = bytes[i]
            switch mode {
            case .collapse where isBlank(c):
                while i < hi, isBlank(bytes[i]) { i += 1 }
                out.append(32)
                continue
            case .multiline where c == 13:
                out.append(10)
                if i + 1 < hi, bytes[i + 1] == 10 { i += 1 }
            default:
                out.append(c)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test(arguments: [TextMode.collapse, .multiline])
    func matchesTheByteRules(_ mode: TextMode) {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [[UInt8]] = [[32], [32], [32], [9], [10], [13], [1], [31], [33], [0x7F], [0x61], [0x62], Array("é".utf8), Array("€".utf8)]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) { bytes += alphabet.randomElement(using: &generator)! }
            let got = bytes.withUnsafeBufferPointer { normalisedText($0, mode) }
            #expect(Array(got.utf8) == Array(Self.reference(bytes, mode).utf8), "\(bytes)")
        }
    }
}
