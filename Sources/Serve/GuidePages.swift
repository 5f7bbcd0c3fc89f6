import Feeds
import Foundation
import Hummingbird
import ObjectGraph
import Primitives

/// The guide: a time grid of the shown channels, a channel's day, a title search. Every title
/// links to its programme's page (ProgrammePages.swift).
struct GuidePages: Sendable {
    let state: ServeState

    struct ChannelRow: Sendable {
        let rowID: Int64
        let id: String
        let name: String
        let hasLogo: Bool
        let favourite: Bool
    }

    struct ProgrammeRow: Sendable {
        let start: Int64
        let stop: Int64?
        let clump: Int
        let title: String
        let subTitle: String?
    }

    static let channelKeys = ["xmltvId", "displayName", "customName", "icon", "favourite"]
    static let programmeKeys = ["start", "stop", "clumpIndex", "title", "subTitle"]

    static func channelRow(_ c: FetchedObject) -> ChannelRow {
        let id = c["xmltvId"].stringValue ?? ""
        return ChannelRow(rowID: c.id.rowID, id: id, name: HTMLText.shortened(FeedExporter.channelName(c), to: titleLimit),
                          hasLogo: !(c["icon"].stringValue ?? "").isEmpty, favourite: c["favourite"].boolValue ?? false)
    }

    /// Channels that are not hidden: favourites first, then by the name users see.
    static func shownChannels(_ context: ObjectContext) throws -> [ChannelRow] {
        try context.fetchAll("Channel", where: .compare("hidden", .equal, .bool(false)), keys: channelKeys)
            .map(channelRow)
            .sorted { ($0.favourite ? 0 : 1, $0.name.lowercased(), $0.id) < ($1.favourite ? 0 : 1, $1.name.lowercased(), $1.id) }
    }

    static func programme(_ o: FetchedObject) -> ProgrammeRow {
        ProgrammeRow(start: o["start"].integerValue ?? 0, stop: o["stop"].integerValue, clump: Int(o["clumpIndex"].integerValue ?? 0),
                     title: o["title"].stringValue ?? "(no title)", subTitle: o["subTitle"].stringValue)
    }

    static func signedIn(_ state: ServeState, _ request: Request) -> Bool {
        if case .none = state.sessions.credential(of: request) { return false }
        return true
    }

    func signedIn(_ request: Request) -> Bool { Self.signedIn(state, request) }

    // MARK: The grid

    /// The grid's span: three hours from the last half hour, a column a minute.
    static let gridMinutes = 180
    /// A programme without a stop and without a next one is drawn this long.
    static let unknownLength: Int64 = 1800

    struct Block {
        let programme: ProgrammeRow
        /// Where it ends (its stop, else the next start, else `unknownLength`).
        let end: Int64
        /// Columns before it (empty minutes) and its own, within the grid.
        let gap: Int
        let span: Int
    }

    /// The blocks of one channel's programmes (in start order) that overlap the grid starting at
    /// `from`: each at least a column wide, none past the grid's end.
    static func blocks(_ programmes: [ProgrammeRow], from: Int64) -> [Block] {
        let until = from + Int64(gridMinutes) * 60
        var blocks: [Block] = []
        var cursor = 0
        for (index, p) in programmes.enumerated() {
            let nextStart = programmes[(index + 1)...].first { $0.start > p.start }?.start
            var end = p.stop ?? p.start
            if end <= p.start { end = nextStart ?? p.start + unknownLength }
            guard end > from, p.start < until, cursor < gridMinutes else { continue }
            let first = max(Int((max(p.start, from) - from + 30) / 60), cursor)
            let last = min(max(Int((min(end, until) - from + 30) / 60), first + 1), gridMinutes)
            guard last > first else { continue }
            blocks.append(Block(programme: p, end: end, gap: first - cursor, span: last - first))
            cursor = last
        }
        return blocks
    }

