import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Primitives

/// Answers the plainest requests for a feed already in memory (`PlainFeedRequest`: a GET of
/// HTTP/1.1 with the few headers a calendar client sends) from the connection's bytes, at the
/// head of the pipeline: NIO's HTTP parser, the HTTPTypes conversion, Hummingbird's handlers and
/// NIO's response encoder never see it. What a request costs here is one `lstat` and, most of
/// the time, a response head made earlier on this connection: the same file and representation
/// in the same second is the same bytes.
///
/// The answer is `FeedFastPath`'s (the same `FeedAnswer` and `FeedAnswer.responseFields`, written
/// as NIO's encoder writes them), and is counted in the same metrics. It keeps the connection
/// alive in `IdleConnectionHandler`'s eyes.
///
/// The first request it does not answer (an unusual one, one for a file not loaded or changed,
/// a head longer than `PlainFeedRequest.maxLength`, a bearer token while editing is on) goes to
/// NIO's parser with every byte after it, and so does everything that connection sends later:
/// responses keep the requests' order without this handler tracking the others.
final class PlainFeedFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let state: ServeState
    private let idle: IdleConnectionHandler
    /// Everything goes to NIO's parser from now on.
    private var passingOn = false
    /// The start of a request not yet whole.
    private var held: ByteBuffer?
    private var unflushed = false
    /// The last response head written, for the next request of the same file.
    private var lastHead: (name: String, etag: String, status: Int, second: Int, bytes: ByteBuffer)?
    private var date = (second: 0, text: "")

    init(state: ServeState, idle: IdleConnectionHandler) {
        self.state = state
        self.idle = idle
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passingOn {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        if var start = held {
            held = nil
            start.writeImmutableBuffer(buffer)
            buffer = start
        }
        while buffer.readableBytes > 0 {
            let started = ContinuousClock.now
            switch buffer.withUnsafeReadableBytes(PlainFeedRequest.read) {
            case .incomplete:
                held = buffer
                return
            case .unusual:
                passOn(buffer, context: context)
                return
            case .request(let request):
                guard let (name, answer) = buffer.withUnsafeReadableBytes({ self.answer(request, $0) }) else {
                    passOn(buffer, context: context)
                    return
                }
                buffer.moveReaderIndex(forwardBy: request.length)
                write(answer, name: name, context: context)
                idle.noteActivity()
                state.metrics.observe(status: answer.status.code, duration: .now - started)
                state.metrics.countPlainAnswer()
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client will send no more: a request begun goes to NIO's parser, which answers it as
        // it would any truncated request.
        if case .inputClosed = event as? ChannelEvent, let start = held {
            held = nil
            passOn(start, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func passOn(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        passingOn = true
        context.fireChannelRead(wrapInboundOut(buffer))
    }

    /// The file's name and answer, or nil when Hummingbird is to answer.
    private func answer(_ request: PlainFeedRequest, _ bytes: UnsafeRawBufferPointer) -> (String, FeedAnswer)? {
        if request.hasAuthorization && state.canEdit { return nil }
        func text(_ range: Range<Int>?) -> String? { range.map { String(decoding: bytes[$0], as: UTF8.self) } }
        guard let name = FeedFastPath.fileName(target: text(request.target) ?? ""), let entry = state.feeds.loadedEntry(name) else { return nil }
        return (name, FeedAnswer(entry, acceptEncoding: text(request.acceptEncoding), ifNoneMatch: text(request.ifNoneMatch),
                                 ifModifiedSince: text(request.ifModifiedSince)))
    }

    private func write(_ answer: FeedAnswer, name: String, context: ChannelHandlerContext) {
        let now = Int(time(nil))
        let head: ByteBuffer
        if let last = lastHead, last.second == now, last.status == answer.status.code, last.etag == answer.etag, last.name == name {
            head = last.bytes
        } else {
            if now != date.second { date = (now, HTTPDate.format(Int64(now))) }
            head = Self.head(status: answer.status, fields: answer.responseFields(date: date.text), allocator: context.channel.allocator)
            lastHead = (name, answer.etag, answer.status.code, now, head)
        }
        context.write(wrapInboundOut(head), promise: nil)
        if let body = answer.body { context.write(wrapInboundOut(body), promise: nil) }
        unflushed = true
    }

    /// An HTTP/1.1 response head as NIO's `HTTPResponseEncoder` writes it: the status line, then
    /// each field as `Name: value`, in order.
    static func head(status: HTTPResponse.Status, fields: HTTPFields, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 1024)
        buffer.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        for field in fields {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        return buffer
    }
}

/// Closes a connection idle for `timeout` (or one whose request trickles in that slowly), as
/// Hummingbird's `HTTPConnectionStateHandler` does with an idle timeout, and also counting the
/// requests `PlainFeedFastPath` answers before the HTTP parser as activity (which that handler
/// never sees). A connection is not idle while a request it sent whole is being answered.
final class IdleConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var lastActivity = NIODeadline.now()
    private var requestsInProgress = 0
    private var readingRequest = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { schedule(at: .now() + timeout) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        schedule(at: lastActivity + timeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head:
            requestsInProgress += 1
            readingRequest = true
        case .body:
            break
        case .end:
            readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), requestsInProgress > 0 {
            requestsInProgress -= 1
            if requestsInProgress == 0 { noteActivity() }
        }
        context.write(data, promise: promise)
    }

    /// A request was answered (here or before the HTTP parser): the idle time starts again.
    func noteActivity() {
        lastActivity = .now()
        if timer == nil { schedule(at: lastActivity + timeout) }
    }

    private func schedule(at deadline: NIODeadline) {
        guard timer == nil, let context else { return }
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            expired()
        }
    }

    private func expired() {
        guard let context, context.channel.isActive else { return }
        // A request read whole and still being answered: its last write starts the time again.
        if !readingRequest && requestsInProgress > 0 { return }
        let deadline = lastActivity + timeout
        if NIODeadline.now() >= deadline { context.close(promise: nil) } else { schedule(at: deadline) }
    }
}
