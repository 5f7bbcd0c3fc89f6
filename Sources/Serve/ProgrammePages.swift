import Feeds
import Foundation
import Hummingbird
import Listings
import ObjectGraph
import Primitives

/// A programme's own page: when (in the server's zone) and where, every detail the guide has
/// (sub-title, description, episode, categories, credits, picture, flags), the other airings of
/// the same title, and the subscription to all of them (`/shows/SLUG.ics`).
struct ProgrammePages: Sendable {
    let state: ServeState

    /// How many other airings the page lists.
    static let otherAiringsShown = 50

    struct Airing {
        let channel: GuidePages.ChannelRow
        let programme: GuidePages.ProgrammeRow
    }

    struct Page {
        let channel: GuidePages.ChannelRow
        let channelHasLogo: Bool
        let programme: FetchedObject
        let categories: [String]
        let credits: [(role: String, name: String, character: String?)]
        let others: [Airing]
    }

    func programme(_ request: Request) async throws -> Response {
        guard let key = RequestInput.programmeKey(fromRawPath: Routes.rest(of: request, after: 1)) else {
            return Pages.error(.notFound, "A programme's page is /programmes/CHANNEL/YYYYMMDDhhmmss (UTC), as the guide links to it.")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let found = try await state.reads.read { context -> Page? in
            let keys = ["xmltvId", "displayName", "customName", "icon", "favourite"]
            guard let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string(key.channel)), keys: keys)
                    ?? RequestInput.rowID(key.channel).flatMap({ try context.object(ObjectID(entity: "Channel", rowID: $0), keys: keys) }),
                  let p = try context.first("Programme", where: .and([.related("channel", c.id), .compare("start", .equal, .date(key.start)),
                                                                      .compare("clumpIndex", .equal, .integer(Int64(key.clump)))]))
            else { return nil }
            let categories = try context.fetchAll("Category", where: .related("programme", p.id), orderBy: [SortKey("position")], keys: ["name"])
                .compactMap { $0["name"].stringValue }
            let credits = try context.fetchAll("Credit", where: .related("programme", p.id), orderBy: [SortKey("position")],
                                               keys: ["role", "name", "character"])
                .map { (role: $0["role"].stringValue ?? "", name: $0["name"].stringValue ?? "", character: $0["character"].stringValue) }
            var others: [Airing] = []
            if let title = p["title"].stringValue {
                let channels = Dictionary(try GuidePages.shownChannels(context).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
                let cursor = try context.fetch("Programme", where: .and([.compare("title", .equal, .string(title)), .compare("stop", .greater, .date(now))]),
                                               orderBy: [SortKey("start")], keys: GuidePages.programmeKeys + ["channel"])
                while others.count < Self.otherAiringsShown, let o = try cursor.next() {
                    guard o.id != p.id, let channel = o["channel"].integerValue.flatMap({ channels[$0] }) else { continue }
                    others.append(Airing(channel: channel, programme: GuidePages.programme(o)))
                }
            }
            return Page(channel: GuidePages.channelRow(c), channelHasLogo: !(c["icon"].stringValue ?? "").isEmpty, programme: p,
                        categories: categories, credits: credits, others: others)
        }
        guard let page = found else { return Pages.error(.notFound, "No programme starts then on that channel (the guide may have changed).") }
        let p = page.programme
        let row = GuidePages.programme(p)
        let host = request.head.authority ?? "\(state.options.host):\(state.options.port)"
        let title = row.title
        let body = HTML.page(title: HTMLText.shortened(title, to: GuidePages.titleLimit), signedIn: GuidePages.signedIn(state, request),
                             tokenConfigured: state.canEdit) { html in
            if let sub = row.subTitle, !sub.isEmpty {
                html.raw("<p class=\"subtitle\">")
                html.text(HTMLText.shortened(sub, to: ModelPages.shownCharacters))
                html.raw("</p>")
            }
            html.raw("<div class=\"programme\">")
            // The first icon or poster image, as the feeds show it (`ShownImage`).
            if let picture = ShownImage.programme(icon: p["icon"].stringValue, images: p["images"].stringValue), !picture.isEmpty {
                html.raw("<img class=\"poster\" src=\"")
                html.text(ImagePaths.programme(page.channel, row))
                html.raw("\" alt=\"")
                html.text("Picture of " + HTMLText.shortened(title, to: 200))
                html.raw("\">")
            }
            html.raw("<dl class=\"facts\"><dt>When</dt><dd>")
            html.text(LocalTime.dayName(row.start) + ", " + LocalTime.hourMinute(row.start))
            if let stop = row.stop, stop > row.start {
                html.text("–" + LocalTime.hourMinute(stop) + " (" + Self.duration(stop - row.start) + ")")
            }
            if let stop = row.stop, row.start <= now, now < stop { html.raw(" <strong class=\"onnow\">On now</strong>") }
            html.raw("</dd><dt>Channel</dt><dd><a href=\"")
            html.text(GuidePages.channelPath(page.channel) + "?day=" + LocalTime.day(row.start))
            html.raw("\">")
            if page.channelHasLogo { GuidePages.logo(page.channel, into: &html) }
            html.text(page.channel.name)
            html.raw("</a></dd>")
            if let episode = Self.episode(p) {
                html.raw("<dt>Episode</dt><dd>")
                html.text(episode)
                html.raw("</dd>")
            }
            let flags = Self.flags(p)
            if !flags.isEmpty {
                html.raw("<dt>Airing</dt><dd>")
                for flag in flags {
                    html.raw("<span class=\"flag\">")
                    html.text(flag)
                    html.raw("</span> ")
                }
                html.raw("</dd>")
            }
            if !page.categories.isEmpty {
                html.raw("<dt>Categories</dt><dd>")
                html.text(page.categories.map { HTMLText.shortened($0, to: 200) }.joined(separator: ", "))
                html.raw("</dd>")
            }
            for (label, key) in [("Year", "date"), ("Country", "country"), ("Language", "language"), ("Rating", "rating"), ("Stars", "starRating")] {
                guard let value = p[key].stringValue, !value.isEmpty else { continue }
                html.raw("<dt>")
                html.text(label)
                html.raw("</dt><dd>")
                // Ratings are stored as "system=value" lines: the values read best.
                html.text(HTMLText.shortened(value.split(separator: "\n").map { $0.split(separator: "=", maxSplits: 1).last.map(String.init) ?? "" }
                    .joined(separator: ", "), to: 500))
                html.raw("</dd>")
            }
            html.raw("</dl></div>")
            if let desc = p["desc"].stringValue, !desc.isEmpty {
                html.raw("<p class=\"desc\">")
                html.text(HTMLText.shortened(desc, to: ModelPages.shownCharacters))
                html.raw("</p>")
            }
            if !page.credits.isEmpty {
                html.raw("<h2>Credits</h2><dl class=\"credits\">")
                var roles: [String] = []
                var byRole: [String: [String]] = [:]
                for credit in page.credits.prefix(200) {
                    if byRole[credit.role] == nil { roles.append(credit.role) }
                    let character = credit.character.flatMap { $0.isEmpty ? nil : " as " + $0 } ?? ""
                    byRole[credit.role, default: []].append(HTMLText.shortened(credit.name + character, to: 300))
                }
                for role in roles {
                    html.raw("<dt>")
                    html.text(Self.roleName(role))
                    html.raw("</dt><dd>")
                    html.text((byRole[role] ?? []).joined(separator: ", "))
                    html.raw("</dd>")
                }
                html.raw("</dl>")
            }
            let slug = ShowFeed.slug(for: title)
            html.raw("<h2>Every airing</h2><p class=\"links\"><a class=\"subscribe\" href=\"")
            html.text("webcal://" + host + "/shows/" + slug + ".ics")
            html.raw("\">Subscribe to every airing of this title</a><a href=\"")
            html.text("/shows/" + slug + ".ics")
            html.raw("\" download>Download .ics</a></p>")
            if page.others.isEmpty {
                html.raw("<p>No other airing of this title is listed.</p>")
            } else {
                html.raw("<ul class=\"airings\">")
                for airing in page.others {
                    html.raw("<li><span class=\"time\">")
                    html.text(LocalTime.dayName(airing.programme.start) + " " + LocalTime.hourMinute(airing.programme.start))
                    html.raw("</span> ")
                    html.text(airing.channel.name)
                    html.raw(": ")
                    GuidePages.title(airing.programme, channel: airing.channel, into: &html)
                    html.raw("</li>")
                }
                html.raw("</ul>")
            }
            html.raw("<p><a href=\"")
            html.text(ModelPages.detailPath(entity: p.id.entity, rowID: p.id.rowID))
            html.raw("\">Every stored detail")
            html.raw(state.canEdit ? " (and notes, reminders)</a></p>" : "</a></p>")
        }
        return Pages.html(body)
    }