    func grid(_ request: Request) async throws -> Response {
        guard let later = RequestInput.hoursLater(FormData(request.uri.query ?? "")["later"]) else {
            return Pages.error(.badRequest, "later= takes a whole number of hours from 0 to \(RequestInput.maxHoursLater).")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let from = now - now % 1800 + Int64(later) * 3600
        let until = from + Int64(Self.gridMinutes) * 60
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        // The same grid for everyone in the same minute while the database is as it was: made
        // once (32 clients asking at once otherwise each read every channel).
        let key = "\(later) \(now / 60) \(signedIn(request)) \(host) " + GridCache.stamp(database: state.options.database)
        if let cached = state.gridCache.page(for: key) { return Pages.html(cached) }
        let (channels, byChannel) = try await state.reads.read { context -> ([ChannelRow], [Int64: [ProgrammeRow]]) in
            let channels = try Self.shownChannels(context)
            var byChannel: [Int64: [ProgrammeRow]] = [:]
            // Per shown channel, through the (channel, start) index: what starts in the grid, and
            // before it as far as a programme may reach into it (a stop is checked in `blocks`).
            for channel in channels {
                let shown: ObjectPredicate = .and([.related("channel", ObjectID(entity: "Channel", rowID: channel.rowID)),
                                                   .compare("start", .greater, .date(from - 12 * 3600)), .compare("start", .less, .date(until))])
                byChannel[channel.rowID] = try context.fetchAll("Programme", where: shown, orderBy: [SortKey("start"), SortKey("clumpIndex")],
                                                                keys: Self.programmeKeys, limit: 400).map(Self.programme)
            }
            return (channels, byChannel)
        }
        let title = later == 0 ? "On now" : "From " + LocalTime.dayName(from) + " " + LocalTime.hourMinute(from)
        let body = HTML.page(title: title, signedIn: signedIn(request), tokenConfigured: state.canEdit, wide: true) { page in
            page.raw("<p class=\"pager\">")
            if later > 0 {
                page.raw("<a href=\"/")
                page.text(later > 3 ? "?later=\(later - 3)" : "")
                page.raw("\">← Earlier</a>")
            }
            page.raw("<span>")
            page.text(LocalTime.dayName(from) + ", " + LocalTime.hourMinute(from) + "–" + LocalTime.hourMinute(until))
            page.raw("</span>")
            if later + 3 <= RequestInput.maxHoursLater {
                page.raw(" <a href=\"/?later=")
                page.text(String(later + 3))
                page.raw("\">Later →</a>")
            }
            page.raw("</p>")
            if channels.isEmpty { page.raw("<p>No channels yet: run an import first.</p>") }
            page.raw("<div class=\"grid\">")
            // The time scale and the now line are for the eye; each block says its own time.
            page.raw("<div class=\"ticks\" aria-hidden=\"true\"><span class=\"corner\"></span><ol>")
            var tick = from
            while tick < until {
                page.trusted("<li class=\"s30\">")
                page.text(LocalTime.hourMinute(tick))
                page.raw("</li>")
                tick += 1800
            }
            page.raw("</ol></div>")
            if from <= now && now < until {
                page.trusted("<div class=\"nowline n\((now - from) / 60)\" aria-hidden=\"true\"></div>")
            }
            for channel in channels {
                page.trusted("<section class=\"row\" aria-labelledby=\"ch\(channel.rowID)\"><h2 id=\"ch\(channel.rowID)\" class=\"ch\"><a href=\"")
                page.text(Self.channelPath(channel))
                page.raw("\">")
                if channel.hasLogo { Self.logo(channel, into: &page) }
                page.raw("<span class=\"name\">")
                page.text(channel.name)
                page.raw("</span>")
                if channel.favourite { page.raw("<span class=\"fav\" title=\"Favourite\"> ★<span class=\"sr\"> (favourite)</span></span>") }
                page.raw("</a>")
                feedLink(channel, host: host, into: &page)
                page.raw("</h2>")
                let blocks = Self.blocks(byChannel[channel.rowID] ?? [], from: from)
                if blocks.isEmpty {
                    page.raw("<p class=\"empty\">Nothing listed.</p></section>")
                    continue
                }
                page.raw("<ol class=\"slots\">")
                for block in blocks {
                    if block.gap > 0 { page.trusted("<li class=\"gap s\(block.gap)\" aria-hidden=\"true\"></li>") }
                    let onNow = block.programme.start <= now && now < block.end
                    page.trusted("<li class=\"p s\(block.span)\(onNow ? " now" : "")\"><span class=\"time\">")
                    page.text(onNow ? "Now" : LocalTime.hourMinute(block.programme.start))
                    page.raw("</span> ")
                    Self.title(block.programme, channel: channel, into: &page)
                    page.raw("</li>")
                }
                page.raw("</ol></section>")
            }
            page.raw("</div>")
        }
        state.gridCache.keep(body, for: key)
        return Pages.html(body)
    }

    /// A small subscribe (webcal) link to a channel's feed, when the exporter wrote one.
    func feedLink(_ channel: ChannelRow, host: String, into page: inout HTML) {
        let file = FeedExporter.fileName(for: channel.id)
        guard state.feeds.contains(file) else { return }
        page.raw("<a class=\"sub\" href=\"")
        page.text("webcal://" + host + "/feeds/" + HTML.urlComponent(file))
        page.raw("\">Subscribe<span class=\"sr\"> to ")
        page.text(channel.name)
        page.raw("</span></a>")
    }

    /// Subscribe (webcal) and download links of a channel's feed, when the exporter wrote one.
    func feedLinks(_ channel: ChannelRow, host: String, into page: inout HTML) {
        let file = FeedExporter.fileName(for: channel.id)
        guard state.feeds.contains(file) else { return }
        let path = "/feeds/" + HTML.urlComponent(file)
        page.raw("<p class=\"links\"><a href=\"")
        page.text("webcal://" + host + path)
        page.raw("\">Subscribe</a><a href=\"")
        page.text(path)
        page.raw("\" download>Download .ics</a></p>")
    }

    /// A channel's logo, fetched once by serve and served from here (`ImageCache`).
    static func logo(_ channel: ChannelRow, into page: inout HTML) {
        page.raw("<img class=\"logo\" src=\"")
        page.text(ImagePaths.logo(channel))
        page.raw("\" alt=\"")
        page.text("Logo of " + channel.name)
        page.raw("\" width=\"40\" height=\"30\">")
    }

    /// Titles and episode titles on the guide pages are shortened (the model's page of a
    /// programme shows them whole): a page lists many, and a feed may send megabytes in one.
    static let titleLimit = 300

    /// The title as a link to the programme's page, and the episode title after it.
    static func title(_ p: ProgrammeRow, channel: ChannelRow, into page: inout HTML) {
        page.raw("<a class=\"title\" href=\"")
        page.text(programmePath(channel, p))
        page.raw("\">")
        page.text(HTMLText.shortened(p.title, to: titleLimit))
        page.raw("</a>")
        if let sub = p.subTitle, !sub.isEmpty {
            page.raw("<span class=\"sub\"> — ")
            page.text(HTMLText.shortened(sub, to: titleLimit))
            page.raw("</span>")
        }
    }

    // MARK: Paths

    /// A channel's path segment: its id, or `%23ROWID` for an id that a browser would take for
    /// a dot segment ("." or "..", escaped or not: the URL standard decodes `%2e` there).
    static func channelSegment(_ channel: ChannelRow) -> String {
        channel.id == "." || channel.id == ".." ? "%23\(channel.rowID)" : HTML.urlComponent(channel.id)
    }

    /// The path of a channel's day.
    static func channelPath(_ channel: ChannelRow) -> String { "/channels/" + channelSegment(channel) }

    /// The path of a programme's page: `/programmes/CHANNEL/YYYYMMDDhhmmss[/CLUMP]` (UTC), read
    /// back by `RequestInput.programmeKey`.
    static func programmePath(_ channel: ChannelRow, _ p: ProgrammeRow) -> String {
        "/programmes/" + channelSegment(channel) + "/" + UTCTime.compact(p.start) + (p.clump == 0 ? "" : "/\(p.clump)")
    }

    /// `#ROWID` (what `channelPath` writes when the id cannot be a path segment).
    static func rowID(_ id: String) -> Int64? { RequestInput.rowID(id) }

    // MARK: A channel's day

    func channel(_ request: Request, id: String) async throws -> Response {
        let id = RequestInput.percentDecoded(id) ?? id
        let query = FormData(request.uri.query ?? "")
        let now = Int64(Date().timeIntervalSince1970)
        guard let dayStart = LocalTime.startOfDay(named: query["day"], now: now) else {
            return Pages.error(.badRequest, "day= takes today, tomorrow, yesterday or a date (YYYY-MM-DD, from 1900 to 9999).")
        }
        let result = try await state.reads.read { context -> (ChannelRow, [ProgrammeRow])? in
            guard let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: Self.channelKeys)
                    ?? Self.rowID(id).flatMap({ try context.object(ObjectID(entity: "Channel", rowID: $0), keys: Self.channelKeys) })
            else { return nil }
            let programmes = try context.fetchAll("Programme", where: .and([.related("channel", c.id), .compare("start", .greaterOrEqual, .date(dayStart)),
                                                                             .compare("start", .less, .date(dayStart + 86400))]),
                                                  orderBy: [SortKey("start"), SortKey("clumpIndex")], keys: Self.programmeKeys).map(Self.programme)
            return (Self.channelRow(c), programmes)
        }
        guard let (channel, programmes) = result else { return Pages.error(.notFound, "No channel with id \(id).") }
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        let body = HTML.page(title: channel.name, signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            if channel.hasLogo {
                page.raw("<p>")
                Self.logo(channel, into: &page)
                page.raw("</p>")
            }
            page.raw("<p class=\"pager\"><a href=\"?day=")
            page.text(LocalTime.day(dayStart - 86400))
            page.raw("\">← Previous day</a><strong>")
            page.text(LocalTime.dayName(dayStart))
            page.raw("</strong> <a href=\"?day=")
            page.text(LocalTime.day(dayStart + 86400))
            page.raw("\">Next day →</a></p>")
            feedLinks(channel, host: host, into: &page)
            if programmes.isEmpty { page.raw("<p>Nothing listed on this day.</p>") }
            page.raw("<ol class=\"day\">")
            for (index, p) in programmes.enumerated() {
                let end = p.stop ?? programmes[(index + 1)...].first { $0.start > p.start }?.start
                let onNow = p.start <= now && now < (end ?? p.start + Self.unknownLength)
                page.raw(onNow ? "<li class=\"now\"><span class=\"time\">" : "<li><span class=\"time\">")
                page.text(LocalTime.hourMinute(p.start) + (end.map { $0 > p.start ? "–" + LocalTime.hourMinute($0) : "" } ?? ""))
                page.raw("</span> ")
                if onNow { page.raw("<strong class=\"onnow\">Now</strong> ") }
                Self.title(p, channel: channel, into: &page)
                page.raw("</li>")
            }
            page.raw("</ol><p><a href=\"")
            page.text(ModelPages.detailPath(entity: "Channel", rowID: channel.rowID))
            page.raw("\">Edit this channel</a></p>")
        }
        return Pages.html(body)
    }

