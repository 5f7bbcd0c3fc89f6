import Foundation
import Hummingbird
import Job
import Listings
import Logging
import NIOCore
import ObjectGraph
import Primitives

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
    /// Wrong tokens per client (LoginThrottle.swift).
    let logins = LoginThrottle()
    /// Channel logos and programme pictures, fetched once (Images.swift).
    let images = ImageCache()
    /// `/` as made in the current minute (GuidePages.swift).
    let gridCache = GridCache()
    /// The titles of what has not ended, read once a minute (UpcomingTitles.swift).
    let upcomingTitles = UpcomingTitles()

    init(options: ServeOptions) throws {
        // A blank token would make every candidate right; ServeOptions refuses one from the
        // config or the environment, and this keeps any other caller from opening the door.
        if let token = options.token, ServeOptions.isBlank(token) {
            throw JobError(.config, "serve.token: an empty or blank token would let anyone edit; set a token or leave the key out")
        }
        self.options = options
        try Self.checkFeedsDirectory(options)
        model = try StoreAccess.model(forDatabase: options.database, userModules: options.userModules)
        // Opened once for writing so that a database of an older model is migrated, as every
        // command does; served through a read-only connection after that.
        _ = try StoreAccess.open(path: options.database, model: model, mustExist: true)
        reads = try StoreReads(database: options.database, model: model)
        let metrics = ServeMetrics()
        self.metrics = metrics
        let maxAge = "public, max-age=\(options.feedMaxAgeSeconds)"
        feeds = FeedFiles(directory: options.feedsDirectory, onCompress: { metrics.countFeedCompression() }) { name, etag, lastModified in
            var headers: HTTPFields = [
                .contentType: name.hasSuffix(".ics") ? "text/calendar; charset=utf-8" : "text/html; charset=utf-8",
                .eTag: etag,
                .lastModified: lastModified,
                .cacheControl: name.hasSuffix(".ics") ? maxAge : "no-cache",
                .vary: "Accept-Encoding",
            ]
            SecurityHeaders.add(to: &headers)
            return headers
        }
        sessions = Sessions(token: options.token)
    }

    var canEdit: Bool { options.token != nil }

    /// A feed directory named by `--feeds` must exist (exit 66); the config's may not yet, before
    /// the first run, which is said once. A file where the directory should be is 66 either way.
    static func checkFeedsDirectory(_ options: ServeOptions) throws {
        var isDirectory: ObjCBool = false
        let path = options.feedsDirectory
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw JobError(.noInput, "serve: the feed directory \(path) is not a directory") }
        } else if options.feedsDirectoryNamed {
            throw JobError(.noInput, "serve: --feeds \(path): no such directory")
        } else {
            FileHandle.standardError.write(Data("tvimport serve: the feed directory \(path) does not exist yet: /feeds/ stays empty until a run writes it\n".utf8))
        }
    }

    /// 429 when `client` has used up its wrong tokens for now (LoginThrottle).
    func throttled(_ client: String) -> Response? {
        logins.retryAfter(client).map(Pages.tooManyAttempts)
    }
}

/// `tvimport serve`: builds the routes and runs the server until SIGTERM or SIGINT, which stop
/// accepting connections and let requests in flight finish (Hummingbird's graceful shutdown).
public enum ServeServer {
    /// The application, for `run` or for tests. `onRunning` gets the port bound.
    public static func application(options: ServeOptions, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        throws -> some ApplicationProtocol {
        let state = try ServeState(options: options)
        let router = Router(context: ServeRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: ResponseHeadersMiddleware(metrics: state.metrics))
        router.add(middleware: BearerThrottleMiddleware(state: state))
        Routes(state: state).register(on: router)
        var logger = Logger(label: "tvimport.serve")
        logger.logLevel = .notice
        return Application(
            router: router,
            server: .persistentHTTP1(idleTimeout: .seconds(options.idleTimeoutSeconds), state: state),
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "tvimport"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? options.port) },
            logger: logger)
    }

    /// Serves until stopped by a signal. An address that cannot be bound (a port in use, a port
    /// below 1024 without the right, a host that is not this machine's) is one line naming it,
    /// exit 69 (EX_UNAVAILABLE: the service cannot be offered there).
    public static func run(options: ServeOptions) async throws {
        let app = try application(options: options) { port in
            FileHandle.standardError.write(Data("tvimport serve: listening on http://\(options.host):\(port)/\(options.token == nil ? " (read-only: no token configured)" : "")\n".utf8))
        }
        do {
            try await app.runService()
        } catch let error as IOError {
            throw JobError(.unavailable, "serve: cannot listen on \(options.host):\(options.port): \(Self.reason(error.errnoCode))")
        } catch let error as SocketAddressError {
            throw JobError(.unavailable, "serve: cannot listen on \(options.host):\(options.port): \(error)")
        }
    }

    static func reason(_ code: Int32) -> String {
        switch code {
        case EADDRINUSE: "the port is in use (another server is listening there: stop it or choose another --port)"
        case EACCES: "permission denied (ports below 1024 need privileges: choose a port of 1024 or more)"
        case EADDRNOTAVAIL: "the address is not one of this machine's (--host)"
        default: String(cString: strerror(code))
        }
    }
}

/// Headers every response carries: a strict Content-Security-Policy (no inline script or style,
/// nothing from elsewhere), no sniffing, no framing; and the request metrics.
struct ResponseHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServeMetrics
    static var contentSecurityPolicy: String { SecurityHeaders.contentSecurityPolicyValue }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Pages.error(error.status, error.body ?? error.status.reasonPhrase)
        }
        // A feed's headers carry them already, made once per file (FeedFiles.ResponseHeaders).
        if !response.headers.contains(SecurityHeaders.contentSecurityPolicy) { SecurityHeaders.add(to: &response.headers) }
        metrics.observe(status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }
}

