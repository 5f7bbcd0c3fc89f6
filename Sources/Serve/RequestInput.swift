import Primitives

/// The request layer: every value a client sends (headers, query, form, path) becomes a value
/// of ours here, and only here. Each function takes text and returns a bounded value, or nil
/// that the page answers with a 400 (or ignores, where the value is only a hint such as a
/// validator). Numbers are read with a fixed or capped count of digits, never by `Int(text)`
/// followed by arithmetic: nothing a client sends can make a multiplication or conversion trap.
///
/// No Foundation, no Hummingbird: `scripts/fuzz serve` compiles this file with
/// HTML.swift and Primitives into a libFuzzer target (Fuzz/ServeFuzz.swift).
///
///     RequestInput.page("3")                        // 3
///     RequestInput.page("184467440737095517")       // nil: a 400
///     RequestInput.acceptsGzip("gzip;q=0")          // false
enum RequestInput {
    // MARK: Numbers

    /// The largest page number a list accepts: with 50 rows a page, 50 million rows.
    static let maxPage = 1_000_000

    /// A decimal number of 1 to `maxDigits` ASCII digits (no sign, no space); nil otherwise.
    static func digits<S: StringProtocol>(_ text: S, maxDigits: Int) -> Int? { digits(bytes: text.utf8, maxDigits: maxDigits) }

    static func digits<C: Collection<UInt8>>(bytes: C, maxDigits: Int) -> Int? {
        guard !bytes.isEmpty, bytes.count <= maxDigits, maxDigits <= 18 else { return nil }
        var n = 0
        for b in bytes {
            guard b >= 48, b <= 57 else { return nil }
            n = n * 10 + Int(b - 48)
        }
        return n
    }

    /// `?page=`: absent is 1; otherwise 1...`maxPage`, else nil.
    static func page(_ text: String?) -> Int? {
        guard let text else { return 1 }
        guard let n = digits(text, maxDigits: 7), (1...maxPage).contains(n) else { return nil }
        return n
    }

    /// `#ROWID` (what the pages link to): a row id of at most 18 digits, else nil.
    static func rowID<S: StringProtocol>(_ text: S) -> Int64? {
        guard text.first == "#", let n = digits(text.dropFirst(), maxDigits: 18) else { return nil }
        return Int64(n)
    }