    // MARK: Search

    func search(_ request: Request) async throws -> Response {
        let text = (FormData(request.uri.query ?? "")["q"] ?? "").trimmingCharacters(in: .whitespaces)
        // Every title not yet ended is compared with it: a long one costs time for nothing.
        guard text.utf8.count <= Self.titleLimit else { return Pages.error(.badRequest, "Search for at most \(Self.titleLimit) bytes of a title.") }
        let now = Int64(Date().timeIntervalSince1970)
        let needle = text.lowercased()
        let limit = 200
        // The titles of what has not ended that contain the text (SQLite has no Unicode-aware
        // LIKE, so compared here, once per title), then their first airings on shown channels.
        let titles = needle.isEmpty ? []
            : try await state.upcomingTitles.reading(database: state.options.database, now: now, reads: state.reads).containing(needle)
        let hits = titles.isEmpty ? [] : try await state.reads.read { context -> [(ChannelRow, ProgrammeRow)] in
            let channels = Dictionary(try Self.shownChannels(context).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
            let found = try context.fetchAll("Programme", where: .and([.compare("stop", .greater, .date(now)), .isIn("title", titles.map(Value.string)),
                                                                      .isIn("channel", channels.keys.map(Value.integer))]),
                                             orderBy: [SortKey("start"), SortKey("channel")], keys: Self.programmeKeys + ["channel"], limit: limit)
            return found.compactMap { o in o["channel"].integerValue.flatMap { channels[$0] }.map { ($0, Self.programme(o)) } }
        }
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        let body = HTML.page(title: text.isEmpty ? "Search" : "Search: \(text)", signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            if !text.isEmpty && hits.isEmpty { page.raw("<p>Nothing found.</p>") }
            // One subscription per title found (a show's calendar: every airing of exactly it).
            var titles: [String] = []
            for (_, p) in hits where !titles.contains(p.title) && titles.count < 10 { titles.append(p.title) }
            if !titles.isEmpty {
                page.raw("<ul class=\"links subscriptions\">")
                for title in titles {
                    page.raw("<li><a href=\"")
                    page.text("webcal://" + host + "/shows/" + ShowFeed.slug(for: title) + ".ics")
                    page.raw("\">Subscribe to every airing of ")
                    page.text(HTMLText.shortened(title, to: Self.titleLimit))
                    page.raw("</a></li>")
                }
                page.raw("</ul>")
            }
            page.raw("<ol class=\"day\">")
            for (channel, p) in hits {
                page.raw("<li><span class=\"time\">")
                page.text(LocalTime.dayName(p.start) + " " + LocalTime.hourMinute(p.start))
                page.raw("</span> <a href=\"")
                page.text(Self.channelPath(channel))
                page.raw("?day=")
                page.text(LocalTime.day(p.start))
                page.raw("\">")
                page.text(channel.name)
                page.raw("</a>: ")
                Self.title(p, channel: channel, into: &page)
                page.raw("</li>")
            }
            page.raw("</ol>")
            if hits.count == limit { page.raw("<p>The first 200 only: narrow the search.</p>") }
        }
        return Pages.html(body)
    }
}

/// The grid pages made in the current minute, by what they depend on: the minute, `later`, the
/// sign-in, the host, and the database's files as they are (a commit changes the WAL's size or
/// mtime, a checkpoint the database's), so that a change is shown at once.
final class GridCache: @unchecked Sendable {
    private let lock = NSLock()
    private var pages: [String: String] = [:]