    /// `1 h 30 min`, `45 min`.
    static func duration(_ seconds: Int64) -> String {
        let minutes = seconds / 60
        if minutes < 60 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// `Series 2, episode 5 of 10, part 1 of 2`, from the one-based numbers stored.
    static func episode(_ p: FetchedObject) -> String? {
        var parts: [String] = []
        if let season = p["season"].integerValue {
            parts.append("Series \(season)" + (p["seasonCount"].integerValue.map { " of \($0)" } ?? ""))
        }
        if let episode = p["episode"].integerValue {
            parts.append((parts.isEmpty ? "Episode " : "episode ") + "\(episode)" + (p["episodeCount"].integerValue.map { " of \($0)" } ?? ""))
        }
        if let part = p["part"].integerValue {
            parts.append((parts.isEmpty ? "Part " : "part ") + "\(part)" + (p["partCount"].integerValue.map { " of \($0)" } ?? ""))
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// New, premiere, last chance, repeat (with when it was first shown, if known).
    static func flags(_ p: FetchedObject) -> [String] {
        var flags: [String] = []
        if p["isNew"].boolValue == true { flags.append("New") }
        if p["premiere"].boolValue == true { flags.append("Premiere") }
        if p["lastChance"].boolValue == true { flags.append("Last chance") }
        if p["previouslyShown"].boolValue == true {
            let first = p["previouslyShownStart"].stringValue.flatMap { $0.isEmpty ? nil : HTMLText.shortened($0, to: 40) }
            flags.append("Repeat" + (first.map { " (first shown \($0))" } ?? ""))
        }
        return flags
    }

    /// XMLTV's credit element names as a guide says them.
    static func roleName(_ role: String) -> String {
        switch role {
        case "director": "Director"
        case "actor": "Cast"
        case "writer": "Writer"
        case "adapter": "Adapted by"
        case "producer": "Producer"
        case "composer": "Music"
        case "editor": "Editor"
        case "presenter": "Presenter"
        case "commentator": "Commentator"
        case "guest": "Guests"
        default: HTMLText.shortened(role.prefix(1).uppercased() + role.dropFirst(), to: 60)
        }
    }
}
