import Foundation
import Testing
@testable import Fetch

/// End-to-end fetches against Fixtures/server.py on 127.0.0.1.
@Suite struct RemoteFetchTests {
    let server: TestServer
    let cache: CacheDirectory

    init() throws {
        server = try TestServer()
        cache = try CacheDirectory()
    }

    /// Fetches `path` and expects a failure of `kind`, with nothing left in the cache.
    @discardableResult
    func expectFailure(
        _ kind: FetchError.Kind, path: String, policy: FetchPolicy = testPolicy(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> FetchError? {
        defer { cache.remove() }
        let error = #expect(throws: FetchError.self, sourceLocation: sourceLocation) {
            try cache.fetcher.fetch(FetchRequest(url: server.url(path), policy: policy))
        }
        #expect(error?.kind == kind, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(server.url("")) == true, sourceLocation: sourceLocation)
        #expect(cache.contents == [], "left behind: \(cache.contents)", sourceLocation: sourceLocation)
        return error
    }

    /// The server stops when the suite instance goes (TestServer.deinit).
    func cleanUp() {
        cache.remove()
    }

    @Test func plainGuideIsDownloadedIntoTheCacheDirectory() throws {
        defer { cleanUp() }
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/plain/a"), policy: testPolicy()))
        let got = try #require(download(outcome))
        #expect(try Data(contentsOf: URL(fileURLWithPath: got.file)) == guide)
        #expect(got.file.hasPrefix(cache.path + "/"))
        #expect(got.bytes == Int64(guide.count))
        #expect(got.compression == .none)
        #expect(!got.isLocal)
        #expect(got.contentHash.count == 16)
        #expect(cache.contents.count == 1)
    }

    @Test func gzipContentEncodingIsDecoded() throws {
        defer { cleanUp() }
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/gzip-encoding/a"), policy: testPolicy()))
        let got = try #require(download(outcome))
        #expect(try Data(contentsOf: URL(fileURLWithPath: got.file)) == guide)
        #expect(got.compression == .none)
    }

    @Test func gzipFileIsKeptCompressedAndRecorded() throws {
        defer { cleanUp() }
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/gz-file/guide.xml.gz"), policy: testPolicy()))
        let got = try #require(download(outcome))
        #expect(got.compression == .gzip)
        #expect(try Data(contentsOf: URL(fileURLWithPath: got.file)).prefix(2) == Data([0x1f, 0x8b]))
    }

    @Test func etagRoundTripGivesNotModified() throws {
        defer { cleanUp() }
        let url = server.url("/etag/a")
        let first = try #require(download(try cache.fetcher.fetch(FetchRequest(url: url, policy: testPolicy()))))
        #expect(first.validators.etag == "\"guide-v1\"")
        try FileManager.default.removeItem(atPath: first.file)

        let second = try cache.fetcher.fetch(FetchRequest(url: url, validators: first.validators, policy: testPolicy()))
        #expect(isNotModified(second))
        #expect(cache.contents == [])
    }

    @Test func lastModifiedRoundTripGivesNotModified() throws {
        defer { cleanUp() }
        let url = server.url("/last-modified/a")
        let first = try #require(download(try cache.fetcher.fetch(FetchRequest(url: url, policy: testPolicy()))))
        #expect(first.validators.lastModified == "Wed, 01 Jan 2025 00:00:00 GMT")
        #expect(first.validators.etag == nil)
        try FileManager.default.removeItem(atPath: first.file)

        let second = try cache.fetcher.fetch(FetchRequest(url: url, validators: first.validators, policy: testPolicy()))
        #expect(isNotModified(second))
        #expect(cache.contents == [])
    }

    @Test func forceIgnoresValidatorsAndHash() throws {
        defer { cleanUp() }
        let url = server.url("/etag/forced")
        let first = try #require(download(try cache.fetcher.fetch(FetchRequest(url: url, policy: testPolicy()))))
        try FileManager.default.removeItem(atPath: first.file)

        let forced = try cache.fetcher.fetch(FetchRequest(
            url: url, validators: first.validators, previousContentHash: first.contentHash, force: true,
            policy: testPolicy()))
        let got = try #require(download(forced))
        #expect(got.contentHash == first.contentHash)
    }

    @Test func identicalContentIsNotModified() throws {
        defer { cleanUp() }
        let url = server.url("/plain/same")
        let first = try #require(download(try cache.fetcher.fetch(FetchRequest(url: url, policy: testPolicy()))))
        #expect(first.validators.isEmpty)
        try FileManager.default.removeItem(atPath: first.file)

        let second = try cache.fetcher.fetch(FetchRequest(
            url: url, previousContentHash: first.contentHash, policy: testPolicy()))
        #expect(isNotModified(second))
        #expect(cache.contents == [])
    }

    @Test func notFoundFailsWithoutRetry() throws {
        let error = expectFailure(.http(status: 404), path: "/missing/a", policy: FetchPolicy(retries: 3, initialBackoff: 5))
        #expect(error?.message.contains("404") == true)
        #expect(try server.hits("/missing/a") == 1)
    }

    @Test func serverErrorIsRetried() throws {
        defer { cleanUp() }
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/flaky/a"), policy: testPolicy()))
        #expect(download(outcome) != nil)
        #expect(try server.hits("/flaky/a") == 2)
    }

    @Test func tooManyRequestsHonoursRetryAfter() throws {
        defer { cleanUp() }
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/busy/a"), policy: testPolicy()))
        #expect(download(outcome) != nil)
        #expect(seconds(start.duration(to: clock.now)) >= 0.95)
        #expect(try server.hits("/busy/a") == 2)
    }

    @Test func retryAfterBeyondTheBudgetFailsAtOnce() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = expectFailure(.http(status: 503), path: "/busy-long/a", policy: testPolicy(budget: 10))
        #expect(seconds(start.duration(to: clock.now)) < 5)
        #expect(error?.message.contains("budget") == true)
    }