    func page(for key: String) -> String? { lock.withLock { pages[key] } }

    func keep(_ page: String, for key: String) {
        lock.withLock {
            if pages.count >= 32 { pages.removeAll() }
            pages[key] = page
        }
    }

    /// Size and mtime (nanoseconds) of the database and its WAL: two `stat`s.
    static func stamp(database: String) -> String {
        var parts: [String] = []
        for path in [database, database + "-wal"] {
            var info = stat()
            parts.append(stat(path, &info) == 0 ? "\(info.st_size).\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : "-")
        }
        return parts.joined(separator: " ")
    }
}

/// Times in the server's zone (TZ), as the household reads them, through the C library.
enum LocalTime {
    static func parts(_ seconds: Int64) -> tm {
        var time = time_t(seconds), result = tm()
        localtime_r(&time, &result)
        return result
    }

    /// `21:05`
    static func hourMinute(_ seconds: Int64) -> String {
        let t = parts(seconds)
        return padded(t.tm_hour, 2) + ":" + padded(t.tm_min, 2)
    }

    /// `Fri 27 Nov`
    static func dayName(_ seconds: Int64) -> String {
        let t = parts(seconds)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return days[Int(t.tm_wday) % 7] + " " + String(t.tm_mday) + " " + months[Int(t.tm_mon) % 12]
    }

