import Foundation
import Testing
@testable import Fetch

@Suite struct LocalFetchTests {
    let cache: CacheDirectory
    init() throws { cache = try CacheDirectory() }

    func writeFile(_ name: String, _ data: Data) throws -> String {
        let path = cache.path + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func localPathIsUsedInPlace() throws {
        defer { cache.remove() }
        let path = try writeFile("guide.xml", guide)
        let got = try #require(download(try cache.fetcher.fetch(FetchRequest(url: path))))
        #expect(got.file == path)
        #expect(got.isLocal)
        #expect(got.bytes == Int64(guide.count))
        #expect(got.compression == .none)
        #expect(cache.contents == ["guide.xml"])
    }

    @Test func fileURLIsUsedInPlace() throws {
        defer { cache.remove() }
        let path = try writeFile("guide with space.xml", guide)
        let url = URL(fileURLWithPath: path).absoluteString
        let got = try #require(download(try cache.fetcher.fetch(FetchRequest(url: url))))
        #expect(got.file == path)
        #expect(got.isLocal)
    }

    @Test func localHashMatchIsNotModified() throws {
        defer { cache.remove() }
        let path = try writeFile("guide.xml", guide)
        let first = try #require(download(try cache.fetcher.fetch(FetchRequest(url: path))))
        #expect(isNotModified(try cache.fetcher.fetch(FetchRequest(url: path, previousContentHash: first.contentHash))))
        #expect(download(try cache.fetcher.fetch(
            FetchRequest(url: path, previousContentHash: first.contentHash, force: true))) != nil)
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test(arguments: ["/nonexistent/tvimport/guide.xml", "file:///nonexistent/tvimport/guide.xml"])
    func missingLocalFileIsNotFound(url: String) throws {
        defer { cache.remove() }
        let error = #expect(throws: FetchError.self) { try cache.fetcher.fetch(FetchRequest(url: url)) }
        #expect(error?.kind == .notFound)
        #expect(error?.message.contains("/nonexistent/tvimport/guide.xml") == true)
    }

    @Test func localDirectoryIsNotFound() throws {
        defer { cache.remove() }
        let error = #expect(throws: FetchError.self) { try cache.fetcher.fetch(FetchRequest(url: cache.path)) }
        #expect(error?.kind == .notFound)
    }

    @Test func localHTMLIsNotXMLTV() throws {
        defer { cache.remove() }
        let path = try writeFile("page.html", Data("<html><body>hi</body></html>".utf8))
        let error = #expect(throws: FetchError.self) { try cache.fetcher.fetch(FetchRequest(url: path)) }
        #expect(error?.kind == .notXMLTV)
    }

    @Test func unsupportedSchemeFails() throws {
        defer { cache.remove() }
        let error = #expect(throws: FetchError.self) {
            try cache.fetcher.fetch(FetchRequest(url: "ftp://127.0.0.1/guide.xml"))
        }
        #expect(error?.kind == .transport)
        #expect(cache.contents == [])
    }
}

@Suite struct ContentSnifferTests {
    static let accepted: [(String, [UInt8])] = [
        ("declaration", Array("<?xml version=\"1.0\"?>\n<tv>".utf8)),
        ("BOM and whitespace", [0xef, 0xbb, 0xbf] + Array(" \r\n\t<tv date=\"x\">".utf8)),
        ("bare root", Array("<tv>".utf8)),
        ("doctype", Array("<?xml version=\"1.0\"?>\n<!DOCTYPE tv SYSTEM \"xmltv.dtd\">\n<tv>".utf8)),
        ("comment first", Array("<!-- made by grab --><tv>".utf8)),
        ("stylesheet", Array("<?xml version=\"1.0\"?><?xml-stylesheet href=\"a.xsl\"?><tv>".utf8)),
        ("prolog longer than the head", Array("<?xml version=\"1.0\"?><!-- long".utf8)),
    ]

    @Test(arguments: accepted)
    func xmltvIsAccepted(name: String, head: [UInt8]) {
        #expect(ContentSniffer.verdict(forHead: head) == .accepted(.none), "\(name)")
    }

