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

    /// The config the server was started with: after an edit, an undo or a redo its outputs (the
    /// feeds, the XMLTV file, the bucket) are rewritten to match the database, as `run` would
    /// (`DerivedOutputs`), and its change-file folder is used.
    public var config: JobConfig?

    /// `--feeds` named the directory: it must exist (exit 66). The config's `output` or the
    /// default may not exist yet before the first run: the server starts and says so.
    public var feedsDirectoryNamed = false

    /// The options of a config file (its database, output, refresh interval, modules and
    /// `serve` key), the token from `TVIMPORT_SERVE_TOKEN` winning over the file's.
    /// A blank token in either is a configuration error (exit 78), never an open door.
    public init(config: JobConfig, environment: [String: String]) throws {
        self.init(database: config.database, feedsDirectory: config.output)
        self.config = config
        refreshHours = config.refreshHours
        userModules = config.modules
        whitelists = config.whitelists
        token = try Self.token(config: config.serveToken, environment: environment)
        if let host = config.serveHost { self.host = host }
        if let port = config.servePort { self.port = port }
    }

    /// The edit token: `TVIMPORT_SERVE_TOKEN` if set, else the config's `serve.token`, else none.
    /// One that is set but empty or only white space is refused, naming where it came from.
    public static func token(config: String?, environment: [String: String]) throws -> String? {
        if let fromEnvironment = environment["TVIMPORT_SERVE_TOKEN"] {
            guard !isBlank(fromEnvironment) else {
                throw JobError(.config, "TVIMPORT_SERVE_TOKEN is set but empty or blank: it would let anyone edit; set a token or unset the variable")
            }
            return fromEnvironment
        }
        if let config, isBlank(config) {
            throw JobError(.config, "serve.token is empty or blank: it would let anyone edit; set a token or leave the key out")
        }
        return config
    }

    /// Empty, or nothing but white space and control characters.
    public static func isBlank(_ token: String) -> Bool {
        token.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
    }

    /// `Cache-Control: max-age` of a feed: refreshHours, at most a year (no overflow however
    /// large the config's number).
    var feedMaxAgeSeconds: Int { min(max(refreshHours, 0), 24 * 366) * 3600 }
}