    /// `2026-11-22`
    static func day(_ seconds: Int64) -> String {
        let t = parts(seconds)
        // In Int: a stored start far in the future has a tm_year near Int32.max.
        return padded(Int(t.tm_year) + 1900, 4) + "-" + padded(Int(t.tm_mon) + 1, 2) + "-" + padded(Int(t.tm_mday), 2)
    }

    /// `value` with leading zeros to `width` digits (Foundation's `String(format:)` cost more than
    /// the rest of a guide row).
    static func padded<I: BinaryInteger>(_ value: I, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    static func startOfDay(containing seconds: Int64) -> Int64 {
        var t = parts(seconds)
        t.tm_hour = 0; t.tm_min = 0; t.tm_sec = 0; t.tm_isdst = -1
        return Int64(mktime(&t))
    }

    /// The start of the day that `?day=` names: today when absent, `today`, `tomorrow`,
    /// `yesterday` or `YYYY-MM-DD` (a date that exists, read by `RequestInput.day`); nil for
    /// anything else, which the page refuses rather than silently showing today.
    static func startOfDay(named text: String?, now: Int64) -> Int64? {
        var t = parts(now)
        switch text {
        case nil, "today": break
        case "tomorrow": t.tm_mday += 1
        case "yesterday": t.tm_mday -= 1
        case let text?:
            return RequestInput.day(text).map(startOfDay)
        }
        t.tm_hour = 0; t.tm_min = 0; t.tm_sec = 0; t.tm_isdst = -1
        return Int64(mktime(&t))
    }

    /// The first second of a day that `RequestInput.day` read (years 1900...9999).
    static func startOfDay(_ day: (year: Int, month: Int, day: Int)) -> Int64 {
        var t = tm()
        t.tm_year = Int32(day.year - 1900); t.tm_mon = Int32(day.month - 1); t.tm_mday = Int32(day.day); t.tm_isdst = -1
        return Int64(mktime(&t))
    }
}
