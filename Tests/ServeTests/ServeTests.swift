import Foundation
import Testing
@testable import Serve
#if canImport(Glibc)
import Glibc
#endif

/// `tvimport serve` as a process on 127.0.0.1, driven by curl.
@Suite(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"),
       .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"))
struct ServeTests {
    @Test func feedsHaveValidatorsGzipAndHead() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasPrefix("alpha") && $0.hasSuffix(".ics") })
        let onDisk = try #require(FileManager.default.contents(atPath: box.path("feeds/" + file)))
        let url = server.base + "/feeds/" + file

        let plain = try curl(url)
        #expect(plain.status == 200)
        #expect(plain.body == onDisk)
        #expect(plain.headers["content-type"] == "text/calendar; charset=utf-8")
        #expect(plain.headers["cache-control"] == "public, max-age=43200")
        let etag = try #require(plain.headers["etag"])
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        let lastModified = try #require(plain.headers["last-modified"])

        #expect(try curl(url, headers: ["If-None-Match": etag]).status == 304)
        #expect(try curl(url, headers: ["If-None-Match": "\"other\", \(etag)"]).status == 304)
        #expect(try curl(url, headers: ["If-None-Match": "\"other\""]).status == 200)
        #expect(try curl(url, headers: ["If-Modified-Since": lastModified]).status == 304)
        #expect(try curl(url, headers: ["If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]).status == 200)

        let gzip = try curl(url, headers: ["Accept-Encoding": "gzip"])
        #expect(gzip.status == 200)
        #expect(gzip.headers["content-encoding"] == "gzip")
        #expect(gzip.body.count < onDisk.count)
        #expect(gzip.headers["etag"] != etag)
        let gz = box.path("got.ics.gz")
        FileManager.default.createFile(atPath: gz, contents: gzip.body)
        let inflated = try box.run(["-dc", gz], executable: "/bin/gzip")
        #expect(inflated.status == 0 && Data(inflated.stdout.utf8) == onDisk)
        #expect(try curl(url, headers: ["Accept-Encoding": "gzip", "If-None-Match": try #require(gzip.headers["etag"])]).status == 304)

        let head = try curl(url, method: "HEAD")
        #expect(head.status == 200)
        #expect(!head.text.contains("BEGIN:VCALENDAR"))   // curl -I writes the headers where a body would go
        #expect(head.headers["content-length"] == String(onDisk.count))

        let index = try curl(server.base + "/feeds/")
        #expect(index.status == 200)
        #expect(index.text.contains(file))
        #expect(server.stop() == 0)
    }

    /// A changed feed is served anew (its cache entry is keyed by inode, size and mtime).
    @Test func aRewrittenFeedIsServedAnew() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let first = try curl(server.base + "/feeds/index.html")
        try "<p>replaced</p>".write(toFile: box.path("feeds/index.html.tmp"), atomically: false, encoding: .utf8)
        #expect(rename(box.path("feeds/index.html.tmp"), box.path("feeds/index.html")) == 0)
        let second = try curl(server.base + "/feeds/index.html", headers: ["If-None-Match": first.headers["etag"] ?? ""])
        #expect(second.status == 200)
        #expect(second.text == "<p>replaced</p>")
    }

    @Test func noPathLeavesTheFeedDirectory() throws {
        let box = try preparedSandbox()
        try "SECRET-OUTSIDE".write(toFile: box.path("secret.ics"), atomically: true, encoding: .utf8)
        #expect(symlink(box.path("secret.ics"), box.path("feeds/link.ics")) == 0)
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let attempts = [
            "/feeds/../secret.ics", "/feeds/%2e%2e/secret.ics", "/feeds/%2E%2E%2Fsecret.ics", "/feeds/..%2fsecret.ics",
            "/feeds/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/feeds//etc/passwd", "/feeds/%2fetc%2fpasswd", "/feeds/%2Fetc%2Fpasswd",
            "/feeds/link.ics", "/feeds/.%2e/secret.ics", "/feeds/%252e%252e%252fsecret.ics", "/feeds/\(box.path("secret.ics"))",
            "/feeds/%00secret.ics", "/feeds/..\\secret.ics",
        ]
        for path in attempts {
            let r = try curl(server.base + path)
            #expect(r.status == 404 || r.status == 400, "\(path): \(r.status)")
            #expect(!r.text.contains("SECRET-OUTSIDE"), "\(path) served the secret")
            #expect(!r.text.contains("root:"), "\(path) served /etc/passwd")
        }
    }

    @Test func guidePagesEscapeEveryText() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let home = try curl(server.base + "/")
        #expect(home.status == 200)
        #expect(home.text.contains("Alpha One"))
        #expect(home.text.contains("Now</span><strong>Show \(onNow())</strong>"))
        #expect(home.text.contains("webcal://127.0.0.1:\(server.port)/feeds/alpha.test.ics"))
        #expect(home.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(home.headers["content-security-policy"]?.contains("unsafe-inline") == false)
        for page in [home, try curl(server.base + "/channels/evil.test"), try curl(server.base + "/search?q=alert"),
                     try curl(server.base + "/model/Programme?sort=title"), try curl(server.base + "/model/Channel")] {
            #expect(page.status == 200)
            #expect(!page.text.contains("<script"), "unescaped script")
            #expect(!page.text.contains("<b>\"Channel"), "unescaped channel name")
            #expect(!page.text.contains("<img src=x"), "unescaped description")
        }
        #expect(try curl(server.base + "/channels/evil.test").text.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        #expect(try curl(server.base + "/search?q=show%201").text.contains("Show 11"))
        #expect(try curl(server.base + "/channels/nope.test").status == 404)
    }

    @Test func modelPagesListFilterSortAndShowOne() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let index = try curl(server.base + "/model")
        for entity in ["Channel", "Programme", "Credit", "Category"] { #expect(index.text.contains("/model/\(entity)\"")) }
        let channels = try curl(server.base + "/model/Channel")
        #expect(channels.text.contains("2 objects"))
        #expect(channels.text.contains("alpha.test"))
        let filtered = try curl(server.base + "/model/Programme?title=Show%203")
        #expect(filtered.text.contains("1 object ·"))
        let sorted = try curl(server.base + "/model/Programme?sort=title&desc=1")
        let titles = ["Show 9", "Show 11"].map { sorted.text.range(of: $0)?.lowerBound }
        #expect(titles[0] != nil && titles[1] != nil && titles[0]! < titles[1]!)
        #expect(try curl(server.base + "/model/Programme?length=abc").status == 400)
        #expect(try curl(server.base + "/model/Programme?nope=1").status == 400)
        let paged = try curl(server.base + "/model/Programme?page=2")
        #expect(paged.text.contains("Page 1 of 1") == false)
        let detail = try curl(server.base + "/model/Channel/alpha.test")
        #expect(detail.status == 200)
        #expect(detail.text.contains("Alpha One"))
        #expect(detail.text.contains("programmes (12)"))
        #expect(try curl(server.base + "/model/Nope").status == 404)
        #expect(try curl(server.base + "/model/Channel/missing.test").status == 404)
    }

    @Test func editsNeedTheTokenAndCSRFAndUndoReverts() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"s3cret-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let detail = server.base + "/model/Channel/alpha.test"
        func customName() throws -> String? {
            let page = try curl(detail).text
            // Read-only view: the value is the cell after the attribute's name.
            guard let r = page.range(of: "<th>customName</th><td>") else { return nil }
            return String(page[r.upperBound...].prefix { $0 != " " && $0 != "<" })
        }
        // Without any credential: 401, nothing changed.
        #expect(try curl(detail, form: [("customName", "Hacked")]).status == 401)
        #expect(try customName() == "")
        // A wrong bearer token: 401.
        #expect(try curl(detail, headers: ["Authorization": "Bearer wrong"], form: [("customName", "Hacked")]).status == 401)
        // A bad value: 400 naming the attribute, nothing saved.
        let bad = try curl(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("customName", "Fine"), ("favourite", "maybe")])
        #expect(bad.status == 400)
        #expect(bad.text.contains("favourite"))
        #expect(try customName() == "")
        // A whitelisted attribute cannot be set from the page.
        #expect(try curl(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("displayName", "X")]).status == 400)
        // The bearer token: saved, recorded as a change file.
        let saved = try curl(detail, headers: ["Authorization": "Bearer s3cret-token"], form: [("customName", "Mine")])
        #expect(saved.status == 303)
        #expect(try customName() == "Mine")
        #expect(try curl(server.base + "/").text.contains("Mine"))

        // A session: sign in, then a form without its CSRF token is refused.
        let jar = box.path("cookies.txt")
        let login = try curl(server.base + "/login", form: [("token", "s3cret-token")], cookieJar: jar)
        #expect(login.status == 303)
        #expect(login.headers["set-cookie"]?.contains("HttpOnly") == true)
        #expect(login.headers["set-cookie"]?.contains("SameSite=Strict") == true)
        #expect(try curl(server.base + "/login", form: [("token", "nope")]).status == 401)
        let form = try curl(detail, cookieJar: jar).text
        #expect(form.contains("name=\"customName\""))
        #expect(!form.contains("name=\"displayName\""))   // whitelisted: read-only
        let csrfRange = try #require(form.range(of: "name=\"csrf\" value=\""))
        let csrf = String(form[csrfRange.upperBound...].prefix { $0 != "\"" })
        #expect(try curl(detail, form: [("customName", "NoCSRF")], cookieJar: jar).status == 403)
        #expect(try customName() == "Mine")
        #expect(try curl(detail, form: [("csrf", csrf), ("customName", "Second")], cookieJar: jar).status == 303)
        #expect(try customName() == "Second")
        // Undo reverts the last edit, then the one before.
        #expect(try curl(server.base + "/undo", form: [("csrf", csrf)], cookieJar: jar).status == 200)
        #expect(try customName() == "Mine")
        // Redo puts it back; a second redo has nothing left to redo.
        #expect(try curl(server.base + "/redo", form: [("csrf", csrf)], cookieJar: jar).status == 200)
        #expect(try customName() == "Second")
        #expect(try curl(server.base + "/redo", form: [("csrf", csrf)], cookieJar: jar).status == 409)
        #expect(try curl(server.base + "/undo", form: [("csrf", csrf)]).status == 401)
        #expect(try curl(server.base + "/redo", form: [("csrf", csrf)]).status == 401)
    }

    @Test func withoutATokenTheServerIsReadOnly() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let r = try curl(server.base + "/model/Channel/alpha.test", headers: ["Authorization": "Bearer anything"], form: [("hidden", "true")])
        #expect(r.status == 403)
        #expect(try curl(server.base + "/").text.contains("Alpha One"))
        #expect(try curl(server.base + "/login").status == 403)
    }

    @Test func aConfigModuleAttributeIsEditableWithNoCode() throws {
        let module = ", \"serve\": {\"token\": \"t\"}, \"modules\": [{\"name\": \"mine\", \"entities\": [{\"name\": \"Programme\", \"placeholder\": true, \"attributes\": [{\"name\": \"stars\", \"type\": \"integer\"}]}, {\"name\": \"Recording\", \"identifier\": [\"label\"], \"attributes\": [{\"name\": \"label\", \"type\": \"string\", \"optional\": false}, {\"name\": \"keep\", \"type\": \"bool\"}]}]}]"
        let box = try preparedSandbox(extra: module)
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        #expect(try curl(server.base + "/model").text.contains("/model/Recording\""))
        #expect(try curl(server.base + "/model/Recording").status == 200)
        let list = try curl(server.base + "/model/Programme?title=Show%204").text
        let link = try #require(list.range(of: "href=\"/model/Programme/%23"))
        let path = "/model/Programme/%23" + String(list[link.upperBound...].prefix { $0.isNumber })
        let jar = box.path("jar")
        #expect(try curl(server.base + "/login", form: [("token", "t")], cookieJar: jar).status == 303)
        let page = try curl(server.base + path, cookieJar: jar).text
        #expect(page.contains("<input type=\"number\" step=\"1\" name=\"stars\""))
        #expect(page.contains("type=\"checkbox\" name=\"reminder\""))
        let csrfRange = try #require(page.range(of: "name=\"csrf\" value=\""))
        let csrf = String(page[csrfRange.upperBound...].prefix { $0 != "\"" })
        let bad = try curl(server.base + path, form: [("csrf", csrf), ("stars", "lots")], cookieJar: jar)
        #expect(bad.status == 400)
        #expect(bad.text.contains("stars"))
        #expect(try curl(server.base + path, form: [("csrf", csrf), ("stars", "4")], cookieJar: jar).status == 303)
        #expect(try curl(server.base + path).text.contains("<th>stars</th><td>4 "))
    }

    @Test func healthFollowsTheRunLogAndMetricsCountObjects() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let health = try curl(server.base + "/healthz")
        #expect(health.status == 200, "\(health.text)")
        let metrics = try curl(server.base + "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("tvimport_objects{entity=\"Channel\"} 2"))
        #expect(metrics.text.contains("tvimport_source_objects{"))
        #expect(metrics.text.contains("tvimport_last_run_exit_code{command=\"run\"} 0"))
        #expect(metrics.text.contains("tvimport_serve_requests_total"))
        // A failed run: 503.
        try box.write("guide.xml", "not xml")
        #expect(try box.run(["run", "--config", "c.json", "--quiet"]).status != 0)
        #expect(try curl(server.base + "/healthz").status == 503)
    }

    /// A run while the server serves: `/` shows the new guide after the run commits, no restart.
    @Test func pagesShowANewRunWithoutRestart() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        #expect(try curl(server.base + "/").text.contains("Show \(onNow())<"))
        try box.write("guide.xml", makeGuide(titlePrefix: "Fresh"))
        let r = try box.run(["run", "--config", "c.json", "--quiet", "--force"])
        #expect(r.status == 0, "\(r.stderr)")
        let after = try curl(server.base + "/").text
        #expect(after.contains("Fresh \(onNow())<"))
        #expect(!after.contains("Show \(onNow())<"))
        #expect(server.stop() == 0)
    }

    @Test func limitsRefuseOversizedForms() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"t\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        try box.write("huge.txt", String(repeating: "x", count: 400_000))
        let r = try curl(server.base + "/model/Channel/alpha.test", headers: ["Authorization": "Bearer t"], formFile: ("customName", box.path("huge.txt")))
        #expect(r.status == 413)
    }

    /// scripts/hostile's kinds of titles through the pages: markup, quotes, C1 controls, 10 MB.
    @Test func hostileAndHugeTitlesAreEscaped() throws {
        let box = try ServeSandbox()
        // One programme on now with a 9 MB title (libxml2 refuses text nodes over 10 MB), markup throughout, then C1 controls.
        let huge = String(repeating: "<script>x</script>\"'", count: 9_000_000 / 20) + "\u{85}\u{9F}"
        let start = thisHour()
        try box.write("guide.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <tv><channel id="huge.test"><display-name>Huge</display-name></channel>
            <programme start="\(xmltvTime(start))" stop="\(xmltvTime(start + 3600))" channel="huge.test"><title>\(escapedXML(huge))</title></programme>
            </tv>
            """)
        try box.write("c.json", makeConfig(box, extra: ", \"maxChannelMB\": 64"))
        let r = try box.run(["run", "--config", "c.json", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let home = try curl(server.base + "/")
        #expect(home.status == 200)
        #expect(home.body.count > 9_000_000)
        #expect(!home.text.contains("<script"))
        #expect(home.text.contains("&lt;script&gt;x&lt;/script&gt;&quot;&#39;"))
        #expect(!home.text.contains("\u{85}") && home.text.contains("\u{FFFD}\u{FFFD}"))
        let list = try curl(server.base + "/model/Programme?sort=title&desc=1")
        #expect(list.status == 200)
        #expect(list.body.count < 200_000)   // list cells are shortened
        #expect(!list.text.contains("<script"))
    }

    @Test func servableNamesAreTheExportersOnly() {
        #expect(FeedFiles.fileName(fromRawPath: "alpha.test.ics") == "alpha.test.ics")
        #expect(FeedFiles.fileName(fromRawPath: "") == "index.html")
        #expect(FeedFiles.fileName(fromRawPath: "filter~news.ics") == "filter~news.ics")
        #expect(FeedFiles.fileName(fromRawPath: "a%2525b.ics") == "a%25b.ics")
        for raw in ["..", "%2e%2e", "..%2fx.ics", "%2Fetc%2Fpasswd", ".hidden.ics", "a/b.ics", "x.txt", "%00.ics", "a%2fb.ics"] {
            #expect(FeedFiles.fileName(fromRawPath: Substring(raw)) == nil, "\(raw)")
        }
        #expect(HTML.escape("<a href=\"x\">'&'</a>\u{1}") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\u{FFFD}")
        #expect(HTTPDate.parse(HTTPDate.format(1_764_000_000)) == 1_764_000_000)
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
