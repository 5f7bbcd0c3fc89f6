import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Whether a connection outlives its request, as HTTP/1 says (RFC 9112, 9.3): an HTTP/1.0
/// request stays open only with `Connection: keep-alive`, and any request with a `close` option
/// (in any case, among other options) is the connection's last.
///
/// Hummingbird turns NIO's HTTP/1 heads into version-less HTTPTypes and closes a connection
/// only on a `Connection` header of exactly `close`: an HTTP/1.0 client was answered as
/// HTTP/1.1 and left open, `Connection: Close` ignored. This handler sits between NIO's decoder
/// and that conversion, where the version is still known: it writes the decision into the
/// request as `Connection: close` (which Hummingbird honours), answers with the request's
/// version and the matching `Connection` header, and closes the connection once the last
/// response is written.
final class ConnectionPersistenceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What each request read and not yet answered asked for, oldest first.
    private var pending: [(version: HTTPVersion, keepAlive: Bool)] = []
    /// The response being written closes the connection after its end.
    private var closeAfterResponse = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let keepAlive = head.isKeepAlive
        pending.append((head.version, keepAlive))
        if !keepAlive { head.headers.replaceOrAdd(name: "connection", value: "close") }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 || head.status == .switchingProtocols:
            guard !pending.isEmpty else { break }
            let request = pending.removeFirst()
            if request.version.major == 1 && request.version.minor == 0 {
                // Framed by Content-Length or by the close, never chunked (1.0 has no chunks).
                head.version = .http1_0
            }
            if request.keepAlive {
                if head.version.minor == 0 { head.headers.replaceOrAdd(name: "connection", value: "keep-alive") }
            } else {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                closeAfterResponse = true
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        case .end where closeAfterResponse:
            closeAfterResponse = false
            let written = promise ?? context.eventLoop.makePromise()
            context.writeAndFlush(data, promise: written)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }
}

/// Hummingbird's HTTP/1 channel with `PlainFeedFastPath` first (before NIO's request decoder),
/// `ConnectionPersistenceHandler` after the decoder, and `IdleConnectionHandler` then
/// `FeedFastPath` after Hummingbird's connection state, where requests reach the router.
/// Hummingbird's own idle timeout is off (`http1` is made without one): `IdleConnectionHandler`
/// keeps it, seeing the requests answered before the parser too.
struct PersistenceAwareHTTP1Channel: ServerChildChannel {
    let http1: HTTP1Channel
    let idleTimeout: TimeAmount
    let state: ServeState

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(ConnectionPersistenceHandler(), position: .after(decoder))
            let connectionState = try operations.handler(type: HTTPConnectionStateHandler.self)
            let idle = IdleConnectionHandler(timeout: idleTimeout)
            try operations.addHandler(idle, position: .after(connectionState))
            try operations.addHandler(FeedFastPath(state: state), position: .after(idle))
            try operations.addHandler(PlainFeedFastPath(state: state, idle: idle), position: .first)
            return value
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// `.http1(...)` with HTTP/1.0 and `Connection: close` honoured (ConnectionPersistenceHandler) and
    /// feed files answered on the event loop (PlainFeedFastPath, FeedFastPath).
    static func persistentHTTP1(idleTimeout: TimeAmount, state: ServeState) -> HTTPServerBuilder {
        .init { responder in
            PersistenceAwareHTTP1Channel(http1: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: nil)),
                                         idleTimeout: idleTimeout, state: state)
        }
    }
}
