/// The byte buffer every property is written into. It folds content lines as RFC 5545 section 3.1
/// asks: physical lines of at most 75 octets without the CRLF, continuation lines that start with
/// one space (counted in their 75), and breaks only between whole UTF-8 scalars, keeping combining
/// marks, emoji modifiers and ZWJ sequences with their base character where they fit.
struct ContentLineBuffer {
    /// RFC 5545 limit per physical line, CRLF excluded.
    static let foldLimit = 75

    private(set) var bytes: [UInt8]
    /// Index in `bytes` of the current physical line's first octet.
    private var lineStart = 0
    private let limit: Int

    /// `limit: nil` turns folding off (for `TextEscaping.escapeText`).
    init(capacity: Int = 0, limit: Int? = ContentLineBuffer.foldLimit) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.limit = limit ?? Int.max
    }

    /// Hands out what was written so far; only between content lines, so no fold is pending.
    mutating func take() -> [UInt8] {
        assert(lineStart == bytes.count, "take() in the middle of a content line")
        let out = bytes
        bytes.removeAll(keepingCapacity: true)
        lineStart = 0
        return out
    }

    /// Folds first if `count` more octets would not fit on the current physical line. A line that
    /// holds only the continuation space is never folded again, so a unit longer than the limit
    /// cannot loop (units are capped below the limit anyway).
    @inline(__always)
    mutating func makeRoom(for count: Int) {
        let used = bytes.count - lineStart
        if used + count > limit && used > 1 {
            bytes.append(0x0D)
            bytes.append(0x0A)
            lineStart = bytes.count
            bytes.append(0x20)
        }
    }

    @inline(__always)
    mutating func appendByte(_ byte: UInt8) {
        makeRoom(for: 1)
        bytes.append(byte)
    }

    @inline(__always)
    mutating func appendPair(_ first: UInt8, _ second: UInt8) {
        makeRoom(for: 2)
        bytes.append(first)
        bytes.append(second)
    }

    /// Property names, parameters and other fixed ASCII.
    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { buffer in
            for byte in buffer { appendByte(byte) }
        }
    }

    /// Ends the content line with CRLF.
    mutating func endLine() {
        bytes.append(0x0D)
        bytes.append(0x0A)
        lineStart = bytes.count
    }

    // MARK: TEXT values (RFC 5545 section 3.3.11)

    /// Appends `text` TEXT-escaped: `\` `;` `,` and newlines (LF, CRLF, CR) become escapes, TAB
    /// becomes a space, other control characters (illegal in content lines) are dropped.
    mutating func appendText(_ text: String) {
        var text = text
        text.withUTF8 { appendText(utf8: $0) }
    }

    private mutating func appendText(utf8: UnsafeBufferPointer<UInt8>) {
        let count = utf8.count
        var index = 0
        while index < count {
            let byte = utf8[index]
            if byte >= 0x80 {
                let end = GraphemeUnits.end(of: utf8, from: index, maxOctets: limit - 1)
                makeRoom(for: end - index)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[index..<end]))
                index = end
                continue
            }
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: ";"), UInt8(ascii: ","):
                appendPair(UInt8(ascii: "\\"), byte)
            case 0x0A:
                appendPair(UInt8(ascii: "\\"), UInt8(ascii: "n"))
            case 0x0D:
                appendPair(UInt8(ascii: "\\"), UInt8(ascii: "n"))
                if index + 1 < count && utf8[index + 1] == 0x0A { index += 1 }
            case 0x09:
                // HTAB is legal, but a tab right after a fold is read as folding whitespace by
                // some consumers; a space keeps the words apart without that risk.
                appendByte(0x20)
            case 0x00..<0x20, 0x7F:
                break
            default:
                // A run of plain ASCII goes in as whole slices, each up to the end of the line
                // (byte by byte this loop was most of an export's time). The run stops before a
                // letter that a non-ASCII mark may follow: that one takes the path below.
                var end = index + 1
                while end < count, Self.isPlain(utf8[end]) { end += 1 }
                if end < count && utf8[end] >= 0x80 { end -= 1 }
                if end > index + 1 {
                    appendPlain(UnsafeBufferPointer(rebasing: utf8[index..<end]))
                    index = end
                    continue
                }
                if index + 1 < count && utf8[index + 1] >= 0x80 {
                    // An ASCII base letter followed by e.g. a combining accent.
                    let end = GraphemeUnits.end(of: utf8, from: index, maxOctets: limit - 1)
                    makeRoom(for: end - index)
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[index..<end]))
                    index = end
                    continue
                }
                appendByte(byte)
            }
            index += 1
        }
    }

    /// Printable ASCII that TEXT does not escape.
    @inline(__always)
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: ";") && byte != UInt8(ascii: ",")
    }

    /// `appendByte` for each byte, a line's worth at a time.
    private mutating func appendPlain(_ run: UnsafeBufferPointer<UInt8>) {
        var start = 0
        while start < run.count {
            makeRoom(for: 1)
            let room = max(1, limit - (bytes.count - lineStart))
            let end = start + min(room, run.count - start)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: run[start..<end]))
            start = end
        }
    }

    // MARK: Other value types

    /// Appends bytes that need no escaping and were validated by the caller (URIs, colour names),
    /// folding between scalars.
    mutating func appendVerbatim(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            var index = 0
            while index < utf8.count {
                let length = UTF8Scalars.length(leadByte: utf8[index])
                makeRoom(for: length)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[index..<min(index + length, utf8.count)]))
                index += length
            }
        }
    }

    /// Appends a non-negative decimal integer.
    mutating func appendDecimal(_ value: Int64) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var magnitude = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            makeRoom(for: count + (value < 0 ? 1 : 0))
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            while count > 0 {
                count -= 1
                bytes.append(scratch[count])
            }
        }
    }

    /// Appends a UTC DATE-TIME, `YYYYMMDDTHHMMSSZ` (RFC 5545 section 3.3.5, form 2).
    mutating func appendUTCDateTime(_ secondsSince1970: Int64) {
        let time = UTCDateTime(secondsSince1970: secondsSince1970)
        makeRoom(for: 16)
        appendDigits(time.year, width: 4)
        appendDigits(time.month, width: 2)
        appendDigits(time.day, width: 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(time.hour, width: 2)
        appendDigits(time.minute, width: 2)
        appendDigits(time.second, width: 2)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends a positive DURATION of hours, minutes and seconds, e.g. `PT12H` or `PT1H30M`.
    mutating func appendDuration(seconds: Int) {
        let total = Int64(max(seconds, 1))
        appendPair(UInt8(ascii: "P"), UInt8(ascii: "T"))
        let hours = total / 3600, minutes = total % 3600 / 60, rest = total % 60
        if hours > 0 { appendDecimal(hours); appendByte(UInt8(ascii: "H")) }
        if minutes > 0 { appendDecimal(minutes); appendByte(UInt8(ascii: "M")) }
        if rest > 0 { appendDecimal(rest); appendByte(UInt8(ascii: "S")) }
    }

    @inline(__always)
    private mutating func appendDigits(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var value = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
            value %= divisor
            divisor /= 10
        }
    }
}

