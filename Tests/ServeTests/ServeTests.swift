import Feeds
import Foundation
import HummingbirdTesting
import Job
import Primitives
import enum Job.ExitStatus
import TestSupport
import Testing
@testable import Serve
#if canImport(Glibc)
import Glibc
#endif

/// Serve's routes in this process, through HummingbirdTesting's router (no socket). What needs
/// the socket of a real server (the feeds the event loop answers from memory, pipelining,
/// HTTP/1.0, a run while clients keep asking) runs `tvimport serve` on loopback, driven by curl:
/// an in-process server's handlers would share the test runner's two cooperative threads with
/// tests that block them.
@Suite struct ServeTests {
    @Test func feedsHaveValidatorsGzipAndHead() async throws {
        let box = try preparedSandbox()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasPrefix("alpha") && $0.hasSuffix(".ics") })
        let onDisk = try #require(FileManager.default.contents(atPath: box.path("feeds/" + file)))
        let url = "/feeds/" + file
        try await inProcess(box) { client in

        let plain = try await client.fetch(url)
        #expect(plain.status == 200)
        #expect(plain.body == onDisk)
        #expect(plain.headers["content-type"] == "text/calendar; charset=utf-8")
        #expect(plain.headers["cache-control"] == "public, max-age=43200")
        let etag = try #require(plain.headers["etag"])
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        let lastModified = try #require(plain.headers["last-modified"])

        #expect(try await client.fetch(url, headers: ["If-None-Match": etag]).status == 304)
        #expect(try await client.fetch(url, headers: ["If-None-Match": "\"other\", \(etag)"]).status == 304)
        #expect(try await client.fetch(url, headers: ["If-None-Match": "\"other\""]).status == 200)
        #expect(try await client.fetch(url, headers: ["If-Modified-Since": lastModified]).status == 304)
        #expect(try await client.fetch(url, headers: ["If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]).status == 200)

        let gzip = try await client.fetch(url, headers: ["Accept-Encoding": "gzip"])
        #expect(gzip.status == 200)
        #expect(gzip.headers["content-encoding"] == "gzip")
        #expect(gzip.body.count < onDisk.count)
        #expect(gzip.headers["etag"] != etag)
        let gz = box.path("got.ics.gz")
        FileManager.default.createFile(atPath: gz, contents: gzip.body)
        let inflated = try box.run(["-dc", gz], executable: "/bin/gzip")
        #expect(inflated.status == 0 && Data(inflated.stdout.utf8) == onDisk)
        let gzipNotModified = try await client.fetch(url, headers: ["Accept-Encoding": "gzip", "If-None-Match": try #require(gzip.headers["etag"])])
        #expect(gzipNotModified.status == 304)
        // The headers are made once per file (FeedFiles.Entry): every form carries the validators,
        // the caching fields and the security headers; only the gzip 200 names its encoding.
        let notModified = try await client.fetch(url, headers: ["If-None-Match": etag])
        for (form, response) in [("200", plain), ("gzip 200", gzip), ("304", notModified), ("gzip 304", gzipNotModified)] {
            #expect(response.headers["x-content-type-options"] == "nosniff", "\(form)")
            #expect(response.headers["x-frame-options"] == "DENY", "\(form)")
            #expect(response.headers["referrer-policy"] == "same-origin", "\(form)")
            #expect(response.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true, "\(form)")
            #expect(response.headers["vary"] == "Accept-Encoding", "\(form)")
            #expect(response.headers["cache-control"] == "public, max-age=43200", "\(form)")
            #expect(response.headers["last-modified"] == lastModified, "\(form)")
            #expect(response.headers["content-encoding"] == (form == "gzip 200" ? "gzip" : nil), "\(form)")
        }
        #expect(notModified.headers["etag"] == etag && gzipNotModified.headers["etag"] == gzip.headers["etag"])

        let head = try await client.fetch(url, method: "HEAD")
        #expect(head.status == 200)
        #expect(!head.text.contains("BEGIN:VCALENDAR"))
        #expect(head.headers["content-length"] == String(onDisk.count))

        let index = try await client.fetch("/feeds/")
        #expect(index.status == 200)
        #expect(index.text.contains(file))
        }
    }

    /// A feed in memory is answered on the event loop (FeedFastPath), not by the route: the
    /// same bytes and headers as the route's answer, responses in the order of pipelined
    /// requests (one the route must load first, then one in memory), HTTP/1.0 closed as
    /// before, and the requests counted in /metrics.
    @Test(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"), .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"))
    func feedsAnsweredOnTheEventLoopAreTheRoutesAnswers() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") }.sorted()
        try #require(files.count >= 2)
        let (first, second) = (files[0], files[1])

        // The route loads the file; the next request is answered from memory.
        let routed = try curl(server.base + "/feeds/" + first)
        let fast = try curl(server.base + "/feeds/" + first)
        #expect(routed.status == 200 && fast.status == 200 && fast.body == routed.body)
        var routedHeaders = routed.headers, fastHeaders = fast.headers
        routedHeaders["date"] = nil
        fastHeaders["date"] = nil
        #expect(fastHeaders == routedHeaders)
        #expect(fast.headers["server"] == "tvimport" && fast.headers["date"] != nil)
        for (name, value) in [("If-None-Match", try #require(routed.headers["etag"])), ("Accept-Encoding", "gzip")] {
            #expect(try curl(server.base + "/feeds/" + first, headers: [name: value]).status == (name == "Accept-Encoding" ? 200 : 304))
        }

        // Pipelined: `second` is not in memory yet (the route loads it on the thread pool),
        // `first` is: the answers keep the requests' order.
        let etag = try #require(routed.headers["etag"])
        let pipelined = try rawExchange(port: server.port, "GET /feeds/\(second) HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\n\r\n"
            + "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout: 5)
        let statuses = pipelined.text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }
        #expect(statuses.map { String($0.prefix(12)) } == ["HTTP/1.1 200", "HTTP/1.1 304", "HTTP/1.1 200"], "\(statuses)")
        #expect(pipelined.headers["etag"] != etag, "the first answer is not the first request's")
        #expect(pipelined.closed)

        // HTTP/1.0 from memory: an HTTP/1.0 answer, and the connection closed.
        let old = try rawExchange(port: server.port, "GET /feeds/\(first) HTTP/1.0\r\n\r\n")
        #expect(old.statusLine.hasPrefix("HTTP/1.0 200"), "\(old.statusLine)")
        #expect(old.headers["connection"]?.lowercased() == "close" && old.closed)
        #expect(old.headers["content-length"] == routed.headers["content-length"])

        // Counted like the route's answers: at least the two 304s above.
        let metrics = try curl(server.base + "/metrics").text
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("tvimport_serve_requests_total{code=\"304\"}") })
        #expect((Int(line.split(separator: " ").last ?? "") ?? 0) >= 2, "\(line)")
        #expect(server.stop() == 0)
    }

    /// `?day=` takes today, tomorrow, yesterday and dates, and refuses anything else (issue 39:
    /// `tomorrow` silently showed today).
    @Test func aChannelsDayIsNamedOrRefused() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        // The server reads the clock itself: asked again when the day turned meanwhile.
        var today: Int64, pages: [(word: String, day: Int64, page: HTTPResult)]
        repeat {
            today = LocalTime.startOfDay(containing: Int64(Date().timeIntervalSince1970))
            pages = []
            for (word, day) in [("today", today), ("tomorrow", LocalTime.startOfDay(containing: today + 30 * 3600)),
                                ("yesterday", LocalTime.startOfDay(containing: today - 12 * 3600))] {
                pages.append((word, day, try await client.fetch("/channels/alpha.test?day=" + word)))
            }
        } while LocalTime.startOfDay(containing: Int64(Date().timeIntervalSince1970)) != today
        for (word, day, page) in pages {
            #expect(page.status == 200, "\(word): \(page.status)")
            #expect(page.text.contains("<strong>" + LocalTime.dayName(day) + "</strong>"), "\(word) shows another day")
        }
        let dated = try await client.fetch("/channels/alpha.test?day=" + LocalTime.day(today + 30 * 3600))
        #expect(dated.status == 200 && dated.text.contains("<strong>" + LocalTime.dayName(today + 30 * 3600) + "</strong>"))
        for bad in ["nonsense", "2026-02-31", "2026-1-5", "", "Tomorrow"] {
            #expect(try await client.fetch("/channels/alpha.test?day=" + bad).status == 400, "day=\(bad) was accepted")
        }
        #expect(try await client.fetch("/channels/alpha.test").status == 200)
        }
    }

    /// A changed feed is served anew (its cache entry is keyed by inode, size and mtime).
    @Test func aRewrittenFeedIsServedAnew() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let first = try await client.fetch("/feeds/index.html")
        try "<p>replaced</p>".write(toFile: box.path("feeds/index.html.tmp"), atomically: false, encoding: .utf8)
        #expect(rename(box.path("feeds/index.html.tmp"), box.path("feeds/index.html")) == 0)
        let second = try await client.fetch("/feeds/index.html", headers: ["If-None-Match": first.headers["etag"] ?? ""])
        #expect(second.status == 200)
        #expect(second.text == "<p>replaced</p>")
        }
    }

    /// gzip is made once per content, never per request: `/metrics` counts the compressions
    /// while the same feed is fetched again and again, replaced by the same bytes (a new inode
    /// and mtime, the same ETag), then by new ones.
    @Test func aFeedIsCompressedOncePerContent() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        func compressions() async throws -> Int? {
            let text = try await client.fetch("/metrics").text
            return text.split(separator: "\n").first { $0.hasPrefix("tvimport_serve_feed_compressions_total ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        #expect(try await compressions() == 0)
        let path = box.path("feeds/alpha.test.ics")
        let url = "/feeds/alpha.test.ics"
        var etags: Set<String> = []
        for _ in 0..<10 {
            let r = try await client.fetch(url, headers: ["Accept-Encoding": "gzip"])
            #expect(r.status == 200 && r.headers["content-encoding"] == "gzip")
            etags.insert(r.headers["etag"] ?? "")
        }
        #expect(etags.count == 1)
        #expect(try await compressions() == 1)

        let bytes = try #require(FileManager.default.contents(atPath: path))
        func replace(with data: Data) {
            FileManager.default.createFile(atPath: path + ".tmp", contents: data)
            #expect(rename(path + ".tmp", path) == 0)
        }
        replace(with: bytes)
        let same = try await client.fetch(url, headers: ["Accept-Encoding": "gzip"])
        #expect(same.status == 200 && same.headers["etag"] == etags.first)
        #expect(try await compressions() == 1, "the same bytes were compressed again")

        replace(with: bytes + Data("X-EXTRA:1\r\n".utf8))
        let changed = try await client.fetch(url, headers: ["Accept-Encoding": "gzip"])
        #expect(changed.status == 200 && changed.headers["etag"] != etags.first)
        #expect(try await client.fetch(url, headers: ["Accept-Encoding": "gzip"]).status == 200)
        #expect(try await compressions() == 2)
        }
    }

    @Test func noPathLeavesTheFeedDirectory() async throws {
        let box = try preparedSandbox()
        try "SECRET-OUTSIDE".write(toFile: box.path("secret.ics"), atomically: true, encoding: .utf8)
        #expect(symlink(box.path("secret.ics"), box.path("feeds/link.ics")) == 0)
        try await inProcess(box) { client in
        let attempts = [
            "/feeds/../secret.ics", "/feeds/%2e%2e/secret.ics", "/feeds/%2E%2E%2Fsecret.ics", "/feeds/..%2fsecret.ics",
            "/feeds/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/feeds//etc/passwd", "/feeds/%2fetc%2fpasswd", "/feeds/%2Fetc%2Fpasswd",
            "/feeds/link.ics", "/feeds/.%2e/secret.ics", "/feeds/%252e%252e%252fsecret.ics", "/feeds/\(box.path("secret.ics"))",
            "/feeds/%00secret.ics", "/feeds/..\\secret.ics",
        ]
        for path in attempts {
            let r = try await client.fetch(path)
            #expect(r.status == 404 || r.status == 400, "\(path): \(r.status)")
            #expect(!r.text.contains("SECRET-OUTSIDE"), "\(path) served the secret")
            #expect(!r.text.contains("root:"), "\(path) served /etc/passwd")
        }
        }
    }

    @Test func guidePagesEscapeEveryText() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let home = try await client.fetch("/")
        #expect(home.status == 200)
        #expect(home.text.contains("Alpha One"))
        // The grid marks what is on now, and its title links to the programme's page.
        #expect(home.text.contains("<li class=\"p s30 now\"><span class=\"time\">Now</span> <a class=\"title\" href=\"/programmes/alpha.test/"))
        #expect(home.text.contains("\">Show \(onNow())</a>"))
        #expect(home.text.contains("webcal://localhost/feeds/alpha.test.ics"))
        #expect(home.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(home.headers["content-security-policy"]?.contains("unsafe-inline") == false)
        for page in [home, try await client.fetch("/channels/evil.test"), try await client.fetch("/search?q=alert"),
                     try await client.fetch("/model/Programme?sort=title"), try await client.fetch("/model/Channel")] {
            #expect(page.status == 200)
            #expect(!page.text.contains("<script"), "unescaped script")
            #expect(!page.text.contains("<b>\"Channel"), "unescaped channel name")
            #expect(!page.text.contains("<img src=x"), "unescaped description")
        }
        #expect(try await client.fetch("/channels/evil.test").text.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        #expect(try await client.fetch("/search?q=show%201").text.contains("Show 11"))
        #expect(try await client.fetch("/channels/nope.test").status == 404)
        }
    }

    /// Search and a show's calendar compare the titles of what has not ended, read once a minute
    /// and again as soon as the database changes (UpcomingTitles.swift): a title an import adds
    /// is found at once, in any case; a hidden channel's programmes are not; and the hits are
    /// what filtering every programme gives, in start order.
    @Test func searchAndShowsFollowTheGuideAtOnce() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let title = "Über Nacht", slug = ShowFeed.slug(for: title)
        #expect(try await client.fetch("/search?q=%C3%BCber").text.contains("Nothing found"))
        #expect(try await client.fetch("/shows/\(slug).ics").status == 404)
        // Another source adds the title within the same minute: found at once.
        let start = Int64(guideStart) + 3 * 3600
        try box.write("more.xml", GuideText.document(channels: [.init("beta.test", name: "Beta")],
                                                     programmes: [.init("beta.test", start: start, stop: start + 1800, title: title)]))
        let imported = try box.run(["import", "--db", box.path("tv.sqlite"), "--source", "more", box.path("more.xml")])
        #expect(imported.status == 0, "\(imported.stderr)")
        for query in ["%C3%BCber", "%C3%9CBER+NACHT", "nacht"] {
            #expect(try await client.fetch("/search?q=" + query).text.contains("/programmes/beta.test/\(UTCTime.compact(start))\">\(title)</a>"), "q=\(query)")
        }
        let calendar = try await client.fetch("/shows/\(slug).ics")
        #expect(calendar.status == 200 && calendar.text.contains("SUMMARY:\(title)"))

        // Hits: every shown programme not ended whose title holds the text, by start, as SQL
        // and Swift find them here (asked again when a programme ended meanwhile).
        #expect(try box.run(["edit", "--config", "c.json", "Channel", "evil.test", "hidden=true"]).status == 0)
        var expected: [String] = [], found: [String] = [], before = 0
        repeat {
            before = Int(Date().timeIntervalSince1970)
            expected = try sqlite(box, "SELECT c.xmltvId, p.start, p.title FROM Programme p JOIN Channel c ON c._pk = p.channel WHERE c.hidden = 0 AND p.stop > \(before) ORDER BY p.start, p.channel")
                .split(separator: "\n").map { $0.split(separator: "|", maxSplits: 2).map(String.init) }
                .filter { $0.count == 3 && $0[2].lowercased().contains("h") }
                .map { "\($0[0])/\(UTCTime.compact(Int64($0[1])!))" }
            let page = try await client.fetch("/search?q=h").text
            found = page.components(separatedBy: "<ol class=\"day\">").last!.components(separatedBy: "href=\"/programmes/").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        } while (before - guideStart) / 1800 != (Int(Date().timeIntervalSince1970) - guideStart) / 1800
        #expect(found == expected, "\(found) against \(expected)")
        #expect(found.count >= 9, "\(found)")
        #expect(try await client.fetch("/search?q=alert").text.contains("Nothing found"), "a hidden channel's programme was found")
        }
    }

    @Test func modelPagesListFilterSortAndShowOne() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let index = try await client.fetch("/model")
        for entity in ["Channel", "Programme", "Credit", "Category"] { #expect(index.text.contains("/model/\(entity)\"")) }
        let channels = try await client.fetch("/model/Channel")
        #expect(channels.text.contains("2 objects"))
        #expect(channels.text.contains("alpha.test"))
        let filtered = try await client.fetch("/model/Programme?title=Show%203")
        #expect(filtered.text.contains("1 object ·"))
        let sorted = try await client.fetch("/model/Programme?sort=title&desc=1")
        let titles = ["Show 9", "Show 11"].map { sorted.text.range(of: $0)?.lowerBound }
        #expect(titles[0] != nil && titles[1] != nil && titles[0]! < titles[1]!)
        #expect(try await client.fetch("/model/Programme?length=abc").status == 400)
        #expect(try await client.fetch("/model/Programme?nope=1").status == 400)
        let paged = try await client.fetch("/model/Programme?page=2")
        #expect(paged.text.contains("Page 1 of 1") == false)
        let detail = try await client.fetch("/model/Channel/alpha.test")
        #expect(detail.status == 200)
        #expect(detail.text.contains("Alpha One"))
        #expect(detail.text.contains("programmes (12)"))
        #expect(try await client.fetch("/model/Nope").status == 404)
        #expect(try await client.fetch("/model/Channel/missing.test").status == 404)
        }
    }

    /// A list's pages are SQLite's LIMIT and OFFSET (no object made for the rows before a page):
    /// every row once, in the list's order; a list sorted by a chosen key shows its first 100
    /// pages and refuses later ones (its sort would read every row for each).
    @Test func modelListPagesAreTheRowsInOrderOnceEach() async throws {
        let box = try ServeSandbox()
        let base = Int64(guideStart)
        try box.write("guide.xml", GuideText.document(channels: [.init("many.test", name: "Many")], programmes: (0..<260).map {
            .init("many.test", start: base + Int64($0) * 1800, stop: base + Int64($0 + 1) * 1800, title: "Airing \(($0 * 37) % 260)")
        }))
        try box.write("c.json", makeConfig(box))
        #expect(try box.nightlyRun() == .success)
        try await inProcess(box) { client in
        func rowIDs(_ path: String) async throws -> [String] {
            let page = try await client.fetch(path)
            #expect(page.status == 200, "\(path): \(page.status)")
            return page.text.components(separatedBy: "<tr><td><a href=\"/model/Programme/%23").dropFirst().map { String($0.prefix { $0.isNumber }) }
        }
        for (query, order) in [("", "channel, start, clumpIndex"), ("sort=title&desc=1&", "title DESC")] {
            var listed: [String] = []
            for page in 1...6 { listed += try await rowIDs("/model/Programme?\(query)page=\(page)") }
            let expected = try sqlite(box, "SELECT _pk FROM Programme ORDER BY \(order)").split(separator: "\n").map(String.init)
            #expect(listed == expected, "\(query): \(listed.count) rows listed")
            #expect(try await rowIDs("/model/Programme?\(query)page=7").isEmpty)
        }
        #expect(try await client.fetch("/model/Programme?sort=title&page=100").status == 200)
        let refused = try await client.fetch("/model/Programme?sort=title&page=101")
        #expect(refused.status == 400 && refused.text.contains("first 100 pages"))
        #expect(try await client.fetch("/model/Programme?page=101").status == 200, "the identifier's order pages on")
        }
    }

    @Test func editsNeedTheTokenAndCSRFAndUndoReverts() async throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"s3cret-token\"}")
        try await inProcess(box) { client in
        let detail = "/model/Channel/alpha.test"
        func customName() async throws -> String? {
            let page = try await client.fetch(detail).text
            // Read-only view: the value is the cell after the attribute's name.
            guard let r = page.range(of: "<th>customName</th><td>") else { return nil }
            return String(page[r.upperBound...].prefix { $0 != " " && $0 != "<" })
        }
        // Without any credential: 401, nothing changed.
        #expect(try await client.fetch(detail, form: [("customName", "Hacked")]).status == 401)
        #expect(try await customName() == "")
        // A wrong bearer token: 401.
        #expect(try await client.fetch(detail, headers: ["Authorization": "Bearer wrong"], form: [("customName", "Hacked")]).status == 401)
        // A bad value: 400 naming the attribute, nothing saved.
        let bad = try await client.fetch(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("customName", "Fine"), ("favourite", "maybe")])
        #expect(bad.status == 400)
        #expect(bad.text.contains("favourite"))
        #expect(try await customName() == "")
        // A whitelisted attribute cannot be set from the page.
        #expect(try await client.fetch(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("displayName", "X")]).status == 400)
        // The bearer token: saved, recorded as a change file.
        let saved = try await client.fetch(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("customName", "Mine")])
        #expect(saved.status == 303)
        #expect(try await customName() == "Mine")
        #expect(try await client.fetch("/").text.contains("Mine"))

        // A session: sign in, then a form without its CSRF token is refused.
        let jar = CookieJar()
        let login = try await client.fetch("/login", form: [("token", "s3cret-token")], cookies: jar)
        #expect(login.status == 303)
        #expect(login.headers["set-cookie"]?.contains("HttpOnly") == true)
        #expect(login.headers["set-cookie"]?.contains("SameSite=Strict") == true)
        #expect(try await client.fetch("/login", form: [("token", "nope")]).status == 401)
        let form = try await client.fetch(detail, cookies: jar).text
        #expect(form.contains("name=\"customName\""))
        #expect(!form.contains("name=\"displayName\""))   // whitelisted: read-only
        let csrfRange = try #require(form.range(of: "name=\"csrf\" value=\""))
        let csrf = String(form[csrfRange.upperBound...].prefix { $0 != "\"" })
        #expect(try await client.fetch(detail, form: [("customName", "NoCSRF")], cookies: jar).status == 403)
        #expect(try await customName() == "Mine")
        #expect(try await client.fetch(detail, form: [("csrf", csrf), ("customName", "Second")], cookies: jar).status == 303)
        #expect(try await customName() == "Second")
        // Undo reverts the last edit, then the one before.
        #expect(try await client.fetch("/undo", form: [("csrf", csrf)], cookies: jar).status == 200)
        #expect(try await customName() == "Mine")
        // Redo puts it back; a second redo has nothing left to redo.
        #expect(try await client.fetch("/redo", form: [("csrf", csrf)], cookies: jar).status == 200)
        #expect(try await customName() == "Second")
        #expect(try await client.fetch("/redo", form: [("csrf", csrf)], cookies: jar).status == 409)
        #expect(try await client.fetch("/undo", form: [("csrf", csrf)]).status == 401)
        #expect(try await client.fetch("/redo", form: [("csrf", csrf)]).status == 401)
        }
    }

    @Test func withoutATokenTheServerIsReadOnly() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let r = try await client.fetch("/model/Channel/alpha.test", headers: ["Authorization": "Bearer anything"], form: [("hidden", "true")])
        #expect(r.status == 403)
        #expect(try await client.fetch("/").text.contains("Alpha One"))
        #expect(try await client.fetch("/login").status == 403)
        }
    }

    @Test func aConfigModuleAttributeIsEditableWithNoCode() async throws {
        let module = ", \"serve\": {\"token\": \"t\"}, \"modules\": [{\"name\": \"mine\", \"entities\": [{\"name\": \"Programme\", \"placeholder\": true, \"attributes\": [{\"name\": \"stars\", \"type\": \"integer\"}]}, {\"name\": \"Recording\", \"identifier\": [\"label\"], \"attributes\": [{\"name\": \"label\", \"type\": \"string\", \"optional\": false}, {\"name\": \"keep\", \"type\": \"bool\"}]}]}]"
        let box = try preparedSandbox(extra: module)
        try await inProcess(box) { client in
        #expect(try await client.fetch("/model").text.contains("/model/Recording\""))
        #expect(try await client.fetch("/model/Recording").status == 200)
        let list = try await client.fetch("/model/Programme?title=Show%204").text
        let link = try #require(list.range(of: "href=\"/model/Programme/%23"))
        let path = "/model/Programme/%23" + String(list[link.upperBound...].prefix { $0.isNumber })
        let jar = CookieJar()
        #expect(try await client.fetch("/login", form: [("token", "t")], cookies: jar).status == 303)
        let page = try await client.fetch(path, cookies: jar).text
        #expect(page.contains("<input type=\"number\" step=\"1\" name=\"stars\""))
        #expect(page.contains("type=\"checkbox\" name=\"reminder\""))
        let csrfRange = try #require(page.range(of: "name=\"csrf\" value=\""))
        let csrf = String(page[csrfRange.upperBound...].prefix { $0 != "\"" })
        let bad = try await client.fetch(path, form: [("csrf", csrf), ("stars", "lots")], cookies: jar)
        #expect(bad.status == 400)
        #expect(bad.text.contains("stars"))
        #expect(try await client.fetch(path, form: [("csrf", csrf), ("stars", "4")], cookies: jar).status == 303)
        #expect(try await client.fetch(path).text.contains("<th>stars</th><td>4 "))
        }
    }

    @Test func healthFollowsTheRunLogAndMetricsCountObjects() async throws {
        let box = try preparedSandbox()
        try await inProcess(box) { client in
        let health = try await client.fetch("/healthz")
        #expect(health.status == 200, "\(health.text)")
        let metrics = try await client.fetch("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("tvimport_objects{entity=\"Channel\"} 2"))
        #expect(metrics.text.contains("tvimport_source_objects{"))
        #expect(metrics.text.contains("tvimport_last_run_exit_code{command=\"run\"} 0"))
        #expect(metrics.text.contains("tvimport_serve_requests_total"))
        // A failed run: 503.
        try box.write("guide.xml", "not xml")
        #expect(try box.nightlyRun() != .success)
        #expect(try await client.fetch("/healthz").status == 503)
        }
    }

    /// A run while the server is under load (four clients asking for `/` back to back): no
    /// request fails, and `/` shows the new guide after the run commits, with no restart.
    @Test(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"), .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"))
    func aRunDuringLoadShowsAfterItsCommitWithNoFailedRequest() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        #expect(try curl(server.base + "/").text.contains("Show \(onNow())<"))
        try box.write("guide.xml", makeGuide(titlePrefix: "Fresh"))

        final class Tally: @unchecked Sendable {
            let lock = NSLock()
            var statuses: [Int: Int] = [:]
            var running = true
            var isRunning: Bool { lock.withLock { running } }
            var answered: Int { lock.withLock { statuses.values.reduce(0, +) } }
            func record(_ status: Int) { lock.withLock { statuses[status, default: 0] += 1 } }
        }
        let tally = Tally(), base = server.base, clients = DispatchGroup()
        // Threads of their own: the clients must not wait for the test runner's busy pools.
        for _ in 0..<4 {
            clients.enter()
            Thread {
                while tally.isRunning { tally.record((try? curl(base + "/"))?.status ?? 0) }
                clients.leave()
            }.start()
        }
        let deadline = Date().addingTimeInterval(30)
        while tally.answered < 4 && Date() < deadline { usleep(10_000) }   // the load is on
        let before = tally.answered
        let r = try box.run(["run", "--config", "c.json", "--quiet", "--force"])
        let during = tally.answered - before
        tally.lock.withLock { tally.running = false }
        clients.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Array(tally.statuses.keys) == [200], "statuses during the run: \(tally.statuses)")
        #expect(during >= 1, "no request was answered while the run ran: \(tally.statuses)")
        let after = try curl(server.base + "/").text
        #expect(after.contains("Fresh \(onNow())<"))
        #expect(!after.contains("Show \(onNow())<"))
        #expect(server.stop() == 0)
    }

    @Test func limitsRefuseOversizedForms() async throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"t\"}")
        try await inProcess(box) { client in
        try box.write("huge.txt", String(repeating: "x", count: 400_000))
        let r = try await client.fetch("/model/Channel/alpha.test", headers: ["Authorization": "Bearer t"], formFile: ("customName", box.path("huge.txt")))
        #expect(r.status == 413)
        }
    }

    /// The hostile corpus of scripts/hostile (XXE, traversal ids, iCalendar injection, markup,
    /// quotes, C1 and bidi controls, a 9 MB title of markup) imported, each input as its own
    /// source, then through every page kind: `/`, each channel page `/` links to, `/search`,
    /// `/model/Programme`, object pages. Every text stays text, and pages stay small and quick.
    @Test(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"), .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"),
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3 to generate scripts/hostile's corpus"))
    func theHostileCorpusGoesThroughThePages() throws {
        let box = try ServeSandbox()
        let corpus = box.path("corpus")
        // scripts/hostile is the one source of the inputs: loaded as a module, its small cases
        // that may import (exit 0 allowed) written out. Port 9: its XXE entities point nowhere.
        let generate = try box.run(["-c", """
            import importlib.machinery, importlib.util, os, sys
            loader = importlib.machinery.SourceFileLoader("hostile", sys.argv[1])
            hostile = importlib.util.module_from_spec(importlib.util.spec_from_loader("hostile", loader))
            loader.exec_module(hostile)
            os.makedirs(sys.argv[2])
            print(hostile.BASE)
            for name, data, allowed, _ in hostile.small_cases(9):
                if 0 in allowed:
                    open(os.path.join(sys.argv[2], name), "wb").write(data)
                    print(name)
            """, repoRoot.appendingPathComponent("scripts/hostile").path, corpus], executable: "/usr/bin/python3")
        #expect(generate.status == 0, "\(generate.stderr)")
        // First the start of markup-titles.xml's programme 2 (the hour after next when it ran), then the names.
        let printed = generate.stdout.split(separator: "\n").map(String.init)
        let markupStart = try #require(printed.first.flatMap { Int64($0) }, "\(generate.stdout)")
        let inputs = Array(printed.dropFirst())
        #expect(inputs.contains("markup-titles.xml") && inputs.contains("huge-markup-title.xml") && inputs.contains("ids-traversal.xml"))
        var imported: [String] = []
        for (index, input) in inputs.enumerated() {
            let r = try box.run(["import", "--db", "tv.sqlite", "--source", "hostile\(index)", "corpus/" + input])
            #expect(r.status == 0 || r.status == 65, "\(input): exit \(r.status) \(r.stderr)")
            if r.status == 0 { imported.append(input) }
        }
        #expect(imported.contains("markup-titles.xml") && imported.contains("huge-markup-title.xml"), "imported: \(imported)")
        let export = try box.run(["export", "--db", "tv.sqlite", "--out", "feeds"])
        #expect(export.status == 0, "\(export.stderr)")
        let server = try ServerProcess(box, arguments: ["--db", "tv.sqlite", "--feeds", "feeds"])

        /// What no page may hold: live markup from a feed, a raw C1 control.
        func expectInert(_ page: HTTPResult, _ what: String, maxBytes: Int = 300_000, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(page.status == 200, "\(what): \(page.status)", sourceLocation: sourceLocation)
            #expect(page.body.count < maxBytes, "\(what): \(page.body.count) bytes", sourceLocation: sourceLocation)
            for live in ["<script", "<img", "onerror=alert(1)>", "\"quoted\"", "'single'", "\u{85}", "\u{9F}"] {
                #expect(!page.text.contains(live), "\(what) holds \(live.debugDescription)", sourceLocation: sourceLocation)
            }
        }
        let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;quoted&quot; &#39;single&#39; &amp; &lt;img src=x onerror=alert(1)&gt; \u{FFFD}\u{FFFD}\u{202E}\u{2028}"

        // `/` shows the 9 MB title shortened, so it stays small; and it answers while busy.
        let started = Date()
        let home = try curl(server.base + "/")
        let homeSeconds = Date().timeIntervalSince(started)
        expectInert(home, "/")
        #expect(home.text.contains("Name " + escaped))
        #expect(home.text.contains("\">" + escaped + " 0</a>"))
        #expect(homeSeconds < 10, "/ took \(homeSeconds) s")

        // Every channel page that `/` links to, traversal and whitespace ids included.
        let channelLinks = Set(home.text.components(separatedBy: "href=\"/channels/").dropFirst().map { String($0.prefix { $0 != "\"" }) })
        #expect(channelLinks.contains("markup.test") && channelLinks.contains("huge-markup.test") && channelLinks.count >= 10, "\(channelLinks)")
        for link in channelLinks {
            // As a browser resolves it: a dot segment ("." or "..", `%2e` too) would leave /channels/.
            let segment = link.replacingOccurrences(of: "%2e", with: ".", options: .caseInsensitive)
            #expect(segment != "." && segment != "..", "/channels/\(link) is a dot segment: a browser would not get there")
            let page = try curl(server.base + "/channels/" + link)
            expectInert(page, "/channels/\(link)")
        }
        let markupDay = try curl(server.base + "/channels/markup.test?day=" + LocalTime.day(markupStart))
        expectInert(markupDay, "markup.test's day")
        #expect(markupDay.text.contains(escaped + " 2"))
        expectInert(try curl(server.base + "/search?q=script"), "/search")

        // The generated interface: the list (cells shortened), a channel by its identifier, and
        // the object page of each of its programmes (values shown up to 10,000 characters).
        expectInert(try curl(server.base + "/model/Programme?sort=title&desc=1"), "/model/Programme", maxBytes: 200_000)
        expectInert(try curl(server.base + "/model/Channel"), "/model/Channel", maxBytes: 200_000)
        for channel in ["markup.test", "huge-markup.test"] {
            let page = try curl(server.base + "/model/Channel/" + channel)
            expectInert(page, "/model/Channel/\(channel)")
            let programmes = page.text.components(separatedBy: "href=\"/model/Programme/%23").dropFirst().map { String($0.prefix { $0.isNumber }) }
            #expect(!programmes.isEmpty, "\(channel) lists no programme")
            for row in programmes {
                let detail = try curl(server.base + "/model/Programme/%23" + row)
                expectInert(detail, "/model/Programme/#\(row)", maxBytes: 200_000)
                #expect(detail.text.contains(escaped), "#\(row) shows no escaped title")
            }
        }
        #expect(server.stop() == 0)
    }

    @Test func servableNamesAreTheExportersOnly() {
        #expect(FeedFiles.fileName(fromRawPath: "alpha.test.ics") == "alpha.test.ics")
        #expect(FeedFiles.fileName(fromRawPath: "") == "index.html")
        #expect(FeedFiles.fileName(fromRawPath: "filter~news.ics") == "filter~news.ics")
        #expect(FeedFiles.fileName(fromRawPath: "a%2525b.ics") == "a%25b.ics")
        for raw in ["..", "%2e%2e", "..%2fx.ics", "%2Fetc%2Fpasswd", ".hidden.ics", "a/b.ics", "x.txt", "%00.ics", "a%2fb.ics"] {
            #expect(FeedFiles.fileName(fromRawPath: Substring(raw)) == nil, "\(raw)")
        }
        #expect(HTMLText.escape("<a href=\"x\">'&'</a>\u{1}") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\u{FFFD}")
    }
}