    /// `?day=YYYY-MM-DD`, a day that exists in 1900...9999; nil otherwise.
    static func day(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let b = Array(text.utf8.prefix(11))
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let year = digits(bytes: b[0..<4], maxDigits: 4), let month = digits(bytes: b[5..<7], maxDigits: 2),
              let day = digits(bytes: b[8..<10], maxDigits: 2),
              (1900...9999).contains(year), (1...12).contains(month), (1...UTCTime.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        return (year, month, day)
    }

    /// A date edit as the form sends it (`datetime-local`, which has no zone: the form says
    /// UTC) or as a script does (`Z`, `+05:00`): the instant, with its offset applied; nil for
    /// anything else (`Zjunk`, `+99:99`, 30 February).
    static func instant(_ text: String) -> Int64? { UTCTime.parseDateTime(text) }

    /// A number edit that is a finite number (not `NaN`, not `inf`, not `1e999`); nil otherwise.
    static func finiteNumber(_ text: String) -> Double? {
        guard text.utf8.count <= 64, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    // MARK: Text

    /// Percent-decoding (with `+` as a space in forms and queries). Nil for a malformed escape
    /// or bytes that are not UTF-8, as Foundation's `removingPercentEncoding` answers.
    static func percentDecoded<S: StringProtocol>(_ text: S, plusIsSpace: Bool = false) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 48...57: b - 48
            case 65...70: b - 55
            case 97...102: b - 87
            default: nil
            }
        }
        while index != utf8.endIndex {
            let b = utf8[index]
            index = utf8.index(after: index)
            if b == UInt8(ascii: "%") {
                guard index != utf8.endIndex, let high = hex(utf8[index]) else { return nil }
                index = utf8.index(after: index)
                guard index != utf8.endIndex, let low = hex(utf8[index]) else { return nil }
                index = utf8.index(after: index)
                out.append(high << 4 | low)
            } else {
                out.append(plusIsSpace && b == UInt8(ascii: "+") ? 0x20 : b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    // MARK: Paths

    /// The raw path after its first `components` segments (still percent-encoded):
    /// `/model/Channel/a%2Fb` after 2 is `a%2Fb`.
    static func rest(ofPath path: Substring, after components: Int) -> Substring {
        var path = path
        for _ in 0..<components {
            guard let slash = path.dropFirst().firstIndex(of: "/") else { return "" }
            path = path[slash...]
        }
        return path.dropFirst()
    }

    /// The raw (still percent-encoded) rest of a request path after `/feeds/`, decoded once:
    /// nil when it does not name a file the exporter writes (`FeedFileName`).
    static func feedFileName(fromRawPath raw: Substring) -> String? {
        guard raw.utf8.count <= 3 * 255, let name = raw.isEmpty ? "index.html" : percentDecoded(raw) else { return nil }
        return FeedFileName.isExporterName(name) ? name : nil
    }

    /// A programme's page after `/programmes/` (still percent-encoded):
    /// `CHANNEL/YYYYMMDDhhmmss` or `CHANNEL/YYYYMMDDhhmmss/CLUMP`, the start in UTC (a time that
    /// exists, years 1900...9999), the clump index of at most 4 digits; the channel decoded once
    /// (`#ROWID` stands for a channel whose id cannot be a path segment). Nil otherwise.
    ///
    ///     RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127200000")   // ("RTE2.ie", 1795809600, 0)
    static func programmeKey(fromRawPath raw: Substring) -> (channel: String, start: Int64, clump: Int)? {
        guard raw.utf8.count <= 3 * 1024 else { return nil }
        var parts = raw.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        var clump = 0
        if parts.count >= 3, parts[parts.count - 2].utf8.count == 14, let c = digits(parts[parts.count - 1], maxDigits: 4) {
            clump = c
            parts.removeLast()
        }
        guard let start = compactTime(parts.removeLast()) else { return nil }
        let channel = parts.joined(separator: "/")
        guard !channel.isEmpty, let decoded = percentDecoded(channel) else { return nil }
        return (decoded, start, clump)
    }

    /// `YYYYMMDDhhmmss` (UTC, as `UTCTime.compact` writes it), a time that exists in years
    /// 1900...9999 (a leap second as :60); nil otherwise.
    static func compactTime<S: StringProtocol>(_ text: S) -> Int64? {
        let b = Array(text.utf8.prefix(15))
        guard b.count == 14, let year = digits(bytes: b[0..<4], maxDigits: 4), let month = digits(bytes: b[4..<6], maxDigits: 2),
              let day = digits(bytes: b[6..<8], maxDigits: 2), let hour = digits(bytes: b[8..<10], maxDigits: 2),
              let minute = digits(bytes: b[10..<12], maxDigits: 2), let second = digits(bytes: b[12..<14], maxDigits: 2),
              (1900...9999).contains(year), (1...12).contains(month), (1...UTCTime.daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second <= 60 else { return nil }
        return UTCTime.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// A show calendar's file after `/shows/`: `SLUG.ics`, the slug of lower-case ASCII letters,
    /// digits and '-' (14 to 64 bytes, what `ShowFeed.slug` writes); the slug, or nil.
    static func showSlug(fromRawPath raw: Substring) -> String? {
        guard raw.hasSuffix(".ics") else { return nil }
        let slug = raw.dropLast(4)
        guard (14...64).contains(slug.utf8.count),
              slug.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }) else { return nil }
        return String(slug)
    }

    /// `?later=N` of the guide: how many hours past now its grid starts, 0...`maxHoursLater`;
    /// absent is 0, anything else nil.
    static func hoursLater(_ text: String?) -> Int? {
        guard let text else { return 0 }
        guard let n = digits(text, maxDigits: 3), n <= maxHoursLater else { return nil }
        return n
    }

    /// Two weeks: a guide rarely holds more.
    static let maxHoursLater = 14 * 24

    // MARK: Headers

    /// Whether `Accept-Encoding` accepts gzip: its own weight (or that of `*` when gzip is not
    /// named) above 0. `gzip;q=0` and `*;q=0` refuse it; a weight that is not a qvalue counts as 0.
    static func acceptsGzip(_ header: String) -> Bool {
        var gzip: Int?, any: Int?
        for member in header.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).prefix(64) {
            let parts = member.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            let coding = String(decoding: trimmed(parts[0]), as: UTF8.self).lowercased()
            var weight = 1000
            for parameter in parts.dropFirst() {
                let p = trimmed(parameter).filter { $0 != 0x20 && $0 != 0x09 }
                guard p.count >= 2, p[0] | 0x20 == UInt8(ascii: "q"), p[1] == UInt8(ascii: "=") else { continue }
                weight = qValue(p.dropFirst(2)) ?? 0
            }
            if coding == "gzip" || coding == "x-gzip" { gzip = max(gzip ?? 0, weight) } else if coding == "*" { any = weight }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// A qvalue (RFC 9110, 12.4.2: `0`, `0.5`, `1.000`) in thousandths; nil when it is none.
    static func qValue<C: Collection<UInt8>>(_ text: C) -> Int? {
        let b = Array(text.prefix(6))
        guard !b.isEmpty, text.count <= 5, b[0] == UInt8(ascii: "0") || b[0] == UInt8(ascii: "1") else { return nil }
        var thousandths = Int(b[0] - 48) * 1000
        if b.count > 1 {
            guard b[1] == UInt8(ascii: ".") else { return nil }
            var scale = 100
            for d in b.dropFirst(2) {
                guard d >= 48, d <= 57 else { return nil }
                thousandths += Int(d - 48) * scale
                scale /= 10
            }
        }
        return thousandths <= 1000 ? thousandths : nil
    }

    /// A weak comparison of one If-None-Match member with our strong tag (RFC 9110, 8.8.3.2).
    static func sameTag(_ member: Substring, _ etag: String) -> Bool {
        var tag = member.drop { $0 == " " || $0 == "\t" }
        while tag.last == " " || tag.last == "\t" { tag = tag.dropLast() }
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        return tag == etag
    }

    private static func trimmed<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> C.SubSequence {
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let end = bytes[start...].lastIndex { $0 != 0x20 && $0 != 0x09 }.map { bytes.index(after: $0) } ?? start
        return bytes[start..<end]
    }
}

/// Which rows of a list a page shows: the page number read by `RequestInput.page`, its offset
/// computed within bounds; a page past the last shows no rows (the list may have shrunk since
/// its link was made).
///
///     let paging = Paging(page: 3, total: 120, pageSize: 50)   // offset 100, lastPage 3
struct Paging: Equatable {
    let page: Int
    let pageSize: Int
    let total: Int

    init(page: Int, total: Int, pageSize: Int) {
        precondition(pageSize > 0 && pageSize <= 10_000)
        self.page = min(max(page, 1), RequestInput.maxPage)
        self.total = max(total, 0)
        self.pageSize = pageSize
    }

    var lastPage: Int { max(1, total / pageSize + (total % pageSize == 0 ? 0 : 1)) }
    /// Rows before this page (at most `maxPage` times `pageSize`: no overflow).
    var offset: Int { (page - 1) * pageSize }
    /// Whether the page has rows to read at all.
    var isPastTheEnd: Bool { offset >= total }
}

/// `application/x-www-form-urlencoded` and query strings: name -> every value in order.
struct FormData {
    private(set) var values: [String: [String]] = [:]

    init(_ encoded: String) {
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(parts[0]), value = parts.count > 1 ? Self.decode(parts[1]) : ""
            values[name, default: []].append(value)
        }
    }

    /// A name or value: `+` a space, escapes decoded; a malformed one as it came.
    static func decode(_ part: Substring) -> String {
        RequestInput.percentDecoded(part, plusIsSpace: true) ?? String(part).replacing("+", with: " ")
    }

    /// The last value of `name` (a checkbox after its hidden "false" default).
    subscript(name: String) -> String? { values[name]?.last }
    var names: [String] { Array(values.keys) }
}
