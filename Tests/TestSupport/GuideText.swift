import Foundation
import Primitives

/// XMLTV text from values, for the tests that write guides: times, escaping and the document
/// around channels and programmes, written once.
///
/// ```swift
/// let guide = GuideText.document(channels: [.init("one.test", name: "One")],
///                                programmes: [.init("one.test", start: base, stop: base + 1800, title: "News")])
/// ```
public enum GuideText {
    /// XMLTV's time of an instant (seconds since 1970): `20261122030000 +0000`, or at a UTC offset
    /// of `offsetMinutes` (`20261122040000 +0100`).
    public static func time<Seconds: BinaryInteger>(_ seconds: Seconds, offsetMinutes: Int = 0) -> String {
        let c = UTCTime.components(Int64(seconds) + Int64(offsetMinutes) * 60)
        let sign = offsetMinutes < 0 ? "-" : "+"
        let offset = abs(offsetMinutes)
        return pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2) + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2)
            + " " + sign + pad(offset / 60, 2) + pad(offset % 60, 2)
    }

    /// `time` of a `Date` (whole seconds).
    public static func time(_ date: Date) -> String { time(Int64(date.timeIntervalSince1970.rounded(.down)), offsetMinutes: 0) }

    /// Text for element content and attribute values: `&`, `<`, `>` and `"` escaped.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    /// A `<channel>`: its id and display name.
    public struct Channel: Sendable {
        public var id: String
        public var name: String?
        public var lang: String?
        public init(_ id: String, name: String? = nil, lang: String? = nil) {
            self.id = id
            self.name = name
            self.lang = lang
        }
    }

    /// A `<programme>`: channel, times, title, and any further elements as XML (`extra`).
    public struct Programme: Sendable {
        public var channel: String
        public var start: Int64
        public var stop: Int64?
        public var title: String
        public var lang: String?
        /// Elements after the title, as they are (already XML).
        public var extra: String
        public init(_ channel: String, start: Int64, stop: Int64? = nil, title: String, lang: String? = nil, extra: String = "") {
            self.channel = channel
            self.start = start
            self.stop = stop
            self.title = title
            self.lang = lang
            self.extra = extra
        }
    }

    /// A whole guide: the declaration, `<tv>`, the channels, then the programmes, one per line.
    public static func document(channels: [Channel], programmes: [Programme], generator: String? = nil) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv" + (generator.map { " generator-info-name=\"\(escaped($0))\"" } ?? "") + ">\n"
        for c in channels { xml += "  " + element(c) + "\n" }
        for p in programmes { xml += "  " + element(p) + "\n" }
        return xml + "</tv>\n"
    }

    /// One `<channel>` element.
    public static func element(_ c: Channel) -> String {
        let name = c.name.map { "<display-name\(lang(c.lang))>\(escaped($0))</display-name>" } ?? ""
        return "<channel id=\"\(escaped(c.id))\">\(name)</channel>"
    }

    /// One `<programme>` element.
    public static func element(_ p: Programme) -> String {
        let stop = p.stop.map { " stop=\"\(time($0))\"" } ?? ""
        return "<programme start=\"\(time(p.start))\"\(stop) channel=\"\(escaped(p.channel))\"><title\(lang(p.lang))>\(escaped(p.title))</title>\(p.extra)</programme>"
    }

    private static func lang(_ lang: String?) -> String { lang.map { " lang=\"\(escaped($0))\"" } ?? "" }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

