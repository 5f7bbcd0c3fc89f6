import Foundation
import Hummingbird
import Job
import Listings
import Logging
import ObjectGraph

/// What every request shares: the options, the merged model, the read-only store, the feed
/// files, the sessions and the metrics.
final class ServeState: Sendable {
    let options: ServeOptions
    let model: ObjectModel
    /// Read-only connections (WAL), used on NIO's thread pool (BlockingWork.swift): `run` writes
    /// beside them, and each read sees its last commit.
    let reads: StoreReads
    let feeds: FeedFiles
    let sessions: Sessions
    let metrics: ServeMetrics

    init(options: ServeOptions) throws {
        self.options = options
        model = try StoreAccess.model(forDatabase: options.database, userModules: options.userModules)
        // Opened once for writing so that a database of an older model is migrated, as every
        // command does; served through a read-only connection after that.
        _ = try StoreAccess.open(path: options.database, model: model, mustExist: true)
        reads = try StoreReads(database: options.database, model: model)
        let metrics = ServeMetrics()
        self.metrics = metrics
        feeds = FeedFiles(directory: options.feedsDirectory, onCompress: { metrics.countFeedCompression() })
        sessions = Sessions(token: options.token)
    }

    var canEdit: Bool { options.token != nil }
}

/// `tvimport serve`: builds the routes and runs the server until SIGTERM or SIGINT, which stop
/// accepting connections and let requests in flight finish (Hummingbird's graceful shutdown).
public enum ServeServer {
    /// The application, for `run` or for tests. `onRunning` gets the port bound.
    public static func application(options: ServeOptions, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        throws -> some ApplicationProtocol {
        let state = try ServeState(options: options)
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: ResponseHeadersMiddleware(metrics: state.metrics))
        Routes(state: state).register(on: router)
        var logger = Logger(label: "tvimport.serve")
        logger.logLevel = .notice
        return Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .seconds(options.idleTimeoutSeconds))),
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "tvimport"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? options.port) },
            logger: logger)
    }

    /// Serves until stopped by a signal.
    public static func run(options: ServeOptions) async throws {
        let app = try application(options: options) { port in
            FileHandle.standardError.write(Data("tvimport serve: listening on http://\(options.host):\(port)/\(options.token == nil ? " (read-only: no token configured)" : "")\n".utf8))
        }
        try await app.runService()
    }
}

/// Headers every response carries: a strict Content-Security-Policy (no inline script or style,
/// nothing from elsewhere), no sniffing, no framing; and the request metrics.
struct ResponseHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServeMetrics
    static var contentSecurityPolicy: String {
        "default-src 'none'; style-src 'self'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Pages.error(error.status, error.body ?? error.status.reasonPhrase)
        }
        response.headers[SecurityHeaders.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[SecurityHeaders.contentTypeOptions] = "nosniff"
        response.headers[SecurityHeaders.frameOptions] = "DENY"
        response.headers[SecurityHeaders.referrerPolicy] = "same-origin"
        metrics.observe(status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }
}

/// The names of the headers `ResponseHeadersMiddleware` adds, checked once (a generic type
/// cannot hold them as static constants).
enum SecurityHeaders {
    static let contentSecurityPolicy = HTTPFields.Element.Name("Content-Security-Policy")!
    static let contentTypeOptions = HTTPFields.Element.Name("X-Content-Type-Options")!
    static let frameOptions = HTTPFields.Element.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!
}

