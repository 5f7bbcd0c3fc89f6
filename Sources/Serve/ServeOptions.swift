import Job
import ObjectGraph

/// What `tvimport serve` serves and how (README "Serving").
public struct ServeOptions: Sendable {
    /// The SQLite database, read through a read-only connection of its own.
    public var database: String
    /// The feed directory (`run`'s output): the only files `/feeds/` hands out.
    public var feedsDirectory: String
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests); the one bound is passed to `onRunning`.
    public var port = 8080
    /// Edits are allowed only with this token; nil keeps the server read-only.
    public var token: String?
    /// How long clients may cache a feed (the config's `feeds.refreshHours`).
    public var refreshHours = 12
    /// The config's model modules (else those the database remembers).
    public var userModules: [ModelModule] = []
    /// The config's whitelists: attributes in them are written by imports, so not editable.
    public var whitelists: [String: Set<String>] = [:]
    /// `/healthz` is 200 only when the last run succeeded less than this long ago (the same 26 h
    /// as the container's health check, Schedules/healthcheck).
    public var healthMaxAgeSeconds: Int64 = 26 * 3600
    /// Largest request body accepted (a form); larger ones get 413.
    public var maxBodyBytes = 256 * 1024
    /// A connection idle (or a request trickling in) for longer is closed.
    public var idleTimeoutSeconds: Int64 = 30

    public init(database: String, feedsDirectory: String) {
        self.database = database
        self.feedsDirectory = feedsDirectory
    }

    /// The options of a config file (its database, output, refresh interval, modules and
    /// `serve` key), the token from `TVIMPORT_SERVE_TOKEN` winning over the file's.
    public init(config: JobConfig, environment: [String: String]) {
        self.init(database: config.database, feedsDirectory: config.output)
        refreshHours = config.refreshHours
        userModules = config.modules
        whitelists = config.whitelists
        token = config.serveToken
        if let host = config.serveHost { self.host = host }
        if let port = config.servePort { self.port = port }
        if let fromEnvironment = environment["TVIMPORT_SERVE_TOKEN"], !fromEnvironment.isEmpty { token = fromEnvironment }
    }
}
