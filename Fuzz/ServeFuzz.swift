// libFuzzer entry point for serve's request layer: the plain feed request read from raw bytes
// (PlainFeedRequest), header parsers (HTTP dates, Accept-Encoding and its qvalues, If-None-Match), query and form decoding, path resolution (the feed file name,
// the rest of a path, #ROWID), date parsing (the day of a guide page, date edits) and paging,
// and the caps and escaping of what pages echo (HTMLText, in Primitives). Compiled by scripts/fuzz together with
// Sources/Serve/{RequestInput,HTML,PlainFeedRequest}.swift as module Serve (HTTPDate is Primitives') (no Hummingbird, no
// Foundation): no `import Serve`.
//
// Every input goes through every parser (a seed for one is an input for all); its first byte
// also picks the numbers the functions take besides text (a cap, a list's total).
import Primitives

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let selector = Int(bytes.first ?? 0)

    // HTTP dates: a parsed date is one of years 0...9999 and formats back to itself.
    if let t = HTTPDate.parse(text) {
        precondition(t >= UTCTime.seconds(year: 0, month: 1, day: 1) && t <= UTCTime.seconds(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 60), "HTTP date \(t)")
        if t < UTCTime.seconds(year: 10000, month: 1, day: 1) {
            precondition(HTTPDate.parse(HTTPDate.format(t)) == t, "HTTP date round trip \(t)")
        }
    }

    // Date edits: within a day of years 0...9999, and the UTC form reads back the same.
    if let t = RequestInput.instant(text) {
        precondition(t >= UTCTime.seconds(year: 0, month: 1, day: 1) - 15 * 3600 && t <= UTCTime.seconds(year: 10000, month: 1, day: 1) + 15 * 3600, "instant \(t)")
        if t >= 0 && t < UTCTime.seconds(year: 10000, month: 1, day: 1) {
            precondition(UTCTime.parseDateTime(UTCTime.iso8601(t)) == t, "instant round trip \(t)")
        }
    }
    if let day = RequestInput.day(text) {
        precondition((1900...9999).contains(day.year) && (1...12).contains(day.month) && (1...31).contains(day.day), "day \(day)")
    }
    if let number = RequestInput.finiteNumber(text) { precondition(number.isFinite) }

    // Numbers and paging: bounded, and the offset computed from any total without overflow.
    if let page = RequestInput.page(text) {
        precondition((1...RequestInput.maxPage).contains(page), "page \(page)")
        var total = 0
        for b in bytes.prefix(8) { total = total << 8 | Int(b) }
        let paging = Paging(page: page, total: total, pageSize: 50)
        precondition(paging.offset >= 0 && paging.lastPage >= 1 && paging.offset <= (RequestInput.maxPage - 1) * 50)
        _ = paging.isPastTheEnd
    }
    let huge = Paging(page: selector * 4099, total: Int.max - selector, pageSize: 1 + selector)
    precondition(huge.offset >= 0 && huge.lastPage >= 1)
    if let row = RequestInput.rowID(text) { precondition(row >= 0) }
    if let digits = RequestInput.digits(text, maxDigits: 18) { precondition(digits >= 0) }

    // Paths: a feed name is one the exporter writes, so it cannot leave the directory.
    let raw = Substring(text)
    if let name = RequestInput.feedFileName(fromRawPath: raw) {
        precondition(FeedFileName.isExporterName(name) && !name.contains("/") && !name.hasPrefix(".") && !name.utf8.contains(0), "feed name \(name)")
    }
    if let key = RequestInput.programmeKey(fromRawPath: raw) {
        precondition(!key.channel.isEmpty && (0...9999).contains(key.clump), "programme key \(key)")
        precondition(key.start >= UTCTime.seconds(year: 1900, month: 1, day: 1) && key.start <= UTCTime.seconds(year: 10000, month: 1, day: 1), "programme start \(key.start)")
    }
    if let t = RequestInput.compactTime(text), t < UTCTime.seconds(year: 9999, month: 12, day: 31, hour: 23, minute: 59) {
        // Leap seconds aside, the time reads back from what the pages write.
        if !text.hasSuffix("60") { precondition(RequestInput.compactTime(UTCTime.compact(t)) == t, "compact round trip \(t)") }
    }
    if let slug = RequestInput.showSlug(fromRawPath: raw) {
        precondition(!slug.contains("/") && !slug.contains(".") && (14...64).contains(slug.utf8.count), "slug \(slug)")
    }
    if let later = RequestInput.hoursLater(text) { precondition((0...RequestInput.maxHoursLater).contains(later)) }
    let rest = RequestInput.rest(ofPath: raw, after: selector % 4)
    precondition(text.hasSuffix(rest), "rest of path")
    if let decoded = RequestInput.percentDecoded(text), !text.contains("%") {
        precondition(decoded == text, "decoding without an escape")
    }

    // Query strings and forms.
    let form = FormData(text)
    precondition(form.names.count <= text.utf8.filter { $0 == UInt8(ascii: "&") }.count + 1)
    for name in form.names { _ = form[name] }

    // Headers.
    let gzip = RequestInput.acceptsGzip(text)
    if gzip { precondition(text.lowercased().contains("gzip") || text.contains("*"), "gzip accepted from \(text)") }
    if let q = RequestInput.qValue(bytes) { precondition((0...1000).contains(q), "qvalue \(q)") }
    _ = RequestInput.sameTag(raw, "\"1f-2\"")

    // The plain feed request read from raw bytes (PlainFeedFastPath): within the input and its
    // cap, its parts inside the head, a target under /feeds/, values without CR or LF; the
    // head alone reads the same, and any shorter prefix of it waits for more.
    do {
        let raw = UnsafeRawBufferPointer(bytes)
        switch PlainFeedRequest.read(raw) {
        case .request(let request):
            precondition(request.length <= raw.count && request.length <= PlainFeedRequest.maxLength, "plain request length")
            for range in [request.target, request.acceptEncoding, request.ifNoneMatch, request.ifModifiedSince].compactMap({ $0 }) {
                precondition(range.lowerBound >= 0 && range.upperBound <= request.length, "plain request range")
                precondition(!raw[range].contains(13) && !raw[range].contains(10), "CR or LF in a value")
            }
            precondition(raw[request.target].starts(with: "/feeds/".utf8), "plain request target")
            let head = UnsafeRawBufferPointer(rebasing: raw[0..<request.length])
            precondition(PlainFeedRequest.read(head) == .request(request), "the head alone")
            for cut in Set([request.length - 1, request.length / 2]) where cut >= 0 {
                precondition(PlainFeedRequest.read(UnsafeRawBufferPointer(rebasing: raw[0..<cut])) == .incomplete, "a prefix of \(cut) bytes")
            }
        case .incomplete:
            precondition(raw.count < PlainFeedRequest.maxLength, "incomplete beyond the cap")
        case .unusual:
            break
        }
    }

    // What pages echo: escaped, and capped in escaped bytes.
    let escaped = HTMLText.escape(text)
    precondition(!escaped.utf8.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }, "escape")
    precondition(!escaped.utf8.contains { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) || $0 == 0x7F }, "control character")
    let limit = selector * 40
    let short = HTMLText.shortened(text, to: limit)
    precondition(HTMLText.escape(short).utf8.count <= limit + 3, "cap \(limit): \(HTMLText.escape(short).utf8.count) bytes")
    if escaped.utf8.count <= limit { precondition(short == text, "shortened below the cap") }
    precondition(HTML.urlComponent(text).utf8.allSatisfy { b in
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E || b == 0x25
    }, "url component")
    return 0
}
