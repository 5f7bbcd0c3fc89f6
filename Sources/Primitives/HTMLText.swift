/// Text for HTML, escaped once here for every page the project writes (the server's pages, the
/// feeds' index.html): element content and double-quoted attribute values alike.
public enum HTMLText {
    /// Escapes for element content and for double-quoted attribute values alike. Control
    /// characters other than tab and newline become U+FFFD (they are not allowed in HTML).
    ///
    /// Works on UTF-8 bytes: every byte to replace is ASCII or C1's lead byte 0xC2, and no such
    /// byte occurs inside another character's sequence. Text with none of them (most) is
    /// returned as it is, with no copy: building pages went mostly into escaping scalar by scalar.
    public static func escape(_ value: String) -> String {
        let utf8 = value.utf8
        guard let first = utf8.firstIndex(where: needsEscaping) else { return value }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + utf8.count / 8 + 16)
        out.append(contentsOf: utf8[..<first])
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]   // U+FFFD
        var index = first
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8)
            case 0x09, 0x0A: out.append(byte)
            case 0x00..<0x20, 0x7F: out.append(contentsOf: replacement)
            case 0xC2 where index != utf8.endIndex && (0x80...0x9F).contains(utf8[index]):
                // U+0080...U+009F (C1 controls): two bytes.
                out.append(contentsOf: replacement)
                index = utf8.index(after: index)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether a UTF-8 byte may start something `escape` replaces.
    private static func needsEscaping(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x0A: false
        case 0x00..<0x20, 0x7F, 0xC2, UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
        default: false
        }
    }

    /// `value` cut so that, escaped, it takes at most `limit` UTF-8 bytes, then an ellipsis: no
    /// text from a feed (a 9 MB title, one letter with a million combining marks, a title of
    /// ampersands) makes a page big. Cut between Unicode scalars (a cluster of marks may lose
    /// some), reading no further than the cut.
    ///
    ///     HTMLText.shortened("A long title", to: 6)   // "A long…"
    ///     HTMLText.shortened("a&b", to: 4)            // "a…" ("a&amp;" would be 6 bytes)
    public static func shortened(_ value: String, to limit: Int) -> String {
        let utf8 = value.utf8
        // Escaping at most sextuples a byte (`"` is `&quot;`): short text needs no count.
        if utf8.count <= limit / 6 { return value }
        var used = 0
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let (next, bytes) = escapedLength(of: utf8, at: index)
            if used + bytes > limit { break }
            used += bytes
            index = next
        }
        if index == utf8.endIndex { return value }
        return String(value.unicodeScalars[..<index]) + "…"
    }

    /// The length `escape` gives the scalar at `index`, and where the next one starts.
    private static func escapedLength(of utf8: String.UTF8View, at index: String.Index) -> (next: String.Index, bytes: Int) {
        let byte = utf8[index]
        let next = utf8.index(after: index)
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "'"): return (next, 5)
        case UInt8(ascii: "<"), UInt8(ascii: ">"): return (next, 4)
        case UInt8(ascii: "\""): return (next, 6)
        case 0x09, 0x0A: return (next, 1)
        case 0x00..<0x20, 0x7F: return (next, 3)
        case 0x20..<0x80: return (next, 1)
        default:
            // A multi-byte scalar: its bytes as they are, but a C1 control (0xC2 0x80...0x9F)
            // becomes U+FFFD, 3 bytes.
            var end = next
            var count = 1
            while end != utf8.endIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(after: end); count += 1 }
            return (end, byte == 0xC2 && count == 2 && utf8[next] <= 0x9F ? 3 : count)
        }
    }
}
