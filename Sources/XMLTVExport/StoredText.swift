import Glibc

/// The UTF-8 bytes of one stored text (a column of the row a cursor is on, or of a `MemberStream`),
/// valid until the cursor moves or the block is loaded again.
typealias StoredBytes = UnsafeBufferPointer<UInt8>

/// How the import (`ListingsMapper`) stores what XMLTV repeats, read back as byte ranges of the stored text:
/// `"\n"`-separated lines, `key=value` lines, `tag\tlang\ttext` lines for further languages. Each
/// is cut exactly where `String`'s Character-wise `split` and `firstIndex(of:)` cut, which the
/// export did before, so that its bytes stay the same.
enum StoredText {
    /// No bytes (a missing text written as an empty one).
    static var empty: StoredBytes { StoredBytes(start: nil, count: 0) }

    /// Whether `text` is exactly `word`'s bytes (the words compared here are ASCII, which only
    /// their own bytes are canonically equivalent to: as `String`'s `==` compared them).
    static func equals(_ text: StoredBytes, _ word: StaticString) -> Bool {
        text.count == word.utf8CodeUnitCount && (text.count == 0 || memcmp(text.baseAddress!, word.utf8Start, text.count) == 0)
    }

    /// Each line of `"\n"`-separated text (none for nil or empty text). A CR LF pair is one
    /// `Character`, which `split(separator: "\n")` does not cut: neither is it cut here.
    static func forEachLine(_ text: StoredBytes?, _ body: (StoredBytes) -> Void) {
        guard let text, let base = text.baseAddress, text.count > 0 else { return }
        var start = 0
        for i in 0..<text.count where base[i] == 0x0A && (i == 0 || base[i - 1] != 0x0D) {
            body(StoredBytes(start: base + start, count: i - start))
            start = i + 1
        }
        body(StoredBytes(start: base + start, count: text.count - start))
    }

    /// `key=value` cut at the first `=` Character; the whole line and an empty value without one.
    static func keyed(_ line: StoredBytes) -> (key: StoredBytes, value: StoredBytes) {
        guard let base = line.baseAddress, var cut = line.firstIndex(of: UInt8(ascii: "=")) else {
            return (line, StoredBytes(start: line.baseAddress, count: 0))
        }
        // Beside a non-ASCII character this `=` may be part of a larger Character (a combining
        // mark after it), which `firstIndex(of: "=")` passes over: let `String` find the cut.
        if (cut > 0 && base[cut - 1] >= 0x80) || (cut + 1 < line.count && base[cut + 1] >= 0x80) {
            let s = String(decoding: line, as: UTF8.self)
            guard let i = s.firstIndex(of: "=") else { return (line, StoredBytes(start: base + line.count, count: 0)) }
            cut = s.utf8.distance(from: s.startIndex, to: i)
        }
        return (StoredBytes(rebasing: line[..<cut]), StoredBytes(rebasing: line[(cut + 1)...]))
    }

    /// The first `count - 1` tab-separated fields of a line and the rest as the last (empty
    /// fields when the line has fewer tabs): the `icons` and `images` lines.
    static func tabFields(_ line: StoredBytes, count: Int) -> [StoredBytes] {
        var fields: [StoredBytes] = []
        fields.reserveCapacity(count)
        var from = 0
        while fields.count < count - 1 {
            let end = line[from...].firstIndex(of: 0x09) ?? line.count
            fields.append(StoredBytes(rebasing: line[from..<end]))
            from = min(end + 1, line.count)
        }
        fields.append(StoredBytes(rebasing: line[from...]))
        return fields
    }

    /// The element a further-language line belongs to.
    enum Tag { case title, subTitle, desc }

    /// The entries of `otherLanguages` in order: `tag\tlang\ttext` lines; a line that is not one
    /// continues the text before it, line break included (one before any entry is dropped).
    static func forEachOtherLanguage(_ text: StoredBytes?, _ body: (Tag, _ lang: StoredBytes, _ text: StoredBytes) -> Void) {
        var current: (tag: Tag, lang: StoredBytes, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>)?
        forEachLine(text) { line in
            if let (tag, lang, rest) = entry(line) {
                if let c = current { body(c.tag, c.lang, StoredBytes(start: c.start, count: c.end - c.start)) }
                current = (tag, lang, rest.baseAddress!, rest.baseAddress! + rest.count)
            } else if current != nil {
                current!.end = line.baseAddress! + line.count
            }
        }
        if let c = current { body(c.tag, c.lang, StoredBytes(start: c.start, count: c.end - c.start)) }
    }

    /// `tag\tlang\ttext` with a known tag (the text may hold further tabs).
    private static func entry(_ line: StoredBytes) -> (Tag, StoredBytes, StoredBytes)? {
        guard let first = line.firstIndex(of: 0x09), let second = line[(first + 1)...].firstIndex(of: 0x09) else { return nil }
        let tag: Tag
        switch StoredBytes(rebasing: line[..<first]) {
        case let t where equals(t, "title"): tag = .title
        case let t where equals(t, "sub-title"): tag = .subTitle
        case let t where equals(t, "desc"): tag = .desc
        default: return nil
        }
        return (tag, StoredBytes(rebasing: line[(first + 1)..<second]), StoredBytes(rebasing: line[(second + 1)...]))
    }

    /// tv_validate_file's grammar of `xmltv_ns`: three dot-separated parts, each an optional
    /// number with an optional "/total", spaces allowed around every piece. A non-ASCII
    /// character or a CR LF pair (one Character) is neither digit, space nor separator there:
    /// a number holding one is never well formed.
    static func isWellFormedXMLTVNS(_ raw: StoredBytes) -> Bool {
        if raw.contains(where: { $0 >= 0x80 }) { return false }
        if raw.count > 1, (1..<raw.count).contains(where: { raw[$0 - 1] == 0x0D && raw[$0] == 0x0A }) { return false }
        var parts = 0, from = 0
        while true {
            let end = raw[from...].firstIndex(of: UInt8(ascii: ".")) ?? raw.count
            parts += 1
            let slash = raw[from..<end].firstIndex(of: UInt8(ascii: "/"))
            if let slash {
                guard raw[(slash + 1)..<end].firstIndex(of: UInt8(ascii: "/")) == nil,
                      digits(raw[from..<slash], required: false), digits(raw[(slash + 1)..<end], required: true) else { return false }
            } else if !digits(raw[from..<end], required: false) {
                return false
            }
            if end == raw.count { return parts == 3 }
            from = end + 1
        }
    }

    /// Digits between optional spaces; `required`: at least one.
    private static func digits(_ s: Slice<StoredBytes>, required: Bool) -> Bool {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = s.firstIndex(where: { !isSpace($0) }), let last = s.lastIndex(where: { !isSpace($0) }) else { return !required }
        return s[first...last].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
