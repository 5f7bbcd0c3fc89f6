import Foundation
import ICalendar
import Listings
import ObjectGraph

/// A feed of programmes chosen across channels (for example every Formula 1 race).
public struct FilteredFeed: Sendable, Codable, Hashable {
    public var name: String
    public var title: String?
    /// A regular expression matched against programme titles (case-insensitive).
    public var titlePattern: String?
    /// Programmes with any of these categories.
    public var categories: [String]?
    /// Only these channels (XMLTV ids); all when absent.
    public var channels: [String]?

    public init(name: String, title: String? = nil, titlePattern: String? = nil, categories: [String]? = nil, channels: [String]? = nil) {
        self.name = name
        self.title = title
        self.titlePattern = titlePattern
        self.categories = categories
        self.channels = channels
    }
}

public struct ExportOptions: Sendable {
    public var outputDirectory: String
    /// The right-hand side of every UID.
    public var uidDomain = "tvimport.invalid"
    /// Where the feeds are served (for index.html's subscribe links); relative links when absent.
    public var baseURL: String?
    /// Programmes that ended longer ago than this are left out of the feeds.
    public var pastWindow: Int64 = 86400
    public var refreshInterval = 12 * 3600
    /// The length given to a programme without a stop and without a next programme.
    public var defaultLength: Int64 = 3600
    public var filteredFeeds: [FilteredFeed] = []
    public var now = Int64(Date().timeIntervalSince1970)

    public init(outputDirectory: String) { self.outputDirectory = outputDirectory }
}

/// What an export wrote.
public struct ExportReport: Sendable {
    public var written: [String] = []
    public var unchanged: [String] = []
    public var removed: [String] = []
    public var events = 0
}

/// Writes one .ics per visible channel with programmes, one per filtered feed, and index.html.
/// A feed whose bytes did not change is not rewritten (same bytes, same mtime); others are
/// replaced atomically (temporary file, then rename).
public final class FeedExporter {
    let store: Store
    let options: ExportOptions
    static let productID = "-//tvimport//tvimport 0.1//EN"

    public init(store: Store, options: ExportOptions) {
        self.store = store
        self.options = options
    }

    struct FeedEntry {
        var file: String
        var title: String
        var events: Int
        var bytes: Int
        var lastChange: Int64
    }

