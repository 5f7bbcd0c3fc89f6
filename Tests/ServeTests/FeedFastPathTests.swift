import Foundation
import HummingbirdTesting
import Job
import Testing
@testable import Serve
#if canImport(Glibc)
import Glibc
#endif

/// Feeds answered from the connection's bytes (PlainFeedFastPath), before NIO's HTTP parser:
/// the same bytes as the HTTP-level fast path (FeedFastPath) and the route, in the requests'
/// order, counted, and the connection's idle time kept.
@Suite(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"))
struct FeedFastPathTests {
    /// A connection that sends `pieces` (pausing between them), then reads until the server
    /// closes it or `timeout` seconds pass without a byte.
    static func exchange(port: Int, _ pieces: [String], pause: Double = 0.2, timeout: Double = 3) throws -> RawExchange {
        let fd = try connected(port: port, timeout: timeout)
        defer { close(fd) }
        for (i, piece) in pieces.enumerated() {
            if i > 0 {
                usleep(UInt32(pause * 1_000_000))
                guard (try? send(fd, piece)) != nil else { break }   // closed by the server meanwhile
            } else {
                try send(fd, piece)
            }
        }
        return receiveUntilClosed(fd)
    }

    static func connected(port: Int, timeout: Double) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let status = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard status == 0 else { close(fd); throw RawSocketError(description: "connect: errno \(errno)") }
        return fd
    }

    static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n == bytes.count else { throw RawSocketError(description: "send: \(n) of \(bytes.count) bytes") }
    }

    /// The responses of an exchange, each its head (the Date line left out) and body.
    static func responses(_ bytes: [UInt8]) -> [(head: String, body: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var rest = bytes[...]
        let blank = Array("\r\n\r\n".utf8)
        while let end = rest.indices.first(where: { rest[$0...].starts(with: blank) }) {
            let head = String(decoding: rest[..<end], as: UTF8.self)
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = end + 4
            let body = Array(rest[bodyStart..<min(rest.endIndex, bodyStart + length)])
            out.append((head.split(separator: "\r\n").filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n"), body))
            rest = rest[min(rest.endIndex, bodyStart + length)...]
        }
        return out
    }

    static func plainAnswers(_ server: ServerProcess) throws -> Int {
        let metrics = try curl(server.base + "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("tvimport_serve_plain_feed_answers_total") }
        return Int(line?.split(separator: " ").last ?? "") ?? 0
    }

    /// Every kind of answer a feed gets (200, gzip 200, 304 by either validator, a changed
    /// validator) is the same from the bytes' path, the HTTP-level fast path and the route.
    @Test func plainRequestsGetTheRoutesBytes() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") }.sorted()
        let file = try #require(files.first)
        let loaded = try curl(server.base + "/feeds/" + file)   // the route loads it
        let etag = try #require(loaded.headers["etag"]), lastModified = try #require(loaded.headers["last-modified"])
        let gzipped = try curl(server.base + "/feeds/" + file, headers: ["Accept-Encoding": "gzip"])
        let gzipETag = try #require(gzipped.headers["etag"])
        #expect(gzipETag != etag)

        let cases: [[String]] = [
            [], ["Accept-Encoding: gzip"], ["If-None-Match: \(etag)"], ["Accept-Encoding: gzip, deflate", "If-None-Match: \(gzipETag)"],
            ["If-None-Match: W/\(etag)"], ["If-None-Match: \"other\""], ["If-Modified-Since: \(lastModified)"],
            ["Accept-Encoding: gzip;q=0", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"], ["Connection: keep-alive", "User-Agent: cal/1"],
        ]
        // The bytes' path takes the plain request; a head over its 4 KB limit goes to the HTTP
        // parser and FeedFastPath; a query to the route. A last request closes the connection.
        let padding = "X-Padding: " + String(repeating: "p", count: 4200)
        let before = try Self.plainAnswers(server)
        for fields in cases {
            var answers: [[(head: String, body: [UInt8])]] = []
            for (target, extra) in [("/feeds/\(file)", []), ("/feeds/\(file)", [padding]), ("/feeds/\(file)?v=1", [])] {
                let head = (["GET \(target) HTTP/1.1", "Host: 127.0.0.1"] + fields + extra).joined(separator: "\r\n") + "\r\n\r\n"
                let exchange = try Self.exchange(port: server.port, [head + "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"])
                let responses = Self.responses(exchange.response)
                #expect(responses.count == 2 && exchange.closed, "\(fields) \(target): \(exchange.text.prefix(300))")
                answers.append(Array(responses.prefix(1)))
            }
            let plain = try #require(answers[0].first), parsed = try #require(answers[1].first), routed = try #require(answers[2].first)
            #expect(plain.head == parsed.head && plain.body == parsed.body, "\(fields): \(plain.head)\n---\n\(parsed.head)")
            #expect(plain.head == routed.head && plain.body == routed.body, "\(fields): \(plain.head)\n---\n\(routed.head)")
            #expect(plain.head.hasPrefix("HTTP/1.1 200 OK") || plain.head.hasPrefix("HTTP/1.1 304 Not Modified"))
        }
        #expect(try Self.plainAnswers(server) - before == cases.count, "each case's plain request, and only it, answered from the bytes")
        #expect(server.stop() == 0)
    }

    /// Pipelined requests keep their order: plain ones answered from the bytes until one is not
    /// (a file not loaded yet), which goes to the parser with all that follows it. A request
    /// split across reads is held until it is whole.
    @Test func pipelinedAndSplitRequestsKeepTheirOrder() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") }.sorted()
        try #require(files.count >= 2)
        let (first, second) = (files[0], files[1])
        let etag = try #require(try curl(server.base + "/feeds/" + first).headers["etag"])

        var before = try Self.plainAnswers(server)
        let request = "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\n\r\n"
        let pipelined = try Self.exchange(port: server.port, [
            "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\n\r\n" + request + "GET /feeds/\(second) HTTP/1.1\r\nHost: x\r\n\r\n"
                + request + "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"])
        let statuses = Self.responses(pipelined.response).map { String($0.head.prefix(12)) }
        #expect(statuses == ["HTTP/1.1 200", "HTTP/1.1 304", "HTTP/1.1 200", "HTTP/1.1 304", "HTTP/1.1 200"], "\(statuses)")
        let etags = Self.responses(pipelined.response).map { $0.head.split(separator: "\r\n").first { $0.hasPrefix("ETag: ") } }
        #expect(etags[2] != etags[0] && etags[0] == etags[1], "the third answer is the second file's")
        #expect(pipelined.closed)
        #expect(try Self.plainAnswers(server) - before == 2, "the two before the file not loaded")

        // Split in the request line, then in a header: held, then answered from the bytes.
        before = try Self.plainAnswers(server)
        let split = try Self.exchange(port: server.port, ["GET /feeds/\(first.prefix(3))", "\(first.dropFirst(3)) HTTP/1.1\r\nIf-None-",
                                                          "Match: \(etag)\r\n\r\n" + "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"])
        #expect(Self.responses(split.response).map { String($0.head.prefix(12)) }.first == "HTTP/1.1 304", "\(split.text.prefix(200))")
        #expect(try Self.plainAnswers(server) - before == 1)

        // Cut short by the client: NIO's parser sees the part and the connection ends as before.
        let truncated = try rawExchange(port: server.port, "GET /feeds/\(first) HTTP/1.1\r\nHost: x\r\n", timeout: 2)
        #expect(truncated.response.isEmpty || truncated.statusLine.hasPrefix("HTTP/1.1 400"), "\(truncated.text)")
        #expect(try curl(server.base + "/feeds/" + first, headers: ["If-None-Match": etag]).status == 304)
        #expect(server.stop() == 0)
    }

    /// Requests for a feed that are malformed, or well-formed but outside the plain grammar, go
    /// to NIO's parser untouched: none is answered from the bytes, and the server stays up.
    @Test func malformedFeedRequestsGoToTheParser() throws {
        let box = try preparedSandbox()
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasSuffix(".ics") })
        #expect(try curl(server.base + "/feeds/" + file).status == 200)
        let before = try Self.plainAnswers(server)
        let target = "/feeds/" + file
        let inputs = [
            "GET \(target) HTTP/1.1\nHost: x\n\n",                                   // bare LF
            "GET \(target) HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",                 // obs-fold
            "GET \(target) HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",                  // two hosts
            "GET \(target) HTTP/1.1\r\nX: a\u{1}b\r\n\r\n",                         // a control byte
            "GET \(target) HTTP/1.1\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n\r\n",
            "GET \(target) HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
            "GET \(target) HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET \(target) HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "GET \(target) HTTP/1.1\r\nConnection: close\r\n\r\n",
            "GET \(target) HTTP/1.0\r\n\r\n",
            "GET \(target)#frag HTTP/1.1\r\n\r\n",
            "GET \(target) HTTP/1.1\r\n: empty name\r\n\r\n",
            "GET \(target) HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 40) + "\r\n",   // over 32 fields
            "GET /feeds/\(String(repeating: "a", count: 5000)).ics HTTP/1.1\r\n\r\n",
            "GET /feeds/%ZZ.ics HTTP/1.1\r\n\r\n",
            "GET /feeds/%2e%2e%2fetc%2fpasswd HTTP/1.1\r\n\r\n",
        ]
        for input in inputs {
            let exchange = try rawExchange(port: server.port, input, timeout: 1)
            #expect(!exchange.text.contains("root:"), "\(input.prefix(80))")
            #expect(server.running.process.isRunning, "after \(input.prefix(80)): \(server.running.output().stderr)")
        }
        #expect(try Self.plainAnswers(server) == before, "answered from the bytes")
        #expect(try curl(server.base + "/feeds/" + file).status == 200)
        #expect(server.stop() == 0)
    }

    /// A bearer token while editing is on goes to the route (whose throttle counts wrong
    /// tokens); without editing, it changes nothing and the bytes' path answers.
    @Test func aBearerTokenGoesToTheRouteWhenEditingIsOn() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"right-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasSuffix(".ics") })
        #expect(try curl(server.base + "/feeds/" + file).status == 200)
        let before = try Self.plainAnswers(server)
        let answer = try Self.exchange(port: server.port, ["GET /feeds/\(file) HTTP/1.1\r\nAuthorization: Bearer wrong\r\nConnection: keep-alive\r\n\r\n"
            + "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"])
        #expect(answer.text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.text.prefix(200))")
        #expect(try Self.plainAnswers(server) == before)
        #expect(try curl(server.base + "/feeds/" + file).status == 200)
        #expect(try Self.plainAnswers(server) == before + 1)
        #expect(server.stop() == 0)
    }

    /// A connection kept busy by requests answered from the bytes outlives the idle timeout; an
    /// idle one, or one whose request trickles in, does not.
    @Test func theIdleTimeoutCountsRequestsAnsweredFromTheBytes() async throws {
        let box = try preparedSandbox()
        // In this process: paths absolute, as the working directory is not the sandbox.
        try box.write("in-process.json", "{\"database\": \"\(box.path("tv.sqlite"))\", \"output\": \"\(box.path("feeds"))\", \"sources\": []}")
        let config = try JobConfig.load(path: box.path("in-process.json"), requireSources: false)
        var options = try ServeOptions(config: config, environment: [:])
        options.idleTimeoutSeconds = 1
        let app = try ServeServer.application(options: options)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).first { $0.hasSuffix(".ics") })
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // The sockets block: on a thread of their own, not the cooperative pool the server's
            // routes need; what they saw is checked here.
            let seen = try await Self.offThePool { try Self.idleChecks(port: port, file: file) }
            #expect(seen.loaded, "the route did not load the file")
            #expect(seen.answered == 12, "the busy connection was closed after \(seen.answered) answers")
            #expect(seen.idleClosed && seen.idleFor < .seconds(2.5), "idle: closed \(seen.idleClosed) after \(seen.idleFor)")
            #expect(seen.slowClosed, "a request trickling in was not closed")
        }
    }

    struct IdleObservations: Sendable {
        var loaded = false, answered = 0, idleClosed = false, idleFor = Duration.zero, slowClosed = false
    }

    static func idleChecks(port: Int, file: String) throws -> IdleObservations {
        var seen = IdleObservations()
        // The route loads it (on the cooperative pool, which a loaded test run keeps busy: a long wait).
        let loaded = try Self.exchange(port: port, ["GET /feeds/\(file) HTTP/1.1\r\nConnection: close\r\n\r\n"], timeout: 60)
        seen.loaded = loaded.text.hasPrefix("HTTP/1.1 200 OK\r\n")
        let request = "GET /feeds/\(file) HTTP/1.1\r\nHost: x\r\n\r\n"
        let fd = try Self.connected(port: port, timeout: 3)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<12 {   // 2.4 s of requests, 0.2 s apart
            try Self.send(fd, request)
            usleep(200_000)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { seen.answered += 1 }
        }
        // Then idle: closed within about a second.
        let start = ContinuousClock.now
        seen.idleClosed = receiveUntilClosed(fd).closed
        seen.idleFor = ContinuousClock.now - start
        // A request that trickles in is closed as well.
        let slow = try Self.exchange(port: port, ["GET /feeds/", file, " HTTP/1.1\r\n"], pause: 0.7, timeout: 4)
        seen.slowClosed = slow.closed && slow.response.isEmpty
        return seen
    }

    /// Runs blocking work on a thread of its own and waits for it.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, Error>) in
            Thread.detachNewThread {
                do { done.resume(returning: try work()) } catch { done.resume(throwing: error) }
            }
        }
    }
}
