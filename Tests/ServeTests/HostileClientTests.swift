import Foundation
import Primitives
import TestSupport
import Testing
@testable import Serve
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34: what an outsider sends must never stop the server, open editing or make a page big.
/// Each test runs the real `tvimport serve` on loopback (curl, or a raw socket for what no
/// client would send).
@Suite(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"),
       .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"))
struct HostileClientTests {
    /// The server still answers: /healthz gives 200 or 503 (no run may be recent), never nothing.
    func expectAlive(_ server: ServerProcess, after what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let health = try curl(server.base + "/healthz")
        #expect(health.status == 200 || health.status == 503, "after \(what): /healthz gave \(health.status)", sourceLocation: sourceLocation)
        #expect(server.running.process.isRunning, "after \(what): the server exited: \(server.running.output().stderr)", sourceLocation: sourceLocation)
    }

    // MARK: 1. Dates in headers

    @Test func anAbsurdIfModifiedSinceIsIgnored() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        for date in ["Fri, 31 Dec 999999999999 23:59:59 GMT", "Fri, 31 Dec 2026 9999999999999999:59:59 GMT",
                     "Fri, 99999999999999999 Dec 2026 23:59:59 GMT", "Fri, 31 Dec -9223372036854775808 23:59:59 GMT",
                     "Fri, 31 Dec 2026 23:59:9223372036854775807 GMT", "Fri, 32 Dec 2026 23:59:59 GMT", "Fri, 31 Dec 2026 24:00:00 GMT",
                     "Fri, 31 Dec 2026 23:59:59 GMTx", "Fri, 31 Dec +2026 23:59:59 GMT", ""] {
            let r = try curl(server.base + "/feeds/", headers: ["If-Modified-Since": date])
            #expect(r.status == 200, "If-Modified-Since: \(date) gave \(r.status)")
            try expectAlive(server, after: "If-Modified-Since: \(date)")
        }
        // A real date still validates.
        let lastModified = try #require(try curl(server.base + "/feeds/").headers["last-modified"])
        #expect(try curl(server.base + "/feeds/", headers: ["If-Modified-Since": lastModified]).status == 304)
        #expect(server.stop() == 0)
    }

    // MARK: 2. Page numbers

    @Test func pageNumbersAreBoundedOrRefused() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        for page in ["184467440737095517", "9223372036854775807", "0", "-1", "abc", "1e3", "+2", "99999999"] {
            let r = try curl(server.base + "/model/Channel?page=" + page)
            #expect(r.status == 400, "page=\(page) gave \(r.status)")
            try expectAlive(server, after: "page=\(page)")
        }
        // Past the end: an empty page, not an error (the list may have shrunk since the link).
        let past = try curl(server.base + "/model/Programme?page=1000000")
        #expect(past.status == 200 && past.text.contains("Page 1000000 of 1"), "\(past.status)")
        #expect(!past.text.contains("Next"))
        #expect(try curl(server.base + "/model/Programme?page=1").text.contains("Page 1 of 1"))
        // A to-one filter is the target's identifier or row id: one that names nothing is a 404,
        // one longer than an identifier may be a 400.
        #expect(try curl(server.base + "/model/Programme?channel=99999999999999999999999").status == 404)
        #expect(try curl(server.base + "/model/Programme?channel=" + String(repeating: "9", count: 1025)).status == 400)
        #expect(try curl(server.base + "/channels/alpha.test?day=99999-01-01").status == 400)
        #expect(try curl(server.base + "/channels/alpha.test?day=2026-02-30").status == 400)
        #expect(try curl(server.base + "/channels/%23999999999999999999999999").status == 404)
        #expect(try curl(server.base + "/search?q=" + String(repeating: "a", count: 301)).status == 400)
        try expectAlive(server, after: "bad filters")
        #expect(server.stop() == 0)
    }

    // MARK: 3. Blank tokens

    @Test func aBlankTokenIsAConfigurationError() throws {
        let box = try preparedSandbox()
        for token in ["", "   ", "\t\n"] {
            let json = try String(data: JSONSerialization.data(withJSONObject: ["token": token]), encoding: .utf8)!
            try box.write("blank.json", makeConfig(box, extra: ", \"serve\": \(json)"))
            let r = try runBriefly(box, ["serve", "--config", "blank.json", "--port", "0"])
            #expect(r.status == 78, "serve.token \(token.debugDescription): exit \(r.status)")
            #expect(r.stderr.contains("serve.token"), "\(r.stderr)")
        }
        for token in ["", " "] {
            let withConfig = try runBriefly(box, ["serve", "--config", "c.json", "--port", "0"], environment: ["TVIMPORT_SERVE_TOKEN": token])
            #expect(withConfig.status == 78, "TVIMPORT_SERVE_TOKEN \(token.debugDescription): exit \(withConfig.status)")
            #expect(withConfig.stderr.contains("TVIMPORT_SERVE_TOKEN"), "\(withConfig.stderr)")
            let bare = try runBriefly(box, ["serve", "--db", "tv.sqlite", "--feeds", "feeds", "--port", "0"], environment: ["TVIMPORT_SERVE_TOKEN": token])
            #expect(bare.status == 78, "without a config: exit \(bare.status)")
        }
    }

    // MARK: 5. Caps in bytes

    @Test func capsCountEscapedBytes() throws {
        let box = try preparedSandbox()
        let marks = "a" + String(repeating: "\u{301}", count: 300_000)   // one character, 600 KB
        let amps = String(repeating: "&", count: 20_000)                   // 100 KB once escaped
        let base = guideStart
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n<channel id=\"marks.test\"><display-name>\(marks)</display-name></channel>\n"
        for (i, title) in [marks, GuideText.escaped(amps), marks].enumerated() {
            let start = base + i * 3600
            xml += "<programme start=\"\(GuideText.time(start))\" stop=\"\(GuideText.time(start + 3600))\" channel=\"marks.test\"><title>\(title)</title><sub-title>\(marks)</sub-title><desc>\(marks)</desc></programme>\n"
        }
        try box.write("marks.xml", xml + "</tv>\n")
        #expect(try box.run(["import", "--db", "tv.sqlite", "--source", "marks", "marks.xml"]).status == 0)
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        for path in ["/", "/channels/marks.test", "/search?q=a", "/model/Programme", "/model/Channel"] {
            let r = try curl(server.base + path)
            #expect(r.status == 200, "\(path): \(r.status)")
            #expect(r.body.count < 64_000, "\(path) is \(r.body.count) bytes")
        }
        let list = try curl(server.base + "/model/Programme?title=" + HTML.urlComponent(amps)).text
        let link = try #require(list.range(of: "href=\"/model/Programme/%23"))
        let detail = try curl(server.base + "/model/Programme/%23" + String(list[link.upperBound...].prefix { $0.isNumber }))
        #expect(detail.status == 200)
        // Title, sub-title and description, each at most 10,000 bytes escaped, and the heading.
        #expect(detail.body.count < 60_000, "the programme page is \(detail.body.count) bytes")
        #expect(server.stop() == 0)
        #expect(HTMLText.escape(HTMLText.shortened(amps, to: 300)).utf8.count <= 303)
        #expect(HTMLText.shortened(marks, to: 300).utf8.count <= 303)
        #expect(HTMLText.shortened("A long title", to: 6) == "A long…")
    }

    // MARK: 6. Date and number edits

    @Test func dateEditsKeepTheirOffsetAndNumbersMustBeFinite() throws {
        let module = ", \"serve\": {\"token\": \"t\"}, \"modules\": [{\"name\": \"mine\", \"entities\": [{\"name\": \"Channel\", \"placeholder\": true, \"attributes\": [{\"name\": \"remindAt\", \"type\": \"date\"}, {\"name\": \"score\", \"type\": \"double\"}]}]}]"
        let box = try preparedSandbox(extra: module)
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let path = server.base + "/model/Channel/alpha.test"
        let bearer = ["Authorization": "Bearer t"]
        func changeFiles() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: box.path("changes"))) ?? []).count }

        #expect(try curl(path, headers: bearer, form: [("remindAt", "2026-11-27T10:00+05:00")]).status == 303)
        #expect(try curl(path).text.contains("2026-11-27T05:00:00Z"))
        #expect(try curl(path, headers: bearer, form: [("remindAt", "2026-11-27T10:00")]).status == 303)
        #expect(try curl(path).text.contains("2026-11-27T10:00:00Z"), "datetime-local is UTC")
        #expect(try curl(path, headers: bearer, form: [("remindAt", "2026-11-27T10:00:30-03:30")]).status == 303)
        #expect(try curl(path).text.contains("2026-11-27T13:30:30Z"))
        let files = changeFiles()
        for bad in ["2026-11-27T10:00Zjunk", "2026-11-27T10:00+99:99", "2026-11-27T10:00+05", "2026-02-30T10:00", "2026-11-27T24:00",
                    "99999-11-27T10:00", "2026-11-27 10:00", "now"] {
            let r = try curl(path, headers: bearer, form: [("remindAt", bad)])
            #expect(r.status == 400, "remindAt=\(bad) gave \(r.status)")
            #expect(r.text.contains("remindAt"))
        }
        for bad in ["NaN", "nan", "inf", "-inf", "1e999", "infinity"] {
            let r = try curl(path, headers: bearer, form: [("score", bad)])
            #expect(r.status == 400, "score=\(bad) gave \(r.status)")
        }
        #expect(changeFiles() == files, "a refused edit wrote a change file")
        #expect(try curl(path, headers: bearer, form: [("score", "2.5")]).status == 303)
        #expect(try curl(path).text.contains("<th>score</th><td>2.5 "))
        // Filters read values the same way.
        #expect(try curl(server.base + "/model/Channel?score=NaN").status == 400)
        #expect(try curl(server.base + "/model/Channel?remindAt=2026-11-27T13:30:30Zjunk").status == 400)
        #expect(server.stop() == 0)
    }

    // MARK: 7. Login attempts

    @Test func wrongTokensAreLimitedPerClient() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"right-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        for attempt in 1...10 {
            #expect(try curl(server.base + "/login", form: [("token", "wrong-\(attempt)")]).status == 401, "attempt \(attempt)")
        }
        let blocked = try curl(server.base + "/login", form: [("token", "wrong-11")])
        #expect(blocked.status == 429)
        let retry = Int(blocked.headers["retry-after"] ?? "") ?? 0
        #expect((1...60).contains(retry), "Retry-After: \(blocked.headers["retry-after"] ?? "none")")
        // While blocked even the right token waits, and so does a bearer header.
        #expect(try curl(server.base + "/login", form: [("token", "right-token")]).status == 429)
        #expect(try curl(server.base + "/model/Channel/alpha.test", headers: ["Authorization": "Bearer right-token"], form: [("customName", "X")]).status == 429)
        // Another client is not blocked (127.0.0.2 is loopback too).
        let other = try rawExchange(port: server.port, Array("POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 17\r\nConnection: close\r\n\r\ntoken=right-token".utf8), from: "127.0.0.2")
        #expect(other.statusLine.contains(" 303 "), "\(other.statusLine)")
        try expectAlive(server, after: "the login limit")
        #expect(server.stop() == 0)
    }

    @Test func wrongBearerTokensCountToo() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"right-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        for attempt in 1...10 {
            #expect(try curl(server.base + "/model/Channel/alpha.test", headers: ["Authorization": "Bearer wrong-\(attempt)"], form: [("customName", "X")]).status == 401)
        }
        let blocked = try curl(server.base + "/", headers: ["Authorization": "Bearer wrong-11"])
        #expect(blocked.status == 429 && blocked.headers["retry-after"] != nil)
        #expect(server.stop() == 0)
    }

    // MARK: 8. HTTP/1.0, Connection: close, q=0

    @Test func http10AndConnectionCloseAreHonoured() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let old = try rawExchange(port: server.port, "GET /feeds/ HTTP/1.0\r\n\r\n")
        #expect(old.statusLine.hasPrefix("HTTP/1.0 200"), "\(old.statusLine)")
        #expect(old.headers["connection"]?.lowercased() == "close")
        #expect(old.headers["content-length"] != nil && old.headers["transfer-encoding"] == nil)
        #expect(old.closed, "an HTTP/1.0 request without keep-alive left the connection open")
        for header in ["close", "Close", "keep-alive, close", "CLOSE"] {
            let r = try rawExchange(port: server.port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: \(header)\r\n\r\n")
            #expect(r.closed, "Connection: \(header) left the connection open")
            #expect(r.headers["connection"]?.lowercased() == "close", "Connection: \(header)")
        }
        // HTTP/1.0 with keep-alive: both requests answered on one connection, which stays open.
        let twice = try rawExchange(port: server.port, "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", timeout: 2)
        #expect(twice.text.components(separatedBy: "HTTP/1.0 ").count == 3, "\(twice.text.prefix(300))")
        #expect(twice.headers["connection"]?.lowercased() == "keep-alive")
        #expect(!twice.closed)
        // HTTP/1.1 without Connection stays open.
        #expect(!(try rawExchange(port: server.port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 2)).closed)

        let feed = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasPrefix("alpha") })
        for refused in ["gzip;q=0", "gzip; q=0.000", "gzip;Q=0", "*;q=0", "identity", "gzip;q=2", "gzip;q=abc", "x;q=1"] {
            let r = try curl(server.base + "/feeds/" + feed, headers: ["Accept-Encoding": refused])
            #expect(r.status == 200 && r.headers["content-encoding"] == nil, "Accept-Encoding: \(refused)")
        }
        for accepted in ["gzip", "GZIP", "gzip;q=0.5", "deflate, gzip;q=0.001", "*", "identity;q=1, *;q=0.1", "gzip;q=0, x-gzip"] {
            let r = try curl(server.base + "/feeds/" + feed, headers: ["Accept-Encoding": accepted])
            #expect(r.headers["content-encoding"] == "gzip", "Accept-Encoding: \(accepted)")
        }
        #expect(server.stop() == 0)
    }

    // MARK: 9. Busy port, missing feed directory

    @Test func aBusyPortOrAMissingFeedDirectoryIsOneClearLine() throws {
        let box = try preparedSandbox()
        let first = try ServerProcess(box, arguments: ["--config", "c.json"])
        let second = try runBriefly(box, ["serve", "--config", "c.json", "--port", String(first.port)])
        #expect(second.status == 69, "a busy port: exit \(second.status)")
        let lines = second.stderr.split(separator: "\n")
        #expect(lines.count == 1 && second.stderr.contains("127.0.0.1:\(first.port)"), "\(second.stderr)")
        #expect(!second.stderr.contains("errno") && !second.stderr.contains("bind(descriptor"), "\(second.stderr)")
        #expect(first.stop() == 0)

        let missing = try runBriefly(box, ["serve", "--config", "c.json", "--port", "0", "--feeds", "no-such-dir"])
        #expect(missing.status == 66, "--feeds no-such-dir: exit \(missing.status)")
        #expect(missing.stderr.contains("no-such-dir"), "\(missing.stderr)")
        try box.write("a-file", "x")
        #expect(try runBriefly(box, ["serve", "--config", "c.json", "--port", "0", "--feeds", "a-file"]).status == 66)
    }

    // MARK: Malformed requests, raw

    /// Requests no client should send, each on its own connection: the server answers (or
    /// closes) and still serves /healthz after every one.
    @Test func malformedRawRequestsLeaveTheServerServing() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"t\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let long = String(repeating: "A", count: 100_000)
        let requests: [String] = [
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 31 Dec 999999999999 23:59:59 GMT\r\n\r\n",
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 31 Dec 2026 9999999999999999:59:59 GMT\r\n\r\n",
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 99999999999999999 Dec 2026 23:59:59 GMT\r\n\r\n",
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 31 Dec -9223372036854775808 23:59:59 GMT\r\n\r\n",
            "GET /model/Channel?page=184467440737095517 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Programme?page=9223372036854775807&sort=start&desc=1 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Programme?channel=-9223372036854775808 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Channel/%23-9223372036854775808 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Channel/%2399999999999999999999999999 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Programme/alpha.test/99999999999999999999999999 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /model/Programme/alpha.test/9999-99-99T99:99:99Z HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /channels/alpha.test?day=2147483647-12-31 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /channels/%23-1?day=-2147483648-01-01 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /channels/%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /feeds/%zz.ics HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /feeds/%c0%ae%c0%ae/x.ics HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /feeds/\(String(repeating: "%41", count: 5000)).ics HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /search?q=%00%ff&q=\(long) HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=99999999999999999999, *;q=-1, ;;;,,,=\r\n\r\n",
            "GET /feeds/ HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(String(repeating: "W/\"x\",", count: 5000))\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nCookie: tvimport_session=\(long)\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nCookie: ;;;===;\u{1}\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999999999999999-\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
            "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\ntoken=%ZZ%%",
            "POST /model/Channel/alpha.test HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Length: 23\r\n\r\ncustomName=%E2%82&&&==",
            "GET /\(long) HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-Long: \(long)\r\n\r\n",
            "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n folded: header\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
            "GET /\u{0}/x HTTP/1.1\r\nHost: x\r\n\r\n",
            "BREW /coffee HTCPCP/1.0\r\n\r\n",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            "\r\n\r\n\r\n",
            "GET",
            "\u{16}\u{3}\u{1}\u{0}\u{a5}\u{1}\u{0}\u{0}",
        ]
        for (index, request) in requests.enumerated() {
            let exchange = try rawExchange(port: server.port, request, timeout: 2)
            let what = "request \(index): \(request.prefix(80).debugDescription)"
            if !exchange.response.isEmpty {
                #expect(exchange.statusLine.hasPrefix("HTTP/1."), "\(what): \(exchange.statusLine)")
                #expect(!exchange.statusLine.contains(" 500 "), "\(what): \(exchange.statusLine)")
            }
            try expectAlive(server, after: what)
        }
        #expect(server.stop() == 0)
    }
}