    @Test func compressedStreamsAreRecognised() {
        #expect(ContentSniffer.verdict(forHead: [0x1f, 0x8b, 0x08, 0]) == .accepted(.gzip))
        #expect(ContentSniffer.verdict(forHead: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0]) == .accepted(.xz))
    }

    static let rejected: [(String, [UInt8], String)] = [
        ("html doctype", Array("<!DOCTYPE html><html>".utf8), "HTML page"),
        ("lowercase doctype", Array("\n<!doctype HTML>".utf8), "HTML page"),
        ("html root", Array("<html lang=\"en\">".utf8), "HTML page"),
        ("html after a comment", Array("<!-- cdn --><html>".utf8), "HTML page"),
        ("other root", Array("<?xml version=\"1.0\"?><error>denied</error>".utf8), "<error>"),
        ("json", Array("{\"error\": 1}".utf8), "not XML"),
        ("empty", [], "nothing"),
        ("whitespace", Array("  \n".utf8), "whitespace"),
        ("binary", [0x50, 0x4b, 0x03, 0x04], "not XML"),
    ]

    @Test(arguments: rejected)
    func othersAreRejected(name: String, head: [UInt8], reason: String) {
        guard case .rejected(let message) = ContentSniffer.verdict(forHead: head) else {
            Issue.record("\(name) was accepted")
            return
        }
        #expect(message.contains(reason), "\(name): \(message)")
    }
}

@Suite struct HeaderAndHelperTests {
    @Test func headerLinesAreTrimmedAsBytes() {
        let headers = ResponseHeaders()
        for line in ["HTTP/1.1 429 Too Many Requests\r\n", "ETag: \"abc\"\r\n", "retry-after:  7 \r\n",
                     "Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT\r\n", "\r\n"] {
            Array(line.utf8).withUnsafeBytes { headers.receive(line: $0) }
        }
        #expect(headers.etag == "\"abc\"")
        #expect(headers.retryAfter == "7")
        #expect(headers.lastModified == "Wed, 01 Jan 2025 00:00:00 GMT")
        #expect(headers.reasonPhrase == "Too Many Requests")

        // A redirect's headers do not leak into the final response.
        Array("HTTP/1.1 200 OK\r\n".utf8).withUnsafeBytes { headers.receive(line: $0) }
        #expect(headers.etag == nil)
    }

    @Test func retryAfterAcceptsSecondsAndDates() {
        #expect(RetryAfter.seconds(from: "120") == 120)
        #expect(RetryAfter.seconds(from: "-3") == 0)
        let now = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01 00:00:00 UTC
        #expect(RetryAfter.seconds(from: "Wed, 01 Jan 2025 00:01:00 GMT", now: now) == 60)
        #expect(RetryAfter.seconds(from: "soon") == nil)
    }

    @Test func messagesHideCredentials() {
        #expect(FetchError.displayed("https://user:secret@example.org/guide.xml") == "https://example.org/guide.xml")
        #expect(FetchError.displayed("https://example.org/a@b") == "https://example.org/a@b")
    }

    /// Word-wise FNV-1a, whatever the chunks: a download's pieces and a file's reads agree.
    @Test func contentHashIsWordwiseFNV1aOfTheWhole() {
        let bytes = Array("<programme start=\"20261122030000 +0000\">".utf8)
        for split in [0, 1, 3, 8, 13, bytes.count] {
            var hash = ContentHash()
            bytes[..<split].withUnsafeBytes { hash.update($0) }
            bytes[split...].withUnsafeBytes { hash.update($0) }
            #expect(hash.hex == "f8f9457b9648d415", "split at \(split)")
        }
        var zero = ContentHash()
        [UInt8(0)].withUnsafeBytes { zero.update($0) }
        #expect(zero.hex != ContentHash().hex, "a zero byte counts")
    }

    @Test func defaultsMatchTheBrief() {
        let policy = FetchPolicy()
        #expect(policy.maxBytes == 1 << 30)
        #expect(policy.retries == 3)
        #expect(policy.maxRedirects == 5)
        #expect(policy.userAgent.hasPrefix("tvimport/0.1"))
    }
}
