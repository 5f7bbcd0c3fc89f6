import Primitives
import XMLTV

/// Writes an XMLTV document element by element, in the order of the XMLTV DTD
/// (`/usr/share/xmltv/xmltv.dtd`), with times as `YYYYMMDDhhmmss +0000`. Text is buffered and
/// handed to `output` in blocks, so a guide of any size passes through a fixed amount of memory.
/// The same values always give the same bytes (no date, no generator version in the document).
public struct XMLTVDocumentWriter {
    private var buffer: [UInt8] = []
    private let output: ([UInt8]) throws -> Void
    private static let blockSize = 1 << 16

    /// Starts the document; `output` receives its bytes in order.
    public init(output: @escaping ([UInt8]) throws -> Void) {
        self.output = output
        buffer.reserveCapacity(Self.blockSize + 4096)
        append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE tv SYSTEM \"xmltv.dtd\">\n")
        append("<tv generator-info-name=\"tvimport\">\n")
    }

    /// A `<channel>`: display names (the id when it has none: the DTD wants one), icons, urls.
    public mutating func write(_ channel: XMLTVChannel) throws {
        append("  <channel")
        attribute("id", channel.id)
        append(">\n")
        let names = channel.displayNames.filter { !$0.text.isEmpty }
        for name in names.isEmpty ? [LocalizedText(text: channel.id)] : names { localized("display-name", name) }
        for icon in channel.icons { write(icon, indent: "    ") }
        for url in channel.urls { simple("url", url) }
        append("  </channel>\n")
        try flushIfFull()
    }

    /// A `<programme>` with every child the model holds, in the DTD's order.
    public mutating func write(_ p: XMLTVProgramme) throws {
        append("  <programme start=\"")
        time(p.start)
        if let stop = p.stop {
            append("\" stop=\"")
            time(stop)
        }
        append("\" channel=\"")
        escaped(p.channel, attribute: true)
        if p.clumpCount > 1 { append("\" clumpidx=\"\(p.clumpIndex)/\(p.clumpCount)") }
        append("\">\n")
        // title+ : a programme stored without one gets the feeds' word for it (an empty title is
        // an error to tv_validate_file).
        for t in p.titles.isEmpty ? [LocalizedText(text: "(untitled)")] : p.titles { localized("title", t) }
        for t in p.subTitles { localized("sub-title", t) }
        for t in p.descriptions { localized("desc", t) }
        if !p.credits.isEmpty {
            append("    <credits>\n")
            for role in Self.creditRoles {
                for c in p.credits where c.role == role {
                    append("      <\(role)")
                    if role == "actor" {
                        if let character = c.character { attribute("role", character) }
                        if c.isGuest { append(" guest=\"yes\"") }
                    }
                    append(">")
                    escaped(c.name, attribute: false)
                    append("</\(role)>\n")
                }
            }
            append("    </credits>\n")
        }
        if let date = p.date { simple("date", date) }
        for c in p.categories { localized("category", c) }
        for k in p.keywords { localized("keyword", k) }
        if let language = p.language { simple("language", language) }
        if let language = p.originalLanguage { simple("orig-language", language) }
        if let length = p.length { append("    <length units=\"seconds\">\(length)</length>\n") }
        for icon in p.icons { write(icon, indent: "    ") }
        for url in p.urls { simple("url", url) }
        for country in p.countries { simple("country", country) }
        // An xmltv_ns number that breaks its own grammar ("00.05") is left out: tv_validate_file
        // refuses it and media servers would misread it.
        for e in p.episodeNumbers where e.system != "xmltv_ns" || Self.isWellFormedXMLTVNS(e.raw) {
            append("    <episode-num")
            attribute("system", e.system)
            append(">")
            escaped(e.raw, attribute: false)
            append("</episode-num>\n")
        }
        fields("video", p.video, order: ["present", "colour", "aspect", "quality"])
        fields("audio", p.audio, order: ["present", "stereo"])
        if p.previouslyShown {
            append("    <previously-shown")
            if let start = p.previouslyShownStart { attribute("start", start) }
            if let channel = p.previouslyShownChannel { attribute("channel", channel) }
            append("/>\n")
        }
        if p.premiere { append("    <premiere/>\n") }
        if p.lastChance { append("    <last-chance/>\n") }
        if p.isNew { append("    <new/>\n") }
        for type in p.subtitles {
            // The DTD knows three types; anything else is written untyped.
            append(Self.subtitleTypes.contains(type) ? "    <subtitles type=\"\(type)\"/>\n" : "    <subtitles/>\n")
        }
        for r in p.ratings { rating("rating", r) }
        for r in p.starRatings { rating("star-rating", r) }
        append("  </programme>\n")
        try flushIfFull()
    }

    /// Ends the document and hands out the last bytes.
    public mutating func finish() throws {
        append("</tv>\n")
        try output(buffer)
        buffer = []
    }

    static let creditRoles = ["director", "actor", "writer", "adapter", "producer", "composer", "editor", "presenter", "commentator", "guest"]
    static let subtitleTypes: Set<String> = ["teletext", "onscreen", "deaf-signed"]

    /// tv_validate_file's grammar of `xmltv_ns`: three dot-separated parts, each an optional
    /// number with an optional "/total", spaces allowed around every piece.
    static func isWellFormedXMLTVNS(_ raw: String) -> Bool {
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        return parts.allSatisfy { part in
            let halves = part.split(separator: "/", omittingEmptySubsequences: false)
            guard halves.count <= 2 else { return false }
            func digits(_ s: Substring, required: Bool) -> Bool {
                let t = s.trimmingSpaces
                return (required ? !t.isEmpty : true) && t.allSatisfy { $0.isASCII && $0.isNumber } && !t.contains(" ")
            }
            return digits(halves[0], required: false) && (halves.count == 1 || digits(halves[1], required: true))
        }
    }

    private mutating func flushIfFull() throws {
        guard buffer.count >= Self.blockSize else { return }
        try output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
    }

    private mutating func time(_ utc: Int64) {
        append(UTCTime.compact(utc))
        append(" +0000")
    }

    private mutating func simple(_ name: String, _ text: String) {
        append("    <\(name)>")
        escaped(text, attribute: false)
        append("</\(name)>\n")
    }

    private mutating func localized(_ name: String, _ text: LocalizedText) {
        append("    <\(name)")
        if let lang = text.lang, !lang.isEmpty { attribute("lang", lang) }
        append(">")
        escaped(text.text, attribute: false)
        append("</\(name)>\n")
    }

    private mutating func write(_ icon: Icon, indent: String) {
        append(indent + "<icon")
        attribute("src", icon.src)
        if let width = icon.width { append(" width=\"\(width)\"") }
        if let height = icon.height { append(" height=\"\(height)\"") }
        append("/>\n")
    }

    private mutating func fields(_ name: String, _ values: [String: String], order: [String]) {
        let present = order.filter { values[$0] != nil }
        guard !present.isEmpty else { return }
        append("    <\(name)>")
        for key in present {
            append("<\(key)>")
            escaped(values[key]!, attribute: false)
            append("</\(key)>")
        }
        append("</\(name)>\n")
    }

    private mutating func rating(_ name: String, _ r: Rating) {
        append("    <\(name)")
        if let system = r.system { attribute("system", system) }
        append("><value>")
        escaped(r.value, attribute: false)
        append("</value></\(name)>\n")
    }

    /// ` NAME="VALUE"`, the value escaped.
    private mutating func attribute(_ name: String, _ value: String) {
        append(" \(name)=\"")
        escaped(value, attribute: true)
        append("\"")
    }

    /// XML text: markup characters as entities; a carriage return and, in attributes, tabs and
    /// line feeds as character references (a parser would normalise them away); characters XML 1.0
    /// forbids (C0 controls) left out.
    private mutating func escaped(_ s: String, attribute: Bool) {
        var s = s
        s.withUTF8 { bytes in
            for b in bytes {
                switch b {
                case UInt8(ascii: "&"): buffer.append(contentsOf: [0x26, 0x61, 0x6D, 0x70, 0x3B])           // &amp;
                case UInt8(ascii: "<"): buffer.append(contentsOf: [0x26, 0x6C, 0x74, 0x3B])                 // &lt;
                case UInt8(ascii: ">"): buffer.append(contentsOf: [0x26, 0x67, 0x74, 0x3B])                 // &gt;
                case UInt8(ascii: "\"") where attribute: buffer.append(contentsOf: [0x26, 0x71, 0x75, 0x6F, 0x74, 0x3B])   // &quot;
                case 0x0D: buffer.append(contentsOf: Array("&#13;".utf8))
                case 0x09 where attribute: buffer.append(contentsOf: Array("&#9;".utf8))
                case 0x0A where attribute: buffer.append(contentsOf: Array("&#10;".utf8))
                case 0x09, 0x0A: buffer.append(b)
                case 0..<0x20: break
                default: buffer.append(b)
                }
            }
        }
    }
}

private extension Substring {
    /// Without leading and trailing spaces, tabs and line breaks (the grammar's `\s*`).
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
        return self[first...last]
    }
}
