import Feeds
import Foundation
import Hummingbird
import ObjectGraph

/// The guide: what is on now and next on every shown channel, a channel's day, a title search.
struct GuidePages: Sendable {
    let state: ServeState

    struct ChannelRow {
        let rowID: Int64
        let id: String
        let name: String
    }

    struct ProgrammeRow {
        let start: Int64
        let stop: Int64?
        let title: String
        let subTitle: String?
    }

    /// Channels that are not hidden, by the name users see.
    func shownChannels(_ context: ObjectContext) throws -> [ChannelRow] {
        try context.fetchAll("Channel", where: .compare("hidden", .equal, .bool(false)), keys: ["xmltvId", "displayName", "customName"])
            .map { c in
                let id = c["xmltvId"].stringValue ?? ""
                return ChannelRow(rowID: c.id.rowID, id: id, name: HTML.shortened(c["customName"].stringValue ?? c["displayName"].stringValue ?? id, to: Self.titleLimit))
            }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    static func programme(_ o: FetchedObject) -> ProgrammeRow {
        ProgrammeRow(start: o["start"].integerValue ?? 0, stop: o["stop"].integerValue, title: o["title"].stringValue ?? "(no title)",
                     subTitle: o["subTitle"].stringValue)
    }

    func signedIn(_ request: Request) -> Bool {
        if case .none = state.sessions.credential(of: request) { return false }
        return true
    }

    // MARK: Now and next

    func nowAndNext(_ request: Request) async throws -> Response {
        let now = Int64(Date().timeIntervalSince1970)
        let (channels, byChannel) = try await state.reads.read { context -> ([ChannelRow], [Int64: [ProgrammeRow]]) in
            let channels = try shownChannels(context)
            var byChannel: [Int64: [ProgrammeRow]] = [:]
            // Per shown channel, the first two that have not ended and start within 12 hours: the
            // (channel, start) index finds them and no row past the second is read (one pass over
            // every channel's next 12 hours read and dropped ten times as many, bench-serve's `/`).
            for channel in channels {
                let shown: ObjectPredicate = .and([.related("channel", ObjectID(entity: "Channel", rowID: channel.rowID)),
                                                   .compare("stop", .greater, .date(now)), .compare("start", .less, .date(now + 12 * 3600))])
                byChannel[channel.rowID] = try context.fetchAll("Programme", where: shown, orderBy: [SortKey("start")],
                                                                keys: ["start", "stop", "title", "subTitle"], limit: 2).map(Self.programme)
            }
            return (channels, byChannel)
        }
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        let body = HTML.page(title: "On now", signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            if channels.isEmpty { page.raw("<p>No channels yet: run an import first.</p>") }
            for channel in channels {
                page.raw("<section class=\"channel\"><h2><a href=\"")
                page.text(Self.channelPath(channel))
                page.raw("\">")
                page.text(channel.name)
                page.raw("</a></h2>")
                let rows = byChannel[channel.rowID] ?? []
                if rows.isEmpty { page.raw("<p>Nothing listed.</p>") }
                for (index, p) in rows.enumerated() {
                    page.raw("<div><span class=\"time\">")
                    page.text(index == 0 && p.start <= now ? "Now" : LocalTime.hourMinute(p.start))
                    page.raw("</span>")
                    Self.title(p, into: &page)
                    page.raw("</div>")
                }
                feedLinks(channel, host: host, into: &page)
                page.raw("</section>")
            }
        }
        return Pages.html(body)
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

    /// Titles and episode titles on the guide pages are shortened (the model's page of a
    /// programme shows them whole): a page lists many, and a feed may send megabytes in one.
    static let titleLimit = 300

    static func title(_ p: ProgrammeRow, into page: inout HTML) {
        page.raw("<strong>")
        page.text(HTML.shortened(p.title, to: titleLimit))
        page.raw("</strong>")
        if let sub = p.subTitle, !sub.isEmpty {
            page.raw(" — ")
            page.text(HTML.shortened(sub, to: titleLimit))
        }
    }

    // MARK: A channel's day

    /// The path of a channel's day. An id that a browser would take for a dot segment ("." or
    /// "..", escaped or not: the URL standard decodes `%2e` there) goes by row id instead.
    static func channelPath(_ channel: ChannelRow) -> String {
        channel.id == "." || channel.id == ".." ? "/channels/%23\(channel.rowID)" : "/channels/" + HTML.urlComponent(channel.id)
    }

    /// `#ROWID` (what `channelPath` writes when the id cannot be a path segment).
    static func rowID(_ id: String) -> Int64? { RequestInput.rowID(id) }

    func channel(_ request: Request, id: String) async throws -> Response {
        let id = RequestInput.percentDecoded(id) ?? id
        let query = FormData(request.uri.query ?? "")
        guard let dayStart = LocalTime.startOfDay(named: query["day"], now: Int64(Date().timeIntervalSince1970)) else {
            return Pages.error(.badRequest, "day= takes today, tomorrow, yesterday or a date (YYYY-MM-DD, from 1900 to 9999).")
        }
        let result = try await state.reads.read { context -> (ChannelRow, [ProgrammeRow])? in
            let keys = ["xmltvId", "displayName", "customName"]
            guard let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: keys)
                    ?? Self.rowID(id).flatMap({ try context.object(ObjectID(entity: "Channel", rowID: $0), keys: keys) })
            else { return nil }
            let id = c["xmltvId"].stringValue ?? id
            let row = ChannelRow(rowID: c.id.rowID, id: id, name: HTML.shortened(c["customName"].stringValue ?? c["displayName"].stringValue ?? id, to: Self.titleLimit))
            let programmes = try context.fetchAll("Programme", where: .and([.related("channel", c.id), .compare("start", .greaterOrEqual, .date(dayStart)),
                                                                             .compare("start", .less, .date(dayStart + 86400))]),
                                                  orderBy: [SortKey("start")], keys: ["start", "stop", "title", "subTitle"]).map(Self.programme)
            return (row, programmes)
        }
        guard let (channel, programmes) = result else { return Pages.error(.notFound, "No channel with id \(id).") }
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        let body = HTML.page(title: channel.name, signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            page.raw("<p class=\"pager\"><a href=\"?day=")
            page.text(LocalTime.day(dayStart - 86400))
            page.raw("\">← Previous day</a><strong>")
            page.text(LocalTime.day(dayStart))
            page.raw("</strong> <a href=\"?day=")
            page.text(LocalTime.day(dayStart + 86400))
            page.raw("\">Next day →</a></p>")
            feedLinks(channel, host: host, into: &page)
            if programmes.isEmpty { page.raw("<p>Nothing listed on this day.</p>") }
            page.raw("<table>")
            for p in programmes {
                page.raw("<tr><td class=\"time\">")
                page.text(LocalTime.hourMinute(p.start))
                page.raw("</td><td>")
                Self.title(p, into: &page)
                page.raw("</td></tr>")
            }
            page.raw("</table><p><a href=\"")
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
        let hits = needle.isEmpty ? [] : try await state.reads.read { context -> [(ChannelRow, ProgrammeRow)] in
            let channels = Dictionary(try shownChannels(context).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
            var hits: [(ChannelRow, ProgrammeRow)] = []
            // Titles of what has not ended yet; SQLite has no Unicode-aware LIKE, so filtered here.
            let cursor = try context.fetch("Programme", where: .compare("stop", .greater, .date(now)), orderBy: [SortKey("start")],
                                           keys: ["channel", "start", "stop", "title", "subTitle"])
            while hits.count < limit, let o = try cursor.next() {
                guard let title = o["title"].stringValue, title.lowercased().contains(needle),
                      let channel = o["channel"].integerValue.flatMap({ channels[$0] }) else { continue }
                hits.append((channel, Self.programme(o)))
            }
            return hits
        }
        let body = HTML.page(title: text.isEmpty ? "Search" : "Search: \(text)", signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            if !text.isEmpty && hits.isEmpty { page.raw("<p>Nothing found.</p>") }
            page.raw("<table>")
            for (channel, p) in hits {
                page.raw("<tr><td class=\"time\">")
                page.text(LocalTime.day(p.start) + " " + LocalTime.hourMinute(p.start))
                page.raw("</td><td><a href=\"")
                page.text(Self.channelPath(channel))
                page.raw("?day=")
                page.text(LocalTime.day(p.start))
                page.raw("\">")
                page.text(channel.name)
                page.raw("</a></td><td>")
                Self.title(p, into: &page)
                page.raw("</td></tr>")
            }
            page.raw("</table>")
            if hits.count == limit { page.raw("<p>The first 200 only: narrow the search.</p>") }
        }
        return Pages.html(body)
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