    /// Exports every feed. `channels`, when given, limits the per-channel feeds regenerated to
    /// those row ids (the dirty channels of tonight's run); the others keep their files.
    public func export(channels limit: Set<Int64>? = nil) throws -> ExportReport {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: options.outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw ExportError(message: "cannot create \(options.outputDirectory): \(error.localizedDescription)")
        }
        var report = ExportReport()
        var entries: [FeedEntry] = []
        let windowStart = options.now - options.pastWindow
        try store.read { context in
            let channels = try context.fetchAll("Channel", orderBy: [SortKey("xmltvId")],
                                                keys: ["xmltvId", "displayName", "customName", "hidden", "programmeCount", "programmesChangedAt", "url", "icon"])
            var names: [Int64: String] = [:]
            for c in channels {
                names[c.id.rowID] = c["customName"].stringValue ?? c["displayName"].stringValue ?? c["xmltvId"].stringValue ?? "?"
            }
            var filtered = options.filteredFeeds.map { ($0, [CalendarEvent]()) }
            let patterns = try options.filteredFeeds.map { f in
                try f.titlePattern.map { try NSRegularExpression(pattern: $0, options: [.caseInsensitive]) }
            }
            for c in channels {
                let xmltvId = c["xmltvId"].stringValue ?? ""
                let hidden = c["hidden"].boolValue ?? false
                let file = Self.fileName(for: xmltvId)
                let events = try self.events(of: c.id, xmltvId: xmltvId, location: names[c.id.rowID], from: windowStart, context: context)
                for (i, feed) in options.filteredFeeds.enumerated() where feed.channels.map({ $0.contains(xmltvId) }) ?? true {
                    filtered[i].1 += events.filter { e in Self.matches(e, feed, patterns[i]) }
                }
                if hidden || events.isEmpty { continue }
                let title = names[c.id.rowID]!
                if let limit, !limit.contains(c.id.rowID), fm.fileExists(atPath: path(file)) {
                    entries.append(FeedEntry(file: file, title: title, events: events.count, bytes: fileSize(file),
                                             lastChange: events.map(\.stamp).max() ?? 0))
                    report.unchanged.append(file)
                    continue
                }
                let bytes = ICalendarWriter.write(properties(title, description: "TV programmes on \(title)", source: c["url"].stringValue), events: events)
                try write(bytes, to: file, report: &report)
                report.events += events.count
                entries.append(FeedEntry(file: file, title: title, events: events.count, bytes: bytes.count,
                                         lastChange: events.map(\.stamp).max() ?? 0))
            }
            for (feed, events) in filtered {
                let sorted = events.sorted { ($0.start, $0.uid) < ($1.start, $1.uid) }
                let file = "filter-" + Self.fileName(for: feed.name)
                let title = feed.title ?? feed.name
                let bytes = ICalendarWriter.write(properties(title, description: "Programmes matching \(title)", source: nil), events: sorted)
                try write(bytes, to: file, report: &report)
                report.events += sorted.count
                entries.append(FeedEntry(file: file, title: title, events: sorted.count, bytes: bytes.count,
                                         lastChange: sorted.map(\.stamp).max() ?? 0))
            }
        }
        try write(Array(IndexPage.render(entries, baseURL: options.baseURL).utf8), to: "index.html", report: &report)
        return report
    }

    private func properties(_ name: String, description: String, source: String?) -> CalendarProperties {
        CalendarProperties(productID: Self.productID, name: name, description: description,
                           refreshInterval: options.refreshInterval, source: nil)
    }

    /// The channel's programmes in the window, as calendar events.
    func events(of channel: ObjectID, xmltvId: String, location: String?, from windowStart: Int64, context: ObjectContext) throws -> [CalendarEvent] {
        let programmes = try context.fetchAll(
            "Programme",
            where: .and([.related("channel", channel), .compare("start", .greaterOrEqual, .date(windowStart - 86400))]),
            orderBy: [SortKey("start"), SortKey("clumpIndex")],
            keys: ["start", "stop", "clumpIndex", "title", "subTitle", "desc", "season", "episode", "url", "changedAt", "sequence"])
        var categories: [Int64: [String]] = [:]
        if !programmes.isEmpty {
            let cursor = try context.fetch("Category", where: .isIn("programme", programmes.map { .integer($0.id.rowID) }),
                                           orderBy: [SortKey("programme"), SortKey("position")], keys: ["programme", "name"])
            while let c = try cursor.next() {
                if let p = c["programme"].integerValue, let name = c["name"].stringValue { categories[p, default: []].append(name) }
            }
        }
        var events: [CalendarEvent] = []
        for (i, p) in programmes.enumerated() {
            guard let start = p["start"].integerValue else { continue }
            var end = p["stop"].integerValue
            if end == nil || end! <= start {
                end = programmes[(i + 1)...].first { ($0["start"].integerValue ?? start) > start }?["start"].integerValue
                    ?? start + options.defaultLength
            }
            if end! < windowStart { continue }
            events.append(CalendarEvent(
                uid: ProgrammeUID.make(channelID: xmltvId, start: start, clumpIndex: Int(p["clumpIndex"].integerValue ?? 0), domain: options.uidDomain),
                start: start, end: end!, summary: Self.summary(p), description: p["desc"].stringValue,
                categories: categories[p.id.rowID] ?? [], location: location, url: p["url"].stringValue,
                stamp: p["changedAt"].integerValue ?? start, sequence: Int(p["sequence"].integerValue ?? 0)))
        }
        return events
    }

    /// Title, then the sub-title, then "S2 E5" (one-based) when known.
    static func summary(_ p: FetchedObject) -> String {
        var s = p["title"].stringValue ?? "(untitled)"
        if let sub = p["subTitle"].stringValue, sub != s { s += ": " + sub }
        let season = p["season"].integerValue, episode = p["episode"].integerValue
        if season != nil || episode != nil {
            s += " (" + [season.map { "S\($0)" }, episode.map { "E\($0)" }].compactMap { $0 }.joined(separator: " ") + ")"
        }
        return s
    }

    static func matches(_ e: CalendarEvent, _ feed: FilteredFeed, _ pattern: NSRegularExpression?) -> Bool {
        if let pattern, pattern.firstMatch(in: e.summary, range: NSRange(e.summary.startIndex..., in: e.summary)) == nil { return false }
        if let wanted = feed.categories, !wanted.contains(where: { w in e.categories.contains { $0.caseInsensitiveCompare(w) == .orderedSame } }) {
            return false
        }
        return feed.titlePattern != nil || feed.categories != nil || feed.channels != nil
    }

    /// A file name for an id that can neither leave the output directory nor collide with
    /// another id's: every byte outside [A-Za-z0-9_-] and a leading '.' are percent-encoded.
    public static func fileName(for id: String) -> String {
        var name = ""
        for b in id.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.append(Character(UnicodeScalar(b)))
            case UInt8(ascii: ".") where !name.isEmpty:
                name.append(".")
            default:
                name += String(format: "%%%02X", b)
            }
        }
        if name.isEmpty { name = "%00" }
        if name.utf8.count > 200 { name = String(name.prefix(180)) + "~" + fnv1a64Hex(id) }
        return name + ".ics"
    }

    private func path(_ file: String) -> String { options.outputDirectory + "/" + file }

    private func fileSize(_ file: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path(file)))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Writes only when the bytes differ, through a temporary file and a rename.
    private func write(_ bytes: [UInt8], to file: String, report: inout ExportReport) throws {
        let target = path(file)
        if let existing = FileManager.default.contents(atPath: target), existing.elementsEqual(bytes) {
            report.unchanged.append(file)
            return
        }
        let temporary = options.outputDirectory + "/.\(file).tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
            throw ExportError(message: "cannot write \(temporary)")
        }
        if rename(temporary, target) != 0 {
            try? FileManager.default.removeItem(atPath: temporary)
            throw ExportError(message: "cannot replace \(target): \(String(cString: strerror(errno)))")
        }
        report.written.append(file)
    }
}

public struct ExportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
