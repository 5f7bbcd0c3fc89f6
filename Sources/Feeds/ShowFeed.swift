import Foundation
import ICalendar
import ObjectGraph
import Primitives

/// A calendar of one show: every upcoming airing of one exact title on any shown channel, with
/// the events the channel feeds have for the same programmes (same UID, SEQUENCE, LAST-MODIFIED:
/// `FeedExporter.event`), in start order. Written by the exporter as `show~SLUG.ics` for the shows
/// configured (`feeds.filtered[]` with `show`) or subscribed to (`ShowSubscriptions`), and served
/// by `serve` at `/shows/SLUG.ics`.
///
///     ShowFeed.slug(for: "Fair City")   // "fair-city-6d1c0ab5e2f3"
public enum ShowFeed {
    /// The file name prefix of show feeds: a channel's file name cannot contain '~' (it is
    /// percent-encoded there), so no channel can overwrite one.
    public static let filePrefix = "show~"

    /// A readable slug that names one exact title: the title's letters and digits (accents
    /// dropped, lower case, other runs a '-', at most 48 bytes), then 12 hex digits of its UTF-8
    /// bytes' FNV-1a hash, so that "Fair City" and "FAIR CITY" get different calendars.
    public static func slug(for title: String) -> String {
        var readable = ""
        var dash = false
        let folded = title.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
        for b in folded.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                if dash && !readable.isEmpty { readable.append("-") }
                dash = false
                readable.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                if dash && !readable.isEmpty { readable.append("-") }
                dash = false
                readable.unicodeScalars.append(Unicode.Scalar(b | 0x20))
            default:
                dash = true
            }
            if readable.utf8.count >= 48 { break }
        }
        if readable.isEmpty { readable = "show" }
        return readable + "-" + String(FNV1a.hex(title).prefix(12))
    }

    /// Whether `text` has a slug's form (what `/shows/SLUG.ics` accepts before any lookup).
    public static func isSlug<S: StringProtocol>(_ text: S) -> Bool {
        let bytes = text.utf8
        guard bytes.count >= 14, bytes.count <= 64 else { return false }
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }
    }

    /// The feed file of a slug.
    public static func fileName(forSlug slug: String) -> String { filePrefix + slug + ".ics" }

    /// The upcoming airings of `title` (not ended at `now`) on channels that are not hidden.
    public static func events(title: String, now: Int64, options: ExportOptions, context: ObjectContext) throws -> [CalendarEvent] {
        var channels: [Int64: (id: String, name: String)] = [:]
        for c in try context.fetchAll("Channel", where: .compare("hidden", .equal, .bool(false)), keys: ["xmltvId", "displayName", "customName"]) {
            channels[c.id.rowID] = (c["xmltvId"].stringValue ?? "", FeedExporter.channelName(c))
        }
        // What has not ended, and what has no stop (its end is the next start).
        let programmes = try context.fetchAll(
            "Programme", where: .and([.compare("title", .equal, .string(title)),
                                      .or([.compare("stop", .greater, .date(now)), .compare("stop", .equal, .null)])]),
            keys: FeedExporter.programmeKeys + ["channel"])
        let categories = try FeedExporter.categories(of: programmes.map(\.id.rowID), in: context)
        var events: [(event: CalendarEvent, channel: String, clump: Int64)] = []
        for p in programmes {
            guard let channelRow = p["channel"].integerValue, let channel = channels[channelRow], let start = p["start"].integerValue else { continue }
            var end = p["stop"].integerValue ?? start
            if end <= start {
                // As the channel feed ends it: at the next later start, else after the default length.
                let next = try context.first("Programme", where: .and([.related("channel", ObjectID(entity: "Channel", rowID: channelRow)),
                                                                       .compare("start", .greater, .date(start))]), keys: ["start"])
                end = next?["start"].integerValue ?? start.addingReportingOverflow(max(options.defaultLength, 60)).partialValue
                if end <= start { continue }
            }
            guard end > now else { continue }
            let event = FeedExporter.event(FeedExporter.ProgrammeRow(p), channelID: channel.id, start: start, end: end, location: channel.name,
                                           categories: categories[p.id.rowID] ?? [], domain: options.uidDomain)
            events.append((event, channel.id, p["clumpIndex"].integerValue ?? 0))
        }
        // By start, then channel id and clump: the same airings give the same bytes.
        events.sort { a, b in
            if a.event.start != b.event.start { return a.event.start < b.event.start }
            if a.channel != b.channel { return a.channel.utf8.lexicographicallyPrecedes(b.channel.utf8) }
            return a.clump < b.clump
        }
        return events.map(\.event)
    }

    /// The whole calendar of `title` with its `events`, as the exporter writes it.
    public static func render(title: String, events: [CalendarEvent], options: ExportOptions) -> [UInt8] {
        let properties = FeedExporter.properties(options: options, name: title, description: "Every airing of \(title)",
                                                 file: fileName(forSlug: slug(for: title)), image: nil)
        var stream = ICalendarStream(properties: properties, expectedEvents: events.count)
        for e in events { stream.append(e) }
        return events.isEmpty ? FeedExporter.finishEmpty(&stream) : stream.finish()
    }
}