/// UTF-8 facts the folding needs; Swift strings are always valid UTF-8.
enum UTF8Scalars {
    @inline(__always)
    static func length(leadByte: UInt8) -> Int {
        if leadByte < 0x80 { return 1 }
        if leadByte < 0xE0 { return 2 }
        if leadByte < 0xF0 { return 3 }
        return 4
    }

    @inline(__always)
    static func decode(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int, length: Int) -> UInt32 {
        let lead = UInt32(utf8[index])
        switch length {
        case 1: return lead
        case 2: return (lead & 0x1F) << 6 | UInt32(utf8[index + 1] & 0x3F)
        case 3: return (lead & 0x0F) << 12 | UInt32(utf8[index + 1] & 0x3F) << 6 | UInt32(utf8[index + 2] & 0x3F)
        default:
            return (lead & 0x07) << 18 | UInt32(utf8[index + 1] & 0x3F) << 12
                | UInt32(utf8[index + 2] & 0x3F) << 6 | UInt32(utf8[index + 3] & 0x3F)
        }
    }
}

/// Approximates user-perceived characters (grapheme clusters) well enough to keep folds out of
/// them: a scalar plus the extending scalars after it, ZWJ emoji sequences and flag pairs.
enum GraphemeUnits {
    /// The end index of the unit starting at `start`, never more than `maxOctets` long unless a
    /// single scalar is (it never is: 4 octets at most).
    static func end(of utf8: UnsafeBufferPointer<UInt8>, from start: Int, maxOctets: Int) -> Int {
        let firstLength = UTF8Scalars.length(leadByte: utf8[start])
        var previous = UTF8Scalars.decode(utf8, at: start, length: firstLength)
        var end = start + firstLength
        var regionalIndicators = isRegionalIndicator(previous) ? 1 : 0
        while end < utf8.count && utf8[end] >= 0x80 {
            let length = UTF8Scalars.length(leadByte: utf8[end])
            let scalar = UTF8Scalars.decode(utf8, at: end, length: length)
            let joins: Bool
            if previous == 0x200D {
                joins = true  // whatever follows a zero-width joiner belongs to the cluster
            } else if isRegionalIndicator(scalar) {
                joins = regionalIndicators % 2 == 1  // second half of a flag
            } else {
                joins = extends(scalar)
            }
            guard joins, end + length - start <= maxOctets else { break }
            if isRegionalIndicator(scalar) { regionalIndicators += 1 }
            previous = scalar
            end += length
        }
        return end
    }

    @inline(__always)
    private static func isRegionalIndicator(_ scalar: UInt32) -> Bool {
        scalar >= 0x1F1E6 && scalar <= 0x1F1FF
    }

    /// Grapheme_Extend, spacing marks, emoji modifiers and ZWJ: no cluster break before them.
    private static func extends(_ value: UInt32) -> Bool {
        if value < 0x300 { return false }  // Latin-1 and below: nothing extends
        if value <= 0x36F || value == 0x200D { return true }
        // Big blocks without marks skip the (slow) property lookup: CJK ideographs, kana but the
        // voiced-sound marks U+3099/309A, Hangul syllables.
        if (0x4E00...0x9FFF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0x3040...0x3098).contains(value) || (0x309B...0x30FF).contains(value) {
            return false
        }
        guard let scalar = Unicode.Scalar(value) else { return false }
        let properties = scalar.properties
        return properties.isGraphemeExtend || properties.isEmojiModifier
            || properties.generalCategory == .spacingMark
    }
}
