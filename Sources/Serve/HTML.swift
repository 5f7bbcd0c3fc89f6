/// HTML text built by appending, every text from the database or a request escaped on the way in.
///
/// Pages are small and written by hand (no template engine): what must never happen is an
/// unescaped feed title, so `text` and `attribute` are the only ways to put data in.
struct HTML {
    private(set) var output = ""

    /// Markup written in this repository (never data).
    mutating func raw(_ markup: StaticString) { output += markup.description }
    /// Markup assembled from constants and already escaped parts.
    mutating func trusted(_ markup: String) { output += markup }
    /// Data as element content.
    mutating func text(_ value: String) { output += Self.escape(value) }

    /// Escapes for element content and for double-quoted attribute values alike. Control
    /// characters other than tab and newline become U+FFFD (they are not allowed in HTML).
    ///
    /// Works on UTF-8 bytes: every byte to replace is ASCII or C1's lead byte 0xC2, and no such
    /// byte occurs inside another character's sequence. Text with none of them (most) is
    /// returned as it is, with no copy: building pages went mostly into escaping scalar by scalar.
    static func escape(_ value: String) -> String {
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
    ///     HTML.shortened("A long title", to: 6)   // "A long…"
    ///     HTML.shortened("a&b", to: 4)            // "a…" ("a&amp;" would be 6 bytes)
    static func shortened(_ value: String, to limit: Int) -> String {
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

    /// Percent-encodes a path segment or query value (RFC 3986 unreserved characters stay).
    static func urlComponent(_ value: String) -> String {
        var result = ""
        for b in value.utf8 {
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: result.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return result
    }

    /// A whole page: the layout, the style sheet link, a title and `body`.
    static func page(title: String, signedIn: Bool, tokenConfigured: Bool, wide: Bool = false, _ body: (inout HTML) -> Void) -> String {
        // Titles quote data (an identifier from a feed, a search): written twice, so capped.
        let title = shortened(title, to: 1000)
        var page = HTML()
        page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        page.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        page.raw("<link rel=\"stylesheet\" href=\"/style.css\"><title>")
        page.text(title)
        page.raw(" · tvimport</title></head><body><header><nav aria-label=\"Site\"><a href=\"/\">Guide</a> <a href=\"/feeds/\">Feeds</a> <a href=\"/model\">Model</a>")
        page.raw(" <form class=\"search\" method=\"get\" action=\"/search\"><input type=\"search\" name=\"q\" placeholder=\"Title\" aria-label=\"Search titles\"><button>Search</button></form>")
        if tokenConfigured {
            page.raw(signedIn ? " <form method=\"post\" action=\"/logout\" class=\"inline\"><button>Sign out</button></form>" : " <a href=\"/login\">Sign in</a>")
        }
        page.raw(wide ? "</nav></header><main class=\"wide\"><h1>" : "</nav></header><main><h1>")
        page.text(title)
        page.raw("</h1>")
        body(&page)
        page.raw("</main></body></html>\n")
        return page.output
    }
}