/// The shows someone subscribed to through `serve` (`/shows/SLUG.ics`): their exact titles, kept
/// in the feed directory as `.tvimport-shows.json` (a name no feed can have, never served or
/// published), so that every export keeps their calendars current and index.html lists them.
public enum ShowSubscriptions {
    public static let file = ".tvimport-shows.json"
    /// At most this many (a crawler following every programme page must not make thousands of feeds).
    public static let limit = 500

    struct Stored: Codable { var shows: [String] }

    /// The subscribed titles, oldest first; none when the file is missing or unreadable.
    public static func titles(in directory: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: directory + "/" + file),
              let stored = try? JSONDecoder().decode(Stored.self, from: data) else { return [] }
        return stored.shows
    }

    /// Adds `title` (atomically replacing the file); false when it was there or the list is full.
    public static func add(_ title: String, in directory: String) throws -> Bool {
        var shows = titles(in: directory)
        guard !shows.contains(title), shows.count < limit else { return false }
        shows.append(title)
        var text = JSONText(escapingSlashes: true)
        try text.append(encoding: Stored(shows: shows))
        do throws(FileError) {
            try DurableFile.replace(directory + "/" + file, with: text.bytes)
        } catch {
            throw ExportError(message: "cannot record the subscription in \(directory)/\(file): \(error.reason)")
        }
        return true
    }
}

extension FeedExporter {
    /// The calendar properties of a feed of this export (SOURCE when the feeds have a public address).
    static func properties(options: ExportOptions, name: String, description: String, file: String, image: String?) -> CalendarProperties {
        let source = options.baseURL.map { $0.trimmingSuffix("/") + "/" + IndexPage.percentPath(file) }
        return CalendarProperties(productID: productID, name: name, description: description,
                                  refreshInterval: options.refreshInterval, image: image, source: source)
    }

    /// Writes the calendars of the configured shows and of the subscribed ones (each once, by
    /// slug), only where their bytes changed, and lists them in the index.
    func exportShows(entries: inout [FeedEntry], produced: inout Set<String>, staged: inout [(temporary: String, file: String)],
                     report: inout ExportReport) throws {
        var titles: [(title: String, shown: String)] = options.filteredFeeds.compactMap { f in f.show.map { ($0, f.title ?? $0) } }
        titles += ShowSubscriptions.titles(in: options.outputDirectory).map { ($0, $0) }
        var seen = Set<String>()
        for (title, shown) in titles {
            let file = ShowFeed.fileName(forSlug: ShowFeed.slug(for: title))
            guard seen.insert(file).inserted else { continue }
            let events = try store.read { context in try ShowFeed.events(title: title, now: options.now, options: options, context: context) }
            let bytes = ShowFeed.render(title: title, events: events, options: options)
            let lastChange = events.map(\.stamp).max() ?? 0
            if let temporary = try stage(bytes, as: file) { staged.append((temporary, file)) } else { report.unchanged.append(file) }
            produced.insert(file)
            report.events += events.count
            entries.append(FeedEntry(file: file, title: "\(shown) (every airing)", events: events.count, bytes: bytes.count, lastChange: lastChange))
        }
    }
}