/// A bearer token is a sign-in on every request: a wrong one counts against the client's
/// attempts (LoginThrottle), and a client that has used them up gets 429 whatever it sends.
struct BearerThrottleMiddleware: RouterMiddleware {
    let state: ServeState

    func handle(_ request: Request, context: ServeRequestContext, next: (Request, ServeRequestContext) async throws -> Response) async throws -> Response {
        guard state.canEdit, let header = request.headers[.authorization] else { return try await next(request, context) }
        if let refusal = state.throttled(context.client) { return refusal }
        if !state.sessions.acceptsBearer(header) { state.logins.recordFailure(context.client) }
        return try await next(request, context)
    }
}

/// The names of the headers `ResponseHeadersMiddleware` adds, checked once (a generic type
/// cannot hold them as static constants).
enum SecurityHeaders {
    static let contentSecurityPolicy = HTTPFields.Element.Name("Content-Security-Policy")!
    static let contentTypeOptions = HTTPFields.Element.Name("X-Content-Type-Options")!
    static let frameOptions = HTTPFields.Element.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!

    /// A strict Content-Security-Policy (no inline script or style, nothing from elsewhere), no
    /// sniffing, no framing, the referrer kept to this site.
    static let contentSecurityPolicyValue =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// Sets the four headers (a response carrying the Content-Security-Policy is taken to carry all four).
    static func add(to headers: inout HTTPFields) {
        headers[contentSecurityPolicy] = contentSecurityPolicyValue
        headers[contentTypeOptions] = "nosniff"
        headers[frameOptions] = "DENY"
        headers[referrerPolicy] = "same-origin"
    }
}

/// Small response makers shared by the pages.
enum Pages {
    static func html(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// An error page; the message (which may quote what the client sent) shortened to 2,000 bytes.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        html(HTML.page(title: "\(status.code) \(status.reasonPhrase)", signedIn: false, tokenConfigured: false) { page in
            page.raw("<p class=\"error\">")
            page.text(HTMLText.shortened(message, to: 2000))
            page.raw("</p>")
        }, status: status)
    }

    /// 429 with Retry-After: too many wrong tokens from this client (LoginThrottle).
    static func tooManyAttempts(_ seconds: Int) -> Response {
        var response = error(.tooManyRequests, "Too many wrong tokens from your address: try again in \(seconds) s.")
        response.headers[.retryAfter] = String(seconds)
        return response
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

    func register(on router: Router<ServeRequestContext>) {
        router.get("/style.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: HTML.styleSheet)))
        }
        // The router takes /feeds and /feeds/ for one path; index.html's relative links need the slash.
        router.get("/feeds") { request, _ in request.uri.path.hasSuffix("/") ? try await feed(request) : Pages.redirect("/feeds/") }
        router.get("/feeds/**") { request, _ in try await feed(request) }
        let guide = GuidePages(state: state)
        router.get("/") { request, _ in try await guide.grid(request) }
        let programmes = ProgrammePages(state: state)
        router.get("/programmes/**") { request, _ in try await programmes.programme(request) }
        let shows = ShowPages(state: state, routes: self)
        router.get("/shows/:file") { request, _ in try await shows.show(request) }
        let images = ImagePages(state: state)
        router.get("/logos/**") { request, _ in try await images.logo(request) }
        router.get("/pictures/**") { request, _ in try await images.picture(request) }
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
        router.post("/login") { request, context in try await signIn(request, client: context.client) }
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
        RequestInput.rest(ofPath: request.uri.path[...], after: components)
    }

    // MARK: Feeds

    func feed(_ request: Request) async throws -> Response {
        guard let name = RequestInput.feedFileName(fromRawPath: Self.rest(of: request, after: 1)),
              let response = try await feedFile(name, request) else {
            return Pages.error(.notFound, "No such feed.")
        }
        return response
    }

    /// A file of the feed directory with its validators (304) and gzip (`FeedAnswer`); nil when
    /// it is not there. `/shows/SLUG.ics` answers through it too.
    func feedFile(_ name: String, _ request: Request) async throws -> Response? {
        guard let entry = try await state.feeds.entry(name) else { return nil }
        let answer = FeedAnswer(entry, acceptEncoding: request.headers[.acceptEncoding], ifNoneMatch: request.headers[.ifNoneMatch],
                                ifModifiedSince: request.headers[.ifModifiedSince])
        guard let body = answer.body else { return Response(status: answer.status, headers: answer.headers) }
        return Response(status: answer.status, headers: answer.headers, body: .init(byteBuffer: body))
    }

    // MARK: Sign in

    func login(_ request: Request, failed: Bool) -> Response {
        guard state.canEdit else { return Pages.error(.forbidden, "This server is read-only: no token is configured (serve.token or TVIMPORT_SERVE_TOKEN).") }
        return Pages.html(HTML.page(title: "Sign in", signedIn: false, tokenConfigured: true) { page in
            if failed { page.raw("<p class=\"error\">That token is not right.</p>") }
            page.raw("<form method=\"post\" action=\"/login\"><label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label><button>Sign in</button></form>")
        }, status: failed ? .unauthorized : .ok)
    }

    func signIn(_ request: Request, client: String) async throws -> Response {
        guard state.canEdit else { return login(request, failed: false) }
        if let refusal = state.throttled(client) { return refusal }
        let form = try await Self.form(request, limit: state.options.maxBodyBytes)
        guard let session = state.sessions.signIn(with: form["token"] ?? "") else {
            state.logins.recordFailure(client)
            return login(request, failed: true)
        }
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