    @Test func connectionResetMidBodyIsTruncatedAfterRetries() throws {
        expectFailure(.truncated, path: "/reset/a", policy: testPolicy(retries: 2))
        #expect(try server.hits("/reset/a") == 3)
    }

    @Test func earlyCloseIsTruncated() throws {
        let error = expectFailure(.truncated, path: "/short/a", policy: testPolicy(retries: 1))
        #expect(error?.message.contains("2 attempts") == true)
    }

    @Test(arguments: ["/big/a", "/big-unsized/a"])
    func bodyOverTheLimitIsTooLarge(path: String) throws {
        var policy = testPolicy()
        policy.maxBytes = 64 * 1024
        expectFailure(.tooLarge, path: path, policy: policy)
    }

    @Test func redirectToAFileURLIsRefused() throws {
        let error = expectFailure(.redirectRefused, path: "/redirect-file/a")
        #expect(error?.message.contains("file:///etc/passwd") == true)
    }

    @Test func redirectLoopIsRefused() throws {
        expectFailure(.redirectRefused, path: "/redirect-loop/a")
    }

    @Test func redirectToHTTPIsFollowed() throws {
        defer { cleanUp() }
        let outcome = try cache.fetcher.fetch(FetchRequest(url: server.url("/redirect-ok/a"), policy: testPolicy()))
        let got = try #require(download(outcome))
        #expect(try Data(contentsOf: URL(fileURLWithPath: got.file)) == guide)
    }

    @Test func slowServerTimesOut() throws {
        let clock = ContinuousClock()
        let start = clock.now
        var policy = testPolicy(retries: 0)
        policy.lowSpeedLimit = 1000
        policy.lowSpeedTime = 2
        expectFailure(.timeout, path: "/slow/a", policy: policy)
        #expect(seconds(start.duration(to: clock.now)) < 8)
    }

    @Test func missingCacheDirectoryIsCreated() throws {
        defer { cleanUp() }
        let fetcher = Fetcher(cacheDirectory: cache.path + "/new/cache")
        let got = try #require(download(try fetcher.fetch(FetchRequest(url: server.url("/plain/a"), policy: testPolicy()))))
        #expect(got.file.hasPrefix(cache.path + "/new/cache/"))
    }

    @Test func htmlPageIsNotXMLTV() throws {
        let error = expectFailure(.notXMLTV, path: "/html/a")
        #expect(error?.message.contains("HTML page") == true)
    }

    @Test func refusedConnectionIsATransportFailure() throws {
        let url = server.url("/plain/a")
        server.stop()  // nothing listens on the port any more
        defer { cleanUp() }
        let error = #expect(throws: FetchError.self) {
            try cache.fetcher.fetch(FetchRequest(url: url, policy: testPolicy(retries: 1)))
        }
        #expect(error?.kind == .transport)
        #expect(error?.message.contains("2 attempts") == true)
        #expect(cache.contents == [])
    }

    /// Nothing listening answers the same way at once: one quick retry, not the back-off series a
    /// timeout or a 5xx gets (four attempts with 2, 4 and 8 s between them took 14 s, issue 39).
    @Test func refusedConnectionIsRetriedOnceQuickly() throws {
        let url = server.url("/plain/a")
        server.stop()
        defer { cleanUp() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: FetchError.self) {
            try cache.fetcher.fetch(FetchRequest(url: url, policy: FetchPolicy(retries: 3, totalBudget: 600, initialBackoff: 2)))
        }
        let elapsed = seconds(start.duration(to: clock.now))
        #expect(error?.kind == .transport)
        #expect(error?.message.contains("(after 2 attempts)") == true, "\(String(describing: error))")
        #expect(elapsed < 2, "a refused connection took \(elapsed) s")
        // A 5xx keeps its retries with back-off under the same policy shape.
        var schedule = RetrySchedule(policy: FetchPolicy(retries: 3, initialBackoff: 2))
        #expect(schedule.failed(transient: true) == .retry(after: 2))
        #expect(schedule.failed(transient: true) == .retry(after: 4))
        var refused = RetrySchedule(policy: FetchPolicy(retries: 3, initialBackoff: 2))
        #expect(refused.failed(transient: true, quickRetryOnly: true) == .retry(after: RetrySchedule.quickRetryWait))
        #expect(refused.failed(transient: true, quickRetryOnly: true) != .retry(after: RetrySchedule.quickRetryWait))
    }
}
