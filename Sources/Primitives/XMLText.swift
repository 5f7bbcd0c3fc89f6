/// XML written directly into a byte buffer, the way `JSONText` writes JSON: markup appended as
/// bytes, text escaped in place, its runs that need no escape found eight bytes at a time (the
/// XMLTV export writes hundreds of megabytes of text, most of it needing none).
///
/// ```swift
/// var xml = XMLText()
/// xml.raw("<title lang=\"")
/// xml.attribute("en")
/// xml.raw("\">")
/// xml.text("Tom & Jerry")
/// xml.raw("</title>\n")     // <title lang="en">Tom &amp; Jerry</title>
/// ```
public struct XMLText: Sendable {
    // All of `storage` is room (its count is its capacity); the text is its first `used` bytes.
    // Bytes are copied in place: `Array.append(contentsOf:)` cost more than the copy itself for
    // the few bytes of most appends.
    @usableFromInline var storage: [UInt8]
    @usableFromInline var used = 0
    /// The day (since 1970) of the last `append(compactTime:)` and its `YYYYMMDD` digits.
    @usableFromInline var lastDay = Int64.min
    @usableFromInline var lastDate: UInt64 = 0

    /// Empty text with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: max(capacity, 256))
    }

    /// The UTF-8 text written so far.
    public var bytes: [UInt8] { Array(storage[..<used]) }

    /// Calls `body` with the text written so far, without copying it.
    @inlinable
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<used])) }
    }

    /// How many bytes are written.
    @inlinable public var count: Int { used }

    /// Empties the text, keeping its buffer.
    @inlinable public mutating func removeAll() { used = 0 }

    /// Appends markup as it is.
    @inlinable
    public mutating func raw(_ markup: StaticString) {
        append(markup.utf8Start, markup.utf8CodeUnitCount)
    }

    /// Appends bytes as they are (markup, or text already escaped).
    @inlinable
    public mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let base = bytes.baseAddress { append(base, bytes.count) }
    }

    /// Copies `count` bytes from `start` to the end of the text.
    @inlinable
    mutating func append(_ start: UnsafePointer<UInt8>, _ count: Int) {
        guard count > 0 else { return }
        if storage.count - used < count { grow(count) }
        let at = used
        storage.withUnsafeMutableBufferPointer { ($0.baseAddress! + at).update(from: start, count: count) }
        used += count
    }

    @usableFromInline
    mutating func grow(_ count: Int) {
        storage += repeatElement(0, count: max(storage.count, count))
    }

    /// Appends element content: markup characters as entities, a carriage return as a character
    /// reference (a parser would turn it into a line feed), tabs and line feeds as they are, the
    /// other C0 controls (which XML 1.0 forbids) left out.
    @inlinable
    public mutating func text(_ utf8: UnsafeBufferPointer<UInt8>) {
        escape(utf8, attribute: false)
    }

    /// Appends an attribute value (for a `"`-quoted attribute): as `text`, and `"`, tabs and line
    /// feeds as references too (a parser would normalise them to spaces).
    @inlinable
    public mutating func attribute(_ utf8: UnsafeBufferPointer<UInt8>) {
        escape(utf8, attribute: true)
    }

    /// `text` of a string.
    @inlinable
    public mutating func text(_ string: String) {
        var s = string
        s.withUTF8 { escape($0, attribute: false) }
    }

    /// `attribute` of a string.
    @inlinable
    public mutating func attribute(_ string: String) {
        var s = string
        s.withUTF8 { escape($0, attribute: true) }
    }

    /// Decimal digits, without an intermediate `String`.
    @inlinable
    public mutating func append(integer: Int64) {
        if integer < 0 {
            if integer == .min { return raw("-9223372036854775808") }
            raw("-")
        }
        var n = integer.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            } while n > 0
            append(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + i, buffer.count - i)
        }
    }

    /// `YYYYMMDDhhmmss` of a UTC instant, as `UTCTime.compact` writes it, without a `String`.
    /// The date's eight digits are kept for the next time on the same day (a guide's times come
    /// channel by channel in order: most share their day with the one before).
    @inlinable
    public mutating func append(compactTime seconds: Int64) {
        var (days, rem) = seconds.quotientAndRemainder(dividingBy: 86_400)
        if rem < 0 { days -= 1; rem += 86_400 }
        if days != lastDay {
            let (year, month, day) = UTCTime.civilDate(days: days)
            guard (0...9999).contains(year) else {
                var text = UTCTime.compact(seconds)
                return text.withUTF8 { raw($0) }
            }
            lastDay = days
            lastDate = 0
            withUnsafeMutableBytes(of: &lastDate) { b in
                Self.put(year, into: b, at: 0, width: 4)
                Self.put(month, into: b, at: 4, width: 2)
                Self.put(day, into: b, at: 6, width: 2)
            }
        }
        var digits: (UInt64, UInt64) = (lastDate, 0)
        let r = Int(rem)
        withUnsafeMutableBytes(of: &digits) { b in
            Self.put(r / 3600, into: b, at: 8, width: 2)
            Self.put(r % 3600 / 60, into: b, at: 10, width: 2)
            Self.put(r % 60, into: b, at: 12, width: 2)
            append(b.baseAddress!.assumingMemoryBound(to: UInt8.self), 14)
        }
    }

    /// `value`'s last `width` decimal digits at `offset`.
    @inlinable
    static func put(_ value: Int, into b: UnsafeMutableRawBufferPointer, at offset: Int, width: Int) {
        var v = value
        for k in stride(from: offset + width - 1, through: offset, by: -1) {
            b[k] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        }
    }

    @inlinable
    mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>, attribute: Bool) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var start = 0, i = 0
        while i < count {
            while i + 8 <= count && !Self.mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) { i += 8 }
            let end = min(i + 8, count)
            while i < end {
                let byte = base[i]
                i += 1
                guard byte < 0x20 || byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 else { continue }
                if byte == 0x22 && !attribute || (byte == 0x09 || byte == 0x0A) && !attribute { continue }
                append(base + start, i - 1 - start)
                start = i
                appendEscape(byte)
            }
        }
        append(base + start, count - start)
    }

    /// Whether any of the eight bytes of `word` is a C0 control, `"`, `&`, `<` or `>` (exact: no
    /// byte is missed, and none is reported that is not there).
    @inlinable
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highBits: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highBits }
        let control = (word &- 0x20 &* ones) & ~word & highBits
        return control | hasZeroByte(word ^ (0x22 &* ones)) | hasZeroByte(word ^ (0x26 &* ones))
            | hasZeroByte(word ^ (0x3C &* ones)) | hasZeroByte(word ^ (0x3E &* ones)) != 0
    }

    /// A byte that needs escaping (one `escape` did not pass through): its entity or reference,
    /// or nothing for a control character XML cannot hold.
    @usableFromInline
    mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case 0x26: raw("&amp;")
        case 0x3C: raw("&lt;")
        case 0x3E: raw("&gt;")
        case 0x22: raw("&quot;")
        case 0x0D: raw("&#13;")
        case 0x09: raw("&#9;")
        case 0x0A: raw("&#10;")
        default: break
        }
    }
}
