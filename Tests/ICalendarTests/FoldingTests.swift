import Testing
@testable import ICalendar

@Suite("Folding at 75 octets")
struct FoldingTests {
    /// One SUMMARY content line, written through the real writer code.
    private func summaryLine(_ value: String) -> [UInt8] {
        var buffer = ContentLineBuffer()
        buffer.appendASCII("SUMMARY:")
        buffer.appendText(value)
        buffer.endLine()
        return buffer.bytes
    }

    @Test("ASCII line of exactly 75 octets is not folded")
    func exactly75() {
        let bytes = summaryLine(String(repeating: "a", count: 67))
        let lines = Feed.physicalLines(bytes)
        #expect(lines.count == 1)
        #expect(lines[0].count == 75)
    }

    @Test("ASCII line of 76 octets folds after 75, continuation starts with one space")
    func seventySix() {
        let bytes = summaryLine(String(repeating: "a", count: 68))
        let lines = Feed.physicalLines(bytes)
        #expect(lines.map(\.count) == [75, 2])
        #expect(lines[1] == [0x20, UInt8(ascii: "a")])
        #expect(Feed.logicalLines(bytes) == ["SUMMARY:" + String(repeating: "a", count: 68)])
    }

    @Test("The 75th octet inside a 2-, 3- or 4-octet sequence: fold before the scalar",
          arguments: [("é", 2), ("€", 3), ("😀", 4)])
    func foldBeforeSplitScalar(scalar: String, width: Int) {
        // Put the scalar's first octet at position 75 - width + 2, so that it straddles 75/76.
        let padding = 75 - 8 - width + 1
        let value = String(repeating: "a", count: padding) + scalar + "tail"
        let bytes = summaryLine(value)
        let lines = Feed.physicalLines(bytes)
        #expect(lines.count == 2)
        #expect(lines[0].count == 75 - width + 1)
        #expect(lines[1].starts(with: [0x20] + Array(scalar.utf8)))
        Feed.checkFolding(bytes)
        #expect(Feed.logicalLines(bytes) == ["SUMMARY:" + value])
    }

    @Test("Long lines of multi-byte scalars: every line ≤ 75 octets, valid UTF-8, unfolds exactly",
          arguments: ["ü", "日", "😀", "𝄞a", "aé€😀", "e\u{301}", "👨‍👩‍👧‍👦", "🇩🇪", "👍🏽"])
    func longMultiByte(unit: String) {
        for count in [1, 20, 37, 38, 75, 200] {
            let value = String(repeating: unit, count: count)
            let bytes = summaryLine(value)
            Feed.checkFolding(bytes)
            let logical = Feed.logicalLines(bytes)
            #expect(logical.count == 1)
            #expect(sameBytes(logical.first, "SUMMARY:" + value))
        }
    }

    @Test("Folds stay out of grapheme clusters: never before a combining mark, ZWJ, modifier or flag half")
    func graphemeClusters() {
        let value = String(repeating: "Cafe\u{301} 👨‍👩‍👧‍👦🇩🇪👍🏽a\u{308}\u{304} ", count: 20)
        let lines = Feed.physicalLines(summaryLine(value))
        let clusters = Set(value.map { String($0) })
        for line in lines.dropFirst() {
            let text = String(decoding: line.dropFirst(), as: UTF8.self)
            let first = text.unicodeScalars.first!
            #expect(!first.properties.isGraphemeExtend && !first.properties.isEmojiModifier && first != "\u{200D}",
                    "continuation starts with U+\(String(first.value, radix: 16))")
            // The first cluster of every continuation line is a whole cluster of the input.
            #expect(clusters.contains(String(text.first!)))
        }
        // Flags are pairs: a continuation never starts with the second half of one.
        let joined = lines.map { String(decoding: $0, as: UTF8.self) }
        for (previous, next) in zip(joined, joined.dropFirst()) {
            let lastRegional = previous.unicodeScalars.reversed().prefix { (0x1F1E6...0x1F1FF).contains($0.value) }.count
            #expect(lastRegional % 2 == 0, "a flag was split between \(previous) and \(next)")
        }
    }

    @Test("Escapes are never split across a fold")
    func escapesStayWhole() {
        for padding in 60...70 {
            let value = String(repeating: "a", count: padding) + String(repeating: ",;\\\n", count: 10)
            let lines = Feed.physicalLines(summaryLine(value))
            for line in lines.dropLast() {
                // An odd run of trailing backslashes means an escape was cut in half.
                let trailing = line.reversed().prefix { $0 == UInt8(ascii: "\\") }.count
                #expect(trailing % 2 == 0)
            }
        }
    }

    @Test("Folding applies to every property of a real feed")
    func wholeFeed() {
        let bytes = ICalendarWriter.write(Samples.properties, events: Samples.trickyEvents)
        Feed.checkFolding(bytes)
    }
}
