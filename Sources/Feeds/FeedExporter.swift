import Foundation
import ICalendar
import Listings
import ObjectGraph
import Primitives

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
    /// An exact title: the feed is that show's calendar (`ShowFeed`): its upcoming airings on every
    /// shown channel, written as `show~SLUG.ics`, what serve hands out at `/shows/SLUG.ics`.
    public var show: String?

    public init(name: String, title: String? = nil, titlePattern: String? = nil, categories: [String]? = nil, channels: [String]? = nil,
                show: String? = nil) {
        self.name = name
        self.title = title
        self.titlePattern = titlePattern
        self.categories = categories
        self.channels = channels
        self.show = show
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
/// replaced atomically (temporary file, then rename). Feeds of channels that became hidden or
/// lost their programmes are removed.
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

    /// One filtered feed being built: its compiled pattern, a verdict cache per title (titles
    /// repeat a lot: the regular expression runs once per distinct title) and its events.
    final class FilterState {
        let feed: FilteredFeed
        let pattern: NSRegularExpression?
        let channels: Set<String>?
        var verdicts: [String: Bool] = [:]
        var events: [CalendarEvent] = []

        init(_ feed: FilteredFeed) throws {
            self.feed = feed
            do {
                pattern = try feed.titlePattern.map { try NSRegularExpression(pattern: $0, options: [.caseInsensitive]) }
            } catch {
                throw ExportError(message: "filtered feed '\(feed.name)': bad title pattern \(feed.titlePattern ?? ""): \(error.localizedDescription)")
            }
            channels = feed.channels.map(Set.init)
        }

        /// Whether the feed takes programmes of this channel: the listed ones, or every visible one.
        func takes(channel xmltvId: String, hidden: Bool) -> Bool {
            if let channels { return channels.contains(xmltvId) }
            return !hidden
        }

        func matches(_ e: CalendarEvent) -> Bool {
            if let pattern {
                let verdict: Bool
                if let known = verdicts[e.summary] {
                    verdict = known
                } else {
                    verdict = pattern.firstMatch(in: e.summary, range: NSRange(e.summary.startIndex..., in: e.summary)) != nil
                    verdicts[e.summary] = verdict
                }
                if !verdict { return false }
            }
            if let wanted = feed.categories, !wanted.contains(where: { w in e.categories.contains { $0.caseInsensitiveCompare(w) == .orderedSame } }) {
                return false
            }
            // A feed without any criterion would be every programme: it is left empty instead.
            return feed.titlePattern != nil || feed.categories != nil || feed.channels != nil
        }
    }

    /// Exports every feed. `channels`, when given, limits the per-channel feeds regenerated to
    /// those row ids (the dirty channels of tonight's run, e.g. `DirtyOwnersObserver.dirtyOwners`);
    /// the others keep their files as they are (a missing file is always written). Filtered feeds
    /// are regenerated whenever any channel is dirty (and rewritten only when their bytes change),
    /// and kept as they are when none is.
    ///
    /// Feeds written with other options (UID domain, base URL, windows, filtered feeds: see
    /// `optionsKey`) are all regenerated whatever `channels` says: the output directory keeps the
    /// key of the options of its last export in `.tvimport-export`.
    public func export(channels requested: Set<Int64>? = nil) throws -> ExportReport {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: options.outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw ExportError(message: "cannot create \(options.outputDirectory): \(error.localizedDescription)")
        }
        let previousState = ExportState.load(path(ExportState.file))
        let limit = previousState?.options == optionsKey ? requested : nil
        var state = ExportState(options: optionsKey, channels: [:], files: [])
        // A kept feed's counts for the index: from the last export's state while the file is the
        // one it wrote (same size and mtime), so a quiet night reads no feed.
        let previousStatistics = previousState?.statistics ?? [:]
        func kept(_ file: String) -> (events: Int, bytes: Int, lastChange: Int64)? {
            if let known = previousStatistics[file], let identity = Self.identity(ofFileAt: path(file)),
               identity.size == known.bytes, identity.modified == known.modified {
                return (known.events, known.bytes, known.lastChange)
            }
            return Self.statistics(ofFeedAt: path(file))
        }
        var report = ExportReport()
        var entries: [FeedEntry] = []
        var produced = Set<String>(["index.html"])
        let windowStart = options.now - options.pastWindow
        // A filtered feed of an exact title is a show's calendar, written with the subscribed ones below.
        let patternFeeds = options.filteredFeeds.filter { $0.show == nil }
        let filters = try patternFeeds.map(FilterState.init)
        let filterFiles = patternFeeds.map { Self.filteredFeedPrefix + Self.fileName(for: $0.name) }
        var regenerateFilters = false
        // Channel feeds in channel order: kept ones known at once, the others rendered and written
        // by `writer` while the next channels are read.
        var slots: [FeedSlot] = []
        let writer = FeedWriter()
        // Feeds written to temporary files and not yet published: removed if the export fails.
        var staged: [(temporary: String, file: String)] = []
        defer {
            writer.drain()
            for s in staged { unlink(s.temporary) }
        }
        try store.read { context in
            let channels = try context.fetchAll("Channel", orderBy: [SortKey("xmltvId")],
                                                keys: ["xmltvId", "displayName", "customName", "hidden", "url", "icon", "programmesChangedAt"])
            // Dirty when asked, or when what the feed shows of the channel changed since the last
            // export (an edit by another process: hidden, custom name; or its programmes, as far
            // as the aggregate `programmesChangedAt` is kept), or when its feed was never written.
            var dirtyChannels = Set<Int64>()
            for c in channels {
                let xmltvId = c["xmltvId"].stringValue ?? ""
                let fingerprint = FNV1a.hex("\(c["hidden"].boolValue ?? false)\n\(Self.channelName(c))\n\(c["icon"].stringValue ?? "")\n\(c["programmesChangedAt"].integerValue ?? 0)")
                state.channels[xmltvId] = fingerprint
                if limit.map({ $0.contains(c.id.rowID) || previousState?.channels[xmltvId] != fingerprint }) ?? true {
                    dirtyChannels.insert(c.id.rowID)
                }
            }
            // A channel gone since the last export (deleted by an undo, say) took its programmes
            // out of the filtered feeds too, though no channel left is dirty.
            let vanished = previousState.map { !Set($0.channels.keys).isSubset(of: state.channels.keys) } ?? false
            regenerateFilters = !dirtyChannels.isEmpty || vanished || filterFiles.contains { !fm.fileExists(atPath: path($0)) }
            for c in channels {
                let xmltvId = c["xmltvId"].stringValue ?? ""
                let hidden = c["hidden"].boolValue ?? false
                let file = Self.fileName(for: xmltvId)
                let title = Self.channelName(c)
                let dirty = dirtyChannels.contains(c.id.rowID)
                let feedsWanting = regenerateFilters ? filters.filter { $0.takes(channel: xmltvId, hidden: hidden) } : []
                if !hidden && !dirty, let kept = kept(file) {
                    if !feedsWanting.isEmpty {
                        let events = try self.events(of: c.id, xmltvId: xmltvId, location: title, from: windowStart, context: context)
                        for f in feedsWanting { f.events += events.filter(f.matches) }
                    }
                    slots.append(.kept(FeedEntry(file: file, title: title, events: kept.events, bytes: kept.bytes, lastChange: kept.lastChange)))
                    produced.insert(file)
                    continue
                }
                if hidden && feedsWanting.isEmpty { continue }
                let programmes = try self.programmes(of: c.id, xmltvId: xmltvId, location: title, from: windowStart, context: context)
                // Made here when filtered feeds take them, else by the writer.
                let madeEvents = feedsWanting.isEmpty ? nil : programmes.events()
                if let madeEvents { for f in feedsWanting { f.events += madeEvents.filter(f.matches) } }
                if hidden || programmes.spans.isEmpty { continue }
                let properties = properties(title, description: "TV programmes on \(title)", file: file, image: c["icon"].stringValue)
                let job = FeedWriter.Job { [self] in
                    let events = madeEvents ?? programmes.events()
                    var stream = ICalendarStream(properties: properties, expectedEvents: events.count)
                    var lastChange: Int64 = 0
                    for e in events {
                        stream.append(e)
                        lastChange = max(lastChange, e.stamp)
                    }
                    let bytes = stream.finish()
                    return (FeedEntry(file: file, title: title, events: events.count, bytes: bytes.count, lastChange: lastChange),
                            try stage(bytes, as: file))
                }
                writer.submit(job)
                slots.append(.pending(job))
                produced.insert(file)
            }
        }
        writer.drain()
        // Every staged file is collected (and so removed if the export fails) before a failure is thrown.
        var failure: (any Error)?
        for slot in slots {
            switch slot {
            case .kept(let entry):
                entries.append(entry)
                report.unchanged.append(entry.file)
            case .pending(let job):
                do {
                    let (entry, temporary) = try job.outcome()
                    entries.append(entry)
                    report.events += entry.events
                    if let temporary { staged.append((temporary, entry.file)) } else { report.unchanged.append(entry.file) }
                } catch {
                    failure = failure ?? error
                }
            }
        }
        if let failure { throw failure }
        for (f, file) in zip(filters, filterFiles) {
            let title = f.feed.title ?? f.feed.name
            produced.insert(file)
            if !regenerateFilters, let kept = kept(file) {
                entries.append(FeedEntry(file: file, title: title, events: kept.events, bytes: kept.bytes, lastChange: kept.lastChange))
                report.unchanged.append(file)
                continue
            }
            // Sorted by start, then channel feed order: the same programmes give the same bytes.
            let sorted = f.events.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
            var stream = ICalendarStream(properties: properties(title, description: "Programmes matching \(title)", file: file, image: nil),
                                         expectedEvents: sorted.count)
            var lastChange: Int64 = 0
            for e in sorted {
                stream.append(e)
                lastChange = max(lastChange, e.stamp)
            }
            let bytes = sorted.isEmpty ? Self.finishEmpty(&stream) : stream.finish()
            if let temporary = try stage(bytes, as: file) { staged.append((temporary, file)) } else { report.unchanged.append(file) }
            report.events += sorted.count
            entries.append(FeedEntry(file: file, title: title, events: sorted.count, bytes: bytes.count, lastChange: lastChange))
        }
        try exportShows(entries: &entries, produced: &produced, staged: &staged, report: &report)
        try publish(staged, report: &report)
        staged = []
        state.files = produced.sorted()
        var statistics: [String: FeedStatistics] = [:]
        for e in entries {
            guard let identity = Self.identity(ofFileAt: path(e.file)), identity.size == e.bytes else { continue }
            statistics[e.file] = FeedStatistics(events: e.events, bytes: e.bytes, lastChange: e.lastChange, modified: identity.modified)
        }
        state.statistics = statistics
        try removeStaleFeeds(previous: previousState?.files ?? [], keeping: produced, report: &report)
        try write(Array(IndexPage.render(entries, baseURL: options.baseURL).utf8), to: "index.html", report: &report)
        if previousState != state {
            var ignored = ExportReport()
            try write(state.encoded(), to: ExportState.file, report: &ignored)
        }
        return report
    }

    /// A channel feed of an export, in channel order: kept as it was, or being written.
    enum FeedSlot {
        case kept(FeedEntry)
        case pending(FeedWriter.Job)
    }

    /// Renders and writes channel feeds on a thread of its own while the export reads the next
    /// channels: reading the database and rendering iCalendar text each take about half of an
    /// export. At most a few channels' events wait; after a failed write the jobs left do nothing,
    /// and the failure is thrown when the export collects the outcomes. A job's outcome is its
    /// feed's entry and its staged temporary file (nil when the feed already held those bytes).
    final class FeedWriter: @unchecked Sendable {
        typealias Outcome = (entry: FeedEntry, temporary: String?)

        final class Job: @unchecked Sendable {
            /// Released once run: it holds the channel's events.
            private var work: (() throws -> Outcome)?
            private(set) var result: Result<Outcome, any Error>?
            init(_ work: @escaping () throws -> Outcome) { self.work = work }

            /// Runs the work, or only lets it go when an earlier job failed.
            func run(skipping: Bool) {
                guard let work else { return }
                self.work = nil
                if !skipping { result = Result { try work() } }
            }

            func outcome() throws -> Outcome {
                guard let result else { throw ExportError(message: "a feed was not written (an earlier feed failed)") }
                return try result.get()
            }
        }

        private let queue = DispatchQueue(label: "tvimport.feed-writer")
        private let waiting = DispatchSemaphore(value: 8)
        private var failed = false   // touched only on `queue`

        func submit(_ job: Job) {
            waiting.wait()
            queue.async { [self] in
                defer { waiting.signal() }
                job.run(skipping: failed)
                if case .failure = job.result { failed = true }
            }
        }

        /// Waits for every submitted job.
        func drain() { queue.sync {} }
    }

    /// What the last export was made from, kept in the output directory: the options' key and a
    /// fingerprint per channel (so that edits made by another process make the channel dirty).
    struct ExportState: Codable, Equatable {
        static let file = ".tvimport-export.json"
        var options: String
        var channels: [String: String]
        /// The files written or kept: only these are ever removed by a later export.
        var files: [String]
        /// What the index shows of each feed, with the mtime of the file it was counted in
        /// (absent in states written before it was kept).
        var statistics: [String: FeedStatistics]?

        static func load(_ path: String) -> ExportState? {
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return try? JSONDecoder().decode(ExportState.self, from: data)
        }

        func encoded() -> [UInt8] {
            var text = JSONText(escapingSlashes: true)
            return (try? text.append(encoding: self)).map { text.bytes } ?? []
        }
    }

    /// Everything but `now` that shapes the feeds' bytes, hashed.
    var optionsKey: String {
        var text = JSONText(escapingSlashes: true)
        let filters = (try? text.append(encoding: options.filteredFeeds)).map { text.string } ?? ""
        return FNV1a.hex([Self.productID, options.uidDomain, options.baseURL ?? "-", String(options.pastWindow),
                           String(options.refreshInterval), String(options.defaultLength), filters].joined(separator: "\n"))
    }

    /// The UID of a programme's events in every feed: stable across runs for the same identity.
    public static func uid(channelID: String, start: Int64, clumpIndex: Int, domain: String) -> String {
        ProgrammeUID.make(channelID: channelID, start: start, clumpIndex: clumpIndex, domain: domain)
    }

    /// RFC 5545 wants at least one component in a VCALENDAR (icalendar and strict parsers reject
    /// an empty one), but a filtered feed may match nothing tonight and must still be there for
    /// its subscribers: it gets a UTC VTIMEZONE, which no client shows.
    static func finishEmpty(_ stream: inout ICalendarStream) -> [UInt8] {
        var bytes = stream.takeWrittenBytes()
        bytes += Array(("BEGIN:VTIMEZONE\r\nTZID:UTC\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\n"
            + "TZOFFSETFROM:+0000\r\nTZOFFSETTO:+0000\r\nTZNAME:UTC\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n").utf8)
        return bytes + stream.finish()
    }

    /// The name a channel is shown under: the user's custom name, else the feed's display name.
    public static func channelName(_ c: FetchedObject) -> String {
        for key in ["customName", "displayName", "xmltvId"] {
            if let s = c[key].stringValue, !s.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return s }
        }
        return "?"
    }

    func properties(_ name: String, description: String, file: String, image: String?) -> CalendarProperties {
        // SOURCE (RFC 7986) only when the feeds have a public address; the channel's web site is
        // not where the feed can be refreshed from.
        Self.properties(options: options, name: name, description: description, file: file, image: image)
    }

    /// The channel's programmes in the window, as calendar events, in start order.
    func events(of channel: ObjectID, xmltvId: String, location: String?, from windowStart: Int64, context: ObjectContext) throws -> [CalendarEvent] {
        try programmes(of: channel, xmltvId: xmltvId, location: location, from: windowStart, context: context).events()
    }

    /// The channel's programmes in the window as read, to be made calendar events (`events()`)
    /// on any thread: the export reads the next channel while the feed writer's thread makes and
    /// writes this one's.
    func programmes(of channel: ObjectID, xmltvId: String, location: String?, from windowStart: Int64,
                    context: ObjectContext) throws -> ChannelProgrammes {
        // Read by position, no object per row: a full export reads every programme of the window.
        let cursor = try context.fetch(
            "Programme",
            where: .and([.related("channel", channel), .compare("start", .greaterOrEqual, .date(windowStart - 86400))]),
            orderBy: [SortKey("start"), SortKey("clumpIndex")],
            keys: Self.programmeKeys)
        var rows: [ProgrammeRow] = []
        while try cursor.step() { rows.append(ProgrammeRow(rowID: cursor.rowID) { cursor.value(at: $0) }) }
        // One query per channel: every category of the channel's programmes in the window.
        let categories = try Self.categories(of: rows.map(\.rowID), in: context)
        return ChannelProgrammes(rows: rows, categories: categories, channelID: xmltvId, location: location, windowStart: windowStart,
                                 defaultLength: max(options.defaultLength, 60), domain: options.uidDomain)
    }

    /// A channel's programmes in a window, read (`programmes(of:...)`), and what their events need besides.
    struct ChannelProgrammes: Sendable {
        let rows: [ProgrammeRow]
        let categories: [Int64: [String]]
        let channelID: String
        let location: String?
        let domain: String
        /// The events' rows (indices into `rows`) and times, in start order. A programme without
        /// a usable stop ends at the next later start, else after the default length: DTEND is
        /// always after DTSTART. Those that end by the window's start are left out.
        let spans: [(row: Int, start: Int64, end: Int64)]

        init(rows: [ProgrammeRow], categories: [Int64: [String]], channelID: String, location: String?, windowStart: Int64,
             defaultLength: Int64, domain: String) {
            self.rows = rows
            self.categories = categories
            self.channelID = channelID
            self.location = location
            self.domain = domain
            var spans: [(row: Int, start: Int64, end: Int64)] = []
            spans.reserveCapacity(rows.count)
            // Walked backwards, so that the next later start (a clump shares its start) is known
            // without a search.
            var groupStart: Int64? = nil
            var nextLaterStart: Int64? = nil
            for (i, p) in rows.enumerated().reversed() {
                guard let start = p.start else { continue }
                if start != groupStart {
                    nextLaterStart = groupStart
                    groupStart = start
                }
                var end = p.stop ?? start
                // Wrapping rather than trapping at the end of time: such an end is before the window.
                if end <= start { end = nextLaterStart ?? start.addingReportingOverflow(defaultLength).partialValue }
                if end <= windowStart || end <= start { continue }
                spans.append((i, start, end))
            }
            spans.reverse()
            self.spans = spans
        }

        /// The calendar events, in start order.
        func events() -> [CalendarEvent] {
            spans.map { span in
                let p = rows[span.row]
                return FeedExporter.event(p, channelID: channelID, start: span.start, end: span.end, location: location,
                                          categories: categories[p.rowID] ?? [], domain: domain)
            }
        }
    }

    /// The values of a programme that its event shows: `programmeKeys`, read by position.
    struct ProgrammeRow: Sendable {
        var rowID: Int64
        var start: Int64?
        var stop: Int64?
        var clumpIndex: Int64
        var title: String?
        var subTitle: String?
        var desc: String?
        var season: Int64?
        var episode: Int64?
        var url: String?
        var changedAt: Int64?
        var sequence: Int64
        var icon: String?
        var images: String?

        /// `value(i)` is the value of `programmeKeys[i]`.
        init(rowID: Int64, _ value: (Int) -> Value) {
            self.rowID = rowID
            start = value(0).integerValue
            stop = value(1).integerValue
            clumpIndex = value(2).integerValue ?? 0
            title = value(3).stringValue
            subTitle = value(4).stringValue
            desc = value(5).stringValue
            season = value(6).integerValue
            episode = value(7).integerValue
            url = value(8).stringValue
            changedAt = value(9).integerValue
            sequence = value(10).integerValue ?? 0
            icon = value(11).stringValue
            images = value(12).stringValue
        }

        /// The row of an object fetched with `programmeKeys` first.
        init(_ p: FetchedObject) {
            self.init(rowID: p.id.rowID) { p.values[$0] }
        }
    }

    /// The event of one programme, as every feed writes it (a channel's, a filtered one, a
    /// show's): the UID of its identity, SEQUENCE and LAST-MODIFIED from the feeds module's
    /// bookkeeping.
    static func event(_ p: ProgrammeRow, channelID: String, start: Int64, end: Int64, location: String?,
                      categories: [String], domain: String) -> CalendarEvent {
        CalendarEvent(
            uid: ProgrammeUID.make(channelID: channelID, start: start, clumpIndex: Int(p.clumpIndex), domain: domain),
            start: start, end: end, summary: summary(p), description: p.desc,
            categories: categories, location: location, url: p.url,
            image: ShownImage.programme(icon: p.icon, images: p.images),
            stamp: p.changedAt ?? start, sequence: Int(p.sequence))
    }

    /// The programme keys `ProgrammeRow` reads, in its order.
    static let programmeKeys = ["start", "stop", "clumpIndex", "title", "subTitle", "desc", "season", "episode", "url", "changedAt", "sequence",
                                "icon", "images"]

    /// Title, then the sub-title, then "S2 E5" (one-based) when known.
    static func summary(_ p: ProgrammeRow) -> String {
        var s = p.title ?? "(untitled)"
        if let sub = p.subTitle, sub != s { s += ": " + sub }
        if p.season != nil || p.episode != nil {
            s += " (" + [p.season.map { "S\($0)" }, p.episode.map { "E\($0)" }].compactMap { $0 }.joined(separator: " ") + ")"
        }
        return s
    }

    /// A file name for an id that can neither leave the output directory nor collide with
    /// another id's: every byte outside [A-Za-z0-9_-] and a leading '.' are percent-encoded.
    /// Filtered feeds' file names start with a '~', which no channel's file name can contain
    /// (it is percent-encoded there): a channel called "filter-news" cannot overwrite them.
    public static let filteredFeedPrefix = "filter~"

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
        if name.utf8.count > 200 { name = String(name.prefix(180)) + "~" + FNV1a.hex(id) }
        return name + ".ics"
    }

    func path(_ file: String) -> String { options.outputDirectory + "/" + file }

    /// A feed's counts as the index shows them, and the mtime (nanoseconds) of the file counted.
    struct FeedStatistics: Codable, Equatable {
        var events: Int
        var bytes: Int
        var lastChange: Int64
        var modified: Int64
    }

    /// A file's size and mtime in nanoseconds, or nil when it cannot be read.
    static func identity(ofFileAt path: String) -> (size: Int, modified: Int64)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (Int(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    /// Events, size and latest LAST-MODIFIED of a feed this exporter wrote earlier (for the index
    /// entry of a feed that is kept as it is); nil when it cannot be read.
    static func statistics(ofFeedAt path: String) -> (events: Int, bytes: Int, lastChange: Int64)? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (Int, Int, Int64) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let begin = Array("\r\nBEGIN:VEVENT\r\n".utf8), modified = Array("\r\nLAST-MODIFIED:".utf8)
            var events = 0
            var latest: [UInt8] = []
            var i = 0
            let n = bytes.count
            while i < n {
                guard bytes[i] == 0x0D else { i += 1; continue }
                if i + begin.count <= n, bytes[i + 2] == UInt8(ascii: "B"), begin.indices.allSatisfy({ bytes[i + $0] == begin[$0] }) {
                    events += 1
                    i += begin.count - 2
                    continue
                }
                if i + modified.count + 16 <= n, bytes[i + 2] == UInt8(ascii: "L"), modified.indices.allSatisfy({ bytes[i + $0] == modified[$0] }) {
                    let value = Array(bytes[(i + modified.count)..<(i + modified.count + 16)])
                    if latest.lexicographicallyPrecedes(value) { latest = value }
                    i += modified.count
                    continue
                }
                i += 1
            }
            return (events, n, Self.seconds(utcDateTime: latest) ?? 0)
        }
    }

    /// `YYYYMMDDTHHMMSSZ` as seconds since 1970.
    static func seconds(utcDateTime v: [UInt8]) -> Int64? {
        guard v.count == 16 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard v[i] >= 0x30 && v[i] <= 0x39 else { return nil }
                n = n * 10 + Int(v[i] - 0x30)
            }
            return n
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8),
              let h = number(9..<11), let mi = number(11..<13), let s = number(13..<15) else { return nil }
        return UTCTime.seconds(year: y, month: mo, day: d) + Int64(h * 3600 + mi * 60 + s)
    }

    /// Removes the feeds that the previous export produced and this one did not (channels that
    /// became hidden, lost their programmes or were deleted; filtered feeds no longer configured),
    /// and temporary files left by an interrupted export. Other files of the directory are left alone.
    private func removeStaleFeeds(previous: [String], keeping produced: Set<String>, report: inout ExportReport) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: options.outputDirectory) else { return }
        let previous = Set(previous)
        for name in names.sorted() {
            let isFeed = name.hasSuffix(".ics") && previous.contains(name) && !produced.contains(name)
            let temporaryOwner = DurableFile.temporaryOwner(ofName: name)
            guard isFeed || temporaryOwner != nil else { continue }
            if let pid = temporaryOwner, pid != getpid(), kill(pid, 0) == 0 { continue }
            do {
                try FileManager.default.removeItem(atPath: path(name))
            } catch {
                throw ExportError(message: "cannot remove the stale feed \(path(name)): \(error.localizedDescription)")
            }
            if isFeed { report.removed.append(name) }
        }
    }

    /// The categories of the programmes of these row ids in their order, by programme row id:
    /// one query for them all.
    static func categories(of programmes: [Int64], in context: ObjectContext) throws -> [Int64: [String]] {
        var categories: [Int64: [String]] = [:]
        guard let low = programmes.min(), let high = programmes.max() else { return categories }
        // A channel's programmes mostly have neighbouring row ids (an import inserts a channel's
        // programmes together): then the range of their ids is read in the index's order, the
        // others in it skipped, rather than each id looked up.
        let wanted = Set(programmes)
        let dense = high - low < 2 * Int64(programmes.count)
        let predicate: ObjectPredicate = dense
            ? .and([.compare("programme", .greaterOrEqual, .integer(low)), .compare("programme", .lessOrEqual, .integer(high))])
            : .isIn("programme", programmes.map { .integer($0) })
        let cursor = try context.fetch("Category", where: predicate, orderBy: [SortKey("programme"), SortKey("position")], keys: ["programme", "name"])
        while try cursor.step() {
            if let p = cursor.integer(at: 0), wanted.contains(p), let name = cursor.value(at: 1).stringValue { categories[p, default: []].append(name) }
        }
        return categories
    }

    /// Writes `bytes` to a temporary file for `file`, unless the file holds them already (nil).
    /// `publish` makes staged files durable and renames them into place.
    func stage(_ bytes: [UInt8], as file: String) throws -> String? {
        if DurableFile.holds(path(file), .bytes(bytes)) { return nil }
        let temporary = DurableFile.temporaryPath(for: path(file))
        do throws(FileError) {
            try DurableFile.write(bytes, to: temporary, sync: false)
        } catch {
            unlink(temporary)
            throw ExportError(message: "cannot write \(temporary): \(error.reason)")
        }
        return temporary
    }

    /// Syncs the staged files with one `syncfs` of the output directory's file system (a sync per
    /// file cost more than rendering its feed), then renames each into place: a crash leaves each
    /// feed whole, old or new.
    private func publish(_ staged: [(temporary: String, file: String)], report: inout ExportReport) throws {
        guard !staged.isEmpty else { return }
        do throws(FileError) {
            try DurableFile.syncFileSystem(containing: options.outputDirectory)
        } catch {
            throw ExportError(message: "cannot sync the feeds in \(options.outputDirectory): \(error.reason)")
        }
        for (temporary, file) in staged {
            do throws(FileError) {
                try DurableFile.rename(temporary, to: path(file))
            } catch {
                throw ExportError(message: "cannot replace \(path(file)): \(error.reason)")
            }
            report.written.append(file)
        }
        try? DurableFile.syncDirectory(options.outputDirectory)   // the renames themselves
    }

    /// Writes only when the bytes differ, durably (`DurableFile.replace`).
    private func write(_ bytes: [UInt8], to file: String, report: inout ExportReport) throws {
        let target = path(file)
        if DurableFile.holds(target, .bytes(bytes)) {
            report.unchanged.append(file)
            return
        }
        do throws(FileError) {
            try DurableFile.replace(target, with: bytes)
        } catch {
            throw ExportError(message: "cannot replace \(target): \(error.reason)")
        }
        report.written.append(file)
    }
}

public struct ExportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