/// Small response makers shared by the pages.
enum Pages {
    static func html(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        html(HTML.page(title: "\(status.code) \(status.reasonPhrase)", signedIn: false, tokenConfigured: false) { page in
            page.raw("<p class=\"error\">")
            page.text(message)
            page.raw("</p>")
        }, status: status)
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok, type: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// The routes, each a method of its own.
struct Routes: Sendable {
    let state: ServeState

    func register(on router: Router<BasicRequestContext>) {
        router.get("/style.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: HTML.styleSheet)))
        }
        // The router takes /feeds and /feeds/ for one path; index.html's relative links need the slash.
        router.get("/feeds") { request, _ in request.uri.path.hasSuffix("/") ? try await feed(request) : Pages.redirect("/feeds/") }
        router.get("/feeds/**") { request, _ in try await feed(request) }
        let guide = GuidePages(state: state)
        router.get("/") { request, _ in try await guide.nowAndNext(request) }
        router.get("/channels/:id") { request, context in try await guide.channel(request, id: context.parameters.require("id")) }
        router.get("/search") { request, _ in try await guide.search(request) }
        let model = ModelPages(state: state)
        router.get("/model") { request, _ in model.index(request) }
        router.get("/model/:entity") { request, context in try await model.list(request, entityName: context.parameters.require("entity")) }
        router.get("/model/:entity/**") { request, context in
            try await model.detail(request, entityName: context.parameters.require("entity"), rawID: Self.rest(of: request, after: 2))
        }
        router.post("/model/:entity/**") { request, context in
            try await model.save(request, entityName: context.parameters.require("entity"), rawID: Self.rest(of: request, after: 2))
        }
        router.post("/undo") { request, _ in try await model.undoOrRedo(request, redo: false) }
        router.post("/redo") { request, _ in try await model.undoOrRedo(request, redo: true) }
        router.get("/login") { request, _ in login(request, failed: false) }
        router.post("/login") { request, _ in try await signIn(request) }
        router.post("/logout") { request, _ in
            state.sessions.signOut(request)
            var response = Pages.redirect("/")
            response.setCookie(Cookie(name: Sessions.cookieName, value: "", maxAge: 0, path: "/", secure: false, httpOnly: true, sameSite: .strict))
            return response
        }
        let operations = Operations(state: state)
        router.get("/healthz") { _, _ in try await operations.health() }
        router.get("/metrics") { _, _ in try await operations.metrics() }
    }

    /// The raw path after its first `components` segments (still percent-encoded):
    /// `/model/Channel/a%2Fb` after 2 is `a%2Fb`.
    static func rest(of request: Request, after components: Int) -> Substring {
        var path = request.uri.path[...]
        for _ in 0..<components {
            guard let slash = path.dropFirst().firstIndex(of: "/") else { return "" }
            path = path[slash...]
        }
        return path.dropFirst()
    }

    // MARK: Feeds

    func feed(_ request: Request) async throws -> Response {
        guard let name = FeedFiles.fileName(fromRawPath: Self.rest(of: request, after: 1)),
              let entry = try await state.feeds.entry(name) else {
            return Pages.error(.notFound, "No such feed.")
        }
        let acceptsGzip = request.headers[.acceptEncoding].map(Self.acceptsGzip) ?? false
        let gzip = acceptsGzip ? entry.gzipBody : nil
        let etag = gzip == nil ? entry.etag : entry.gzipETag
        var headers: HTTPFields = [
            .contentType: name.hasSuffix(".ics") ? "text/calendar; charset=utf-8" : "text/html; charset=utf-8",
            .eTag: etag,
            .lastModified: entry.lastModifiedText,
            .cacheControl: name.hasSuffix(".ics") ? "public, max-age=\(state.options.refreshHours * 3600)" : "no-cache",
            .vary: "Accept-Encoding",
        ]
        // If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
        if let match = request.headers[.ifNoneMatch] {
            if match == "*" || match.split(separator: ",").contains(where: { Self.sameTag($0, etag) }) {
                return Response(status: .notModified, headers: headers)
            }
        } else if let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.parse), entry.lastModified <= since {
            return Response(status: .notModified, headers: headers)
        }
        if gzip != nil { headers[.contentEncoding] = "gzip" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: gzip ?? entry.body))
    }

    /// A weak comparison of one If-None-Match member with our strong tag (RFC 9110, 8.8.3.2).
    static func sameTag(_ member: Substring, _ etag: String) -> Bool {
        var tag = member.drop { $0 == " " }
        while tag.last == " " { tag = tag.dropLast() }
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        return tag == etag
    }

    static func acceptsGzip(_ header: String) -> Bool {
        header.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == "gzip" else { return false }
            return !parts.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }

    // MARK: Sign in

    func login(_ request: Request, failed: Bool) -> Response {
        guard state.canEdit else { return Pages.error(.forbidden, "This server is read-only: no token is configured (serve.token or TVIMPORT_SERVE_TOKEN).") }
        return Pages.html(HTML.page(title: "Sign in", signedIn: false, tokenConfigured: true) { page in
            if failed { page.raw("<p class=\"error\">That token is not right.</p>") }
            page.raw("<form method=\"post\" action=\"/login\"><label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label><button>Sign in</button></form>")
        }, status: failed ? .unauthorized : .ok)
    }

    func signIn(_ request: Request) async throws -> Response {
        guard state.canEdit else { return login(request, failed: false) }
        let form = try await Self.form(request, limit: state.options.maxBodyBytes)
        guard let session = state.sessions.signIn(with: form["token"] ?? "") else { return login(request, failed: true) }
        var response = Pages.redirect("/")
        response.setCookie(Cookie(name: Sessions.cookieName, value: session.id, path: "/", secure: false, httpOnly: true, sameSite: .strict))
        return response
    }

    /// A form body, refused beyond `limit` bytes (413).
    static func form(_ request: Request, limit: Int) async throws -> FormData {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw HTTPError(.contentTooLarge, message: "The form is larger than \(limit) bytes.")
        }
        return FormData(String(buffer: buffer))
    }
}
