import Feeds
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Primitives
import TestSupport
import Testing
@testable import Serve

/// The guide a person opens (issue 35), in process (HummingbirdTesting) on the Irish Freeview
/// grab moved to today: the time grid, programme pages, a show's calendar, model pages that read
/// like a guide. Chromium renders the same pages in GuideBrowserTests.
@Suite(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"),
       .enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"))
struct GuideTests {
    /// `<li class="p sN[ now]">` blocks of one channel's row of the grid, as (span, now, title).
    static func blocks(of channel: String, in page: String) -> [(span: Int, now: Bool, title: String)] {
        guard let start = page.range(of: "<h2 id=\"ch"), let row = page.range(of: "href=\"/channels/\(channel)\"", range: start.lowerBound..<page.endIndex) else { return [] }
        let end = page.range(of: "</section>", range: row.upperBound..<page.endIndex)?.lowerBound ?? page.endIndex
        let section = page[row.upperBound..<end]
        let block = try! NSRegularExpression(pattern: "<li class=\"p s(\\d+)( now)?\">.*?<a class=\"title\" href=\"[^\"]*\">([^<]*)</a>")
        let text = String(section)
        return block.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { m in
            (Int(text[Range(m.range(at: 1), in: text)!])!, m.range(at: 2).location != NSNotFound, String(text[Range(m.range(at: 3), in: text)!]))
        }
    }

    @Test func theGridShowsTheShownChannelsFavouritesFirstWithBlocksByDurationAndANowLine() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        #expect(try box.run(["edit", "--config", "c.json", "Channel", "VirginMediaTwo.ie", "favourite=true"]).status == 0)
        #expect(try box.run(["edit", "--config", "c.json", "Channel", "TG4.ie", "hidden=true"]).status == 0)
        let database = box.path("tv.sqlite")
        try await inProcess(box) { client in
            // What the database says is on RTÉ2 now, and the page of the same moment: asked again
            // if a half hour began or RTÉ2's programme changed while the page was made (a loaded
            // machine takes its time, CI once 200 s into the suite).
            @Sendable func onRTE2(at time: Int) throws -> [String] {
                try Subprocess.run("sqlite3", [database, "SELECT title, start, stop FROM Programme WHERE channel = (SELECT rowid FROM Channel WHERE xmltvId = 'RTE2.ie') AND start <= \(time) AND stop > \(time)"])
                    .output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
            }
            var now = 0, from = 0, onNow: [String] = [], response: TestResponse, after = 0
            repeat {
                now = Int(Date().timeIntervalSince1970)
                from = now - now % 1800
                onNow = try onRTE2(at: now)
                response = try await client.execute(uri: "/", method: .get)
                after = Int(Date().timeIntervalSince1970)
            } while try after - after % 1800 != from || onRTE2(at: after) != onNow
            try #require(onNow.count == 3, "nothing on RTÉ2 now: \(onNow)")
            #expect(response.status == .ok)
            let page = text(response)
            #expect(response.headers[.init("Content-Security-Policy")!]?.contains("img-src 'self';") == true)
            // Hidden out; the favourite first, marked; every channel with its logo from here.
            #expect(!page.contains("/channels/TG4.ie\""))
            let first = try #require(page.range(of: "<section class=\"row\""))
            #expect(page[first.lowerBound...].prefix(600).contains("/channels/VirginMediaTwo.ie\""), "favourite first")
            #expect(page.contains("(favourite)"))
            #expect(page.contains("<img class=\"logo\" src=\"/logos/RTE2.ie\" alt=\"Logo of RTÉ2\""))
            // The now line at this minute (the page was made between `now` and the test's now).
            let later = Int(Date().timeIntervalSince1970)
            let minutes = Set(((now - from) / 60)...((later - from) / 60))
            let line = try #require(page.range(of: "class=\"nowline n[0-9]+\"", options: .regularExpression))
            #expect(minutes.contains(Int(page[line].dropFirst("class=\"nowline n".count).dropLast()) ?? -1), "the now line at this minute")
            // RTÉ2's row: blocks fill at most the grid, the one on now is marked and as long as
            // its minutes inside the grid.
            let rte2 = Self.blocks(of: "RTE2.ie", in: page)
            #expect(!rte2.isEmpty)
            #expect(rte2.reduce(0) { $0 + $1.span } <= GuidePages.gridMinutes)
            let current = try #require(rte2.first { $0.now }, "\(rte2)")
            #expect(current.title == HTMLText.escape(onNow[0]))
            let inGrid = (min(Int(onNow[2])!, from + 3 * 3600) - max(Int(onNow[1])!, from) + 30) / 60
            #expect(abs(current.span - inGrid) <= 1, "span \(current.span), \(inGrid) minutes in the grid")
            // Every title links to its programme's page, and that page answers.
            let link = try #require(page.range(of: "<a class=\"title\" href=\"/programmes/RTE2.ie/\(UTCTime.compact(Int64(Int(onNow[1])!)))\""), "now's title links")
            #expect(!link.isEmpty)
            let programme = try await client.execute(uri: "/programmes/RTE2.ie/\(UTCTime.compact(Int64(Int(onNow[1])!)))", method: .get)
            #expect(programme.status == .ok)
            #expect(text(programme).contains("<h1>\(HTMLText.escape(onNow[0]))</h1>"))
            // Later pages the grid on; nonsense is a 400.
            #expect(try await client.execute(uri: "/?later=3", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/?later=99999", method: .get).status == .badRequest)
            #expect(try await client.execute(uri: "/?later=-1", method: .get).status == .badRequest)
        }
        images.stop()
    }

    @Test func aProgrammePageSaysWhenWhereAndWhatAndListsTheOtherAirings() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        let now = Int(Date().timeIntervalSince1970)
        // A title that airs again: the next airing of "Sky News Today", and how many more there are.
        let next = try sqlite(box, "SELECT c.xmltvId, p.start, p.stop, p.rowid FROM Programme p JOIN Channel c ON c.rowid = p.channel WHERE p.title = 'Sky News Today' AND p.stop > \(now) ORDER BY p.start LIMIT 1")
            .split(separator: "|").map(String.init)
        try #require(next.count == 4)
        let others = Int(try sqlite(box, "SELECT count(*) FROM Programme WHERE title = 'Sky News Today' AND stop > \(now)"))! - 1
        #expect(others > 1)
        let start = Int(next[1])!, stop = Int(next[2])!
        try await inProcess(box) { client in
            let response = try await client.execute(uri: "/programmes/\(next[0])/\(UTCTime.compact(Int64(start)))", method: .get)
            #expect(response.status == .ok)
            let page = text(response)
            #expect(page.contains("<h1>Sky News Today</h1>"))
            // Times in the server's zone, the channel, the picture (served from here, with alt text).
            #expect(page.contains(LocalTime.dayName(Int64(start)) + ", " + LocalTime.hourMinute(Int64(start)) + "–" + LocalTime.hourMinute(Int64(stop))))
            #expect(page.contains(">Sky News</a>"))
            #expect(page.contains("<img class=\"poster\" src=\"/pictures/\(next[0])/\(UTCTime.compact(Int64(start)))\" alt=\"Picture of Sky News Today\""))
            // The other airings, each a link to its page; and the subscription to all of them.
            #expect(page.components(separatedBy: "<li><span class=\"time\">").count - 1 == min(others, ProgrammePages.otherAiringsShown))
            let slug = ShowFeed.slug(for: "Sky News Today")
            #expect(page.range(of: "href=\"webcal://[^\"/]+/shows/\(slug).ics\">Subscribe to every airing of this title</a>", options: .regularExpression) != nil)
            // The picture: fetched once from its host, then served from memory.
            let picture = try await client.execute(uri: "/pictures/\(next[0])/\(UTCTime.compact(Int64(start)))", method: .get)
            #expect(picture.status == .ok)
            #expect(picture.headers[.contentType] == "image/png")
            #expect(Array(picture.body.readableBytesView.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
            let logo = try await client.execute(uri: "/logos/SkyNews.ie", method: .get)
            #expect(logo.headers[.contentType] == "image/png")
            _ = try await client.execute(uri: "/logos/SkyNews.ie", method: .get)
            let etag = try #require(logo.headers[.eTag])
            #expect(try await client.execute(uri: "/logos/SkyNews.ie", method: .get, headers: [.ifNoneMatch: etag]).status == .notModified)
            #expect(try images.hits().filter { $0.key.hasPrefix("/logo/") }.values.allSatisfy { $0 == 1 }, "each logo fetched once")
            // A programme that is not there, and paths that are not a programme's.
            #expect(try await client.execute(uri: "/programmes/\(next[0])/19990101000000", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/programmes/\(next[0])/20261340250000", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/programmes/%FF/20261127200000", method: .get).status == .notFound)
        }
        images.stop()
    }

    @Test func anImageThatIsNotAPictureIsNeverServed() async throws {
        #expect(ImageCache.imageType(Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".utf8)) == nil)
        #expect(ImageCache.imageType([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == "image/png")
        #expect(ImageCache.imageType([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        let images = try ImageServer()
        let cache = ImageCache()
        #expect(await cache.image(at: images.base + "/script/x.svg") == nil)
        #expect(await cache.image(at: images.base + "/missing.png") == nil)
        #expect(await cache.image(at: "file:///etc/passwd") == nil)
        #expect(await cache.image(at: images.base + "/logo/a.png")?.type == "image/png")
        images.stop()
    }

    @Test func aShowsCalendarHoldsExactlyItsUpcomingAiringsWithTheChannelFeedsUIDsAndFollowsTheGuide() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        let title = "Sky News Today"
        let slug = ShowFeed.slug(for: title)
        let file = box.path("feeds/" + ShowFeed.fileName(forSlug: slug))
        let now = Int(Date().timeIntervalSince1970)
        // What the database holds: every airing of exactly this title not ended, on shown channels.
        @Sendable func upcoming(at time: Int) throws -> Set<String> {
            Set(try sqlite(box, "SELECT c.xmltvId || '|' || p.start || '|' || p.clumpIndex FROM Programme p JOIN Channel c ON c.rowid = p.channel WHERE p.title = '\(title)' AND p.stop > \(time) AND c.hidden = 0")
                .split(separator: "\n").map { line -> String in
                    let parts = line.split(separator: "|")
                    return ProgrammeUID.make(channelID: String(parts[0]), start: Int64(parts[1])!, clumpIndex: Int(parts[2])!, domain: "tvimport.invalid")
                })
        }
        let expected = try upcoming(at: now)
        #expect(expected.count > 5)
        let channelFeedPath = box.path("feeds/SkyNews.ie.ics")
        try await inProcess(box) { client in
            let response = try await client.execute(uri: "/shows/\(slug).ics", method: .get, headers: [.acceptEncoding: "gzip"])
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "text/calendar; charset=utf-8")
            #expect(response.headers[.contentEncoding] == "gzip")
            let etag = try #require(response.headers[.eTag])
            #expect(try await client.execute(uri: "/shows/\(slug).ics", method: .get, headers: [.acceptEncoding: "gzip", .ifNoneMatch: etag]).status == .notModified)
            let plain = try await client.execute(uri: "/shows/\(slug).ics", method: .get)
            let uids = Set(text(plain).split(separator: "\r\n").filter { $0.hasPrefix("UID:") }.map { String($0.dropFirst(4)) })
            // Exactly its upcoming airings: those not ended when the calendar was made, which was
            // between `now` and this moment (an airing may end meanwhile on a loaded machine).
            let stillUpcoming = try upcoming(at: Int(Date().timeIntervalSince1970))
            #expect(stillUpcoming.isSubset(of: uids) && uids.isSubset(of: expected), "the show's calendar holds exactly its upcoming airings")
            #expect(!text(plain).contains("SUMMARY:Sky News\r\n"), "no other title")
            // The same events as the channel feed's, byte for byte.
            let channelFeed = try String(contentsOfFile: channelFeedPath, encoding: .utf8)
            for event in text(plain).components(separatedBy: "BEGIN:VEVENT\r\n").dropFirst() {
                let body = event.components(separatedBy: "END:VEVENT\r\n")[0]
                #expect(channelFeed.contains(body), "an event differs from the channel feed's")
            }
            // Unknown and malformed slugs.
            #expect(try await client.execute(uri: "/shows/nothing-like-this-123456789abc.ics", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/shows/..%2Fc.json", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/shows/\(slug).ICS", method: .get).status == .notFound)
        }
        // Subscribed: recorded, written beside the feeds, and listed in index.html once the
        // outputs followed (in the background).
        #expect(ShowSubscriptions.titles(in: box.path("feeds")) == [title])
        let deadline = Date().addingTimeInterval(30)
        while !((try? String(contentsOfFile: box.path("feeds/index.html"), encoding: .utf8))?.contains("Sky News Today (every airing)") ?? false), Date() < deadline {
            usleep(100_000)
        }
        #expect(try String(contentsOfFile: box.path("feeds/index.html"), encoding: .utf8).contains("href=\"show~\(slug).ics\""))

        // Incremental: a run with nothing new leaves the file as it was; a changed airing
        // rewrites it, with that event's SEQUENCE up and the others as they were.
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let modified = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == modified)
        // Another show changes: this calendar does not.
        var guide = try String(contentsOfFile: box.path("guide.xml"), encoding: .utf8)
        guide = guide.replacingOccurrences(of: "<title lang=\"en\">EuroNews</title>", with: "<title lang=\"en\">EuroNews</title><sub-title>Changed</sub-title>")
        try box.write("guide.xml", guide)
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "a change to another show left it alone")
        // One of its airings changes: only that event changes, SEQUENCE 1.
        let next = Int(try sqlite(box, "SELECT p.start FROM Programme p WHERE p.title = '\(title)' AND p.stop > \(now) ORDER BY p.start LIMIT 1"))!
        // The grab writes Irish time (+0000 in winter, +0100 in summer): its start as written. The
        // grab says its second day twice, and the last occurrence is the one imported: edit that.
        let range = try #require(guide.range(of: "channel=\"SkyNews.ie\" start=\"\(UTCTime.compact(Int64(next))) +0000\"", options: .backwards)
                                 ?? guide.range(of: "channel=\"SkyNews.ie\" start=\"\(UTCTime.compact(Int64(next + 3600))) +0100\"", options: .backwards))
        let end = try #require(guide.range(of: "</programme>", range: range.upperBound..<guide.endIndex))
        let titleRange = try #require(guide.range(of: "<title lang=\"en\">\(title)</title>", range: range.upperBound..<end.lowerBound))
        guide.replaceSubrange(titleRange, with: "<title lang=\"en\">\(title)</title><sub-title>Special</sub-title>")
        try box.write("guide.xml", guide)
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status == 0)
        let after = try String(contentsOfFile: file, encoding: .utf8)
        #expect(after.contains("SUMMARY:Sky News Today: Special\r\n"))
        // Events by UID: only the revised one differs (its SUMMARY and LAST-MODIFIED), and it
        // is the channel feed's event, as the channel feed has it now.
        func events(_ text: String) -> [String: String] {
            var byUID: [String: String] = [:]
            for event in text.components(separatedBy: "BEGIN:VEVENT\r\n").dropFirst() {
                let body = event.components(separatedBy: "END:VEVENT\r\n")[0]
                if let uid = body.split(separator: "\r\n").first(where: { $0.hasPrefix("UID:") }) { byUID[String(uid)] = body }
            }
            return byUID
        }
        let old = events(String(decoding: before, as: UTF8.self)), new = events(after)
        let revised = new.filter { old[$0.key] != $0.value }
        #expect(revised.count == 1, "one event revised: \(revised.keys)")
        #expect(revised.values.first?.contains("Special") == true)
        #expect(Set(new.keys).isSubset(of: Set(old.keys)), "no event added")
        #expect(try String(contentsOfFile: box.path("feeds/SkyNews.ie.ics"), encoding: .utf8).contains(revised.values.first ?? "-"))
        #expect(Set(after.split(separator: "\r\n").filter { $0.hasPrefix("UID:") }.map { String($0.dropFirst(4)) }).isSubset(of: expected))
        images.stop()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: repoRoot.appendingPathComponent(".build/ical-validate-venv/bin/python").path)
                   && FileManager.default.isExecutableFile(atPath: "/work/shared/ical-validate/validate_ics.sh") || ProcessInfo.processInfo.environment["ICAL_VENV"] != nil,
                   "needs ../shared/ical-validate and its venv (scripts/validate-feeds makes it)"))
    func aShowsCalendarPassesTheSevenParsers() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images, extra: ", \"feeds\": {\"filtered\": [{\"name\": \"news\", \"show\": \"Latest News and Weather\"}]}")
        // Configured in feeds.filtered[]: written by the run itself, listed in the index.
        let file = box.path("feeds/" + ShowFeed.fileName(forSlug: ShowFeed.slug(for: "Latest News and Weather")))
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(try String(contentsOfFile: box.path("feeds/index.html"), encoding: .utf8).contains("Latest News and Weather (every airing)"))
        let harness = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/ical-validate/validate_ics.sh").path
        let venv = ProcessInfo.processInfo.environment["ICAL_VENV"] ?? repoRoot.appendingPathComponent(".build/ical-validate-venv").path
        let result = try Subprocess.run("/bin/bash", [harness, file], environment: ["ICAL_VENV": venv])
        let report = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.exitStatus == 0, "\(report)\(result.stderr)")
        #expect(report.contains("PASS"), "\(report)")
        for parser in ["icalendar", "ical", "vobject", "ics", "libical", "sabre-vobject", "ruby-icalendar"] {
            #expect(report.split(separator: "\n").contains { $0.contains(parser) && $0.contains(" OK") }, "\(parser): \(report)")
        }
        images.stop()
    }

    @Test func searchResultsLinkToProgrammePagesAndOfferTheShowsCalendar() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        try await inProcess(box) { client in
            let page = text(try await client.execute(uri: "/search?q=sky+news+today", method: .get))
            #expect(page.contains("/shows/\(ShowFeed.slug(for: "Sky News Today")).ics\">Subscribe to every airing of Sky News Today</a>"))
            #expect(page.contains("<a class=\"title\" href=\"/programmes/SkyNews.ie/"))
        }
        images.stop()
    }

    @Test func modelPagesReadLikeAGuide() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        let rte2Count = try sqlite(box, "SELECT count(*) FROM Programme WHERE channel = (SELECT rowid FROM Channel WHERE xmltvId = 'RTE2.ie')")
        try await inProcess(box) { client in
            // A to-one filter by the target's identifier; cells name the channel.
            let list = text(try await client.execute(uri: "/model/Programme?channel=RTE2.ie", method: .get))
            #expect(list.contains("<p>\(rte2Count) objects · channel = RTE2.ie</p>"), "\(list.prefix(2000))")
            #expect(list.contains(">RTÉ2</a></td>"))
            #expect(!list.contains("#1</a>") && !list.contains("Channel #"))
            #expect(!list.contains(">clumpIndex"), "bookkeeping is no column")
            #expect(list.contains("<div class=\"scroll\"><table class=\"list\">"))
            #expect(try await client.execute(uri: "/model/Programme?channel=%23999999", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/model/Programme?channel=Nowhere.ie", method: .get).status == .notFound)
            // An object page headed by its display; bookkeeping under Details; members by display.
            let channel = text(try await client.execute(uri: "/model/Channel/RTE2.ie", method: .get))
            #expect(channel.contains("<h1>RTÉ2</h1>"))
            #expect(channel.contains("<details><summary>Details</summary>"))
            let details = try #require(channel.range(of: "<details>"))
            #expect(channel[details.lowerBound...].contains("<th>programmeCount</th>"))
            #expect(!channel[..<details.lowerBound].contains("<th>programmeCount</th>"))
            #expect(channel.range(of: "<li><a href=\"/model/Programme/%23[0-9]+\">[^<]+ · [A-Z][a-z]{2} [0-9]+ [A-Z][a-z]{2} [0-9]{2}:[0-9]{2}</a></li>", options: .regularExpression) != nil)
            let programme = text(try await client.execute(uri: "/model/Programme?channel=RTE2.ie&sort=start", method: .get))
            let first = try #require(programme.range(of: "href=\"/model/Programme/%23[0-9]+\"", options: .regularExpression))
            let detail = text(try await client.execute(uri: String(programme[first].dropFirst(6).dropLast()), method: .get))
            #expect(detail.contains("<th>channel</th><td><a href=\"/model/Channel/%23"))
            #expect(detail.contains(">RTÉ2</a>"))
            #expect(detail.range(of: "<details>[\\s\\S]*<th>clumpIndex</th>", options: .regularExpression) != nil)
            #expect(detail.range(of: "<details>[\\s\\S]*<th>contentHash</th>", options: .regularExpression) != nil)
            #expect(detail.range(of: "<details>[\\s\\S]*<th>sequence</th>", options: .regularExpression) != nil)
        }
    }

    @Test func saveAnswersWithTheSavedValuesAndAnUndo() async throws {
        let images = try ImageServer()
        let box = try freeviewSandbox(images: images)
        try await inProcess(box) { client in
            let bearer: HTTPFields = [.authorization: "Bearer guide-token", .contentType: "application/x-www-form-urlencoded"]
            let saved = try await client.execute(uri: "/model/Channel/RTE2.ie", method: .post, headers: bearer,
                                                 body: ByteBuffer(string: "customName=Two+%26+Co"))
            #expect(saved.status == .seeOther)
            let location = try #require(saved.headers[.location])
            #expect(location.hasSuffix("?saved=customName"))
            let page = text(try await client.execute(uri: location, method: .get, headers: [.authorization: "Bearer guide-token"]))
            #expect(page.contains("Saved: customName = “Two &amp; Co”."))
            #expect(page.contains("<h1>Two &amp; Co</h1>"), "headed by the new name")
        }
        #expect(try sqlite(box, "SELECT customName FROM Channel WHERE xmltvId = 'RTE2.ie'") == "Two & Co")
    }
}

