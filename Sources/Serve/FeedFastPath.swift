import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Primitives

/// What a request for a feed file gets, from the file's entry and the request's headers: the
/// route (`Routes.feed`) and the event loop's fast path (`FeedFastPath`) answer alike.
struct FeedAnswer {
    let status: HTTPResponse.Status
    /// Made once per file (FeedFiles.Entry): validators, caching fields, security headers.
    let headers: HTTPFields
    /// Nil for a 304.
    let body: ByteBuffer?
    /// The representation's validator (the identity or the gzip form).
    let etag: String

    init(_ entry: FeedFiles.Entry, acceptEncoding: String?, ifNoneMatch: String?, ifModifiedSince: String?) {
        let gzip = acceptEncoding.map(RequestInput.acceptsGzip) ?? false ? entry.gzipBody : nil
        let etag = gzip == nil ? entry.etag : entry.gzipETag
        self.etag = etag
        let notModified: Bool
        // If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
        if let match = ifNoneMatch {
            notModified = match == "*" || match.split(separator: ",").contains { RequestInput.sameTag($0, etag) }
        } else if let since = ifModifiedSince.flatMap(HTTPDate.parse) {
            notModified = entry.lastModified <= since
        } else {
            notModified = false
        }
        if notModified {
            status = .notModified
            headers = gzip == nil ? entry.headers : entry.gzipHeaders
            body = nil
        } else {
            status = .ok
            headers = gzip == nil ? entry.headers : entry.gzipBodyHeaders
            body = gzip ?? entry.body
        }
    }

    /// The response's fields as written on the event loop, with those Hummingbird adds to a
    /// route's answer: Content-Length, Date, Server.
    func responseFields(date: String) -> HTTPFields {
        var fields = headers
        if let body { fields[.contentLength] = String(body.readableBytes) }
        fields[.date] = date
        fields[.server] = "tvimport"
        return fields
    }
}

/// Answers `GET /feeds/NAME` of a feed file already in memory on the event loop that read the
/// request, without Hummingbird's router: no hop to the cooperative pool and back, no request
/// context, logger or middleware chain per request (on two cores those cost more than the answer).
/// The answer is `FeedAnswer`'s, with the headers Hummingbird adds (Date, Server,
/// Content-Length) and the same metrics; ConnectionPersistenceHandler and Hummingbird's
/// connection state (idle timeout, graceful shutdown) see it like any other response.
///
/// Everything else goes on to Hummingbird unchanged: other paths and methods, HEAD, a query,
/// a bearer token (its throttle is a middleware's), a file not loaded yet or changed since
/// (loading is blocking work, on the thread pool), and any request that arrives while an
/// earlier one of the connection is still being answered there, so that responses keep the
/// requests' order.
final class FeedFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let state: ServeState
    /// Requests passed on whose response has not ended yet.
    private var passedOn = 0
    /// The request answered here, until its end is read.
    private var answering: (answer: FeedAnswer, started: ContinuousClock.Instant)?
    private var date = (second: 0, text: "")

    init(state: ServeState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if passedOn == 0, answering == nil, let answer = answer(request) {
                answering = (answer, .now)
                return
            }
            passedOn += 1
        case .body:
            if answering != nil { return }   // a GET's body, which the route would ignore too
        case .end:
            if let (answer, started) = answering {
                answering = nil
                write(answer, context: context)
                state.metrics.observe(status: answer.status.code, duration: .now - started)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), passedOn > 0 { passedOn -= 1 }
        context.write(data, promise: promise)
    }

    /// The answer to `request` from memory, or nil when Hummingbird is to answer it.
    private func answer(_ request: HTTPRequest) -> FeedAnswer? {
        guard request.method == .get, let path = request.path, !(state.canEdit && request.headerFields.contains(.authorization)),
              let name = Self.fileName(target: path), let entry = state.feeds.loadedEntry(name) else { return nil }
        let fields = request.headerFields
        return FeedAnswer(entry, acceptEncoding: fields[.acceptEncoding], ifNoneMatch: fields[.ifNoneMatch], ifModifiedSince: fields[.ifModifiedSince])
    }

    /// The feed file a request target names, when the route `/feeds/**` would serve it (no query).
    static func fileName(target path: String) -> String? {
        guard path.hasPrefix("/feeds/"), !path.utf8.contains(UInt8(ascii: "?")) else { return nil }
        return RequestInput.feedFileName(fromRawPath: RequestInput.rest(ofPath: path[...], after: 1))
    }

    private func write(_ answer: FeedAnswer, context: ChannelHandlerContext) {
        let headers = answer.responseFields(date: currentDate())
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The Date header, written out once a second.
    private func currentDate() -> String {
        let now = Int(time(nil))
        if now != date.second { date = (now, HTTPDate.format(Int64(now))) }
        return date.text
    }
}