/// The request layer's new readers (they are also in `scripts/fuzz serve`).
@Suite struct GuideRequestInputTests {
    @Test func programmePaths() {
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127200000")?.channel == "RTE2.ie")
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127200000")?.start == UTCTime.seconds(year: 2026, month: 11, day: 27, hour: 20))
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127200000/2")?.clump == 2)
        #expect(RequestInput.programmeKey(fromRawPath: "a%2Fb/20261127200000")?.channel == "a/b")
        #expect(RequestInput.programmeKey(fromRawPath: "%2312/20261127200000")?.channel == "#12")
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261131200000") == nil, "31 November")
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127250000") == nil)
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/2026112720000") == nil)
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie/20261127200000/99999") == nil)
        #expect(RequestInput.programmeKey(fromRawPath: "/20261127200000") == nil)
        #expect(RequestInput.programmeKey(fromRawPath: "RTE2.ie") == nil)
        #expect(RequestInput.programmeKey(fromRawPath: "%ZZ/20261127200000") == nil)
        #expect(RequestInput.compactTime("99991231235960") != nil)
        #expect(RequestInput.compactTime("18991231235959") == nil)
        #expect(RequestInput.compactTime("2026112720000x") == nil)
    }

    @Test func showSlugsAndHours() {
        let slug = ShowFeed.slug(for: "Fair City")
        #expect(slug.hasPrefix("fair-city-") && slug.utf8.count == "fair-city-".utf8.count + 12)
        #expect(ShowFeed.slug(for: "FAIR CITY") != slug, "an exact title: case counts")
        #expect(ShowFeed.slug(for: "Rugbaí Beo").hasPrefix("rugbai-beo-"))
        #expect(ShowFeed.slug(for: "日本").hasPrefix("show-"))
        #expect(ShowFeed.slug(for: String(repeating: "x", count: 5000)).utf8.count <= 64)
        #expect(RequestInput.showSlug(fromRawPath: Substring(slug + ".ics")) == slug)
        #expect(RequestInput.showSlug(fromRawPath: "../etc.ics") == nil)
        #expect(RequestInput.showSlug(fromRawPath: Substring(slug)) == nil)
        #expect(RequestInput.showSlug(fromRawPath: Substring(slug.uppercased() + ".ics")) == nil)
        #expect(RequestInput.hoursLater(nil) == 0)
        #expect(RequestInput.hoursLater("336") == 336)
        #expect(RequestInput.hoursLater("337") == nil)
        #expect(RequestInput.hoursLater("1e3") == nil)
    }

    @Test func gridBlocks() {
        let from: Int64 = 1_000_000_200 - 1_000_000_200 % 1800
        func p(_ start: Int64, _ minutes: Int64?) -> GuidePages.ProgrammeRow {
            GuidePages.ProgrammeRow(start: from + start * 60, stop: minutes.map { from + (start + $0) * 60 }, clump: 0, title: "t", subTitle: nil)
        }
        // Started before the grid: clipped; a gap before a later one; a one-minute one still a column;
        // one past the end cut at 180 minutes; one without a stop ends at the next start.
        let blocks = GuidePages.blocks([p(-30, 45), p(20, 1), p(21, nil), p(60, 200)], from: from)
        #expect(blocks.map(\.gap) == [0, 5, 0, 0])
        #expect(blocks.map(\.span) == [15, 1, 39, 120])
        #expect(blocks.reduce(0) { $0 + $1.gap + $1.span } == GuidePages.gridMinutes)
        #expect(GuidePages.blocks([p(-600, 30)], from: from).isEmpty, "ended before the grid")
    }
}
