import ArgumentParser
import Foundation
import Job

/// Prints `text` (if any) and exits with the status; errors become one line on stderr.
///
///     func run() throws {
///         finish { (try StatusCommand.run(database: path, json: false), .success) }
///     }
public func finish(_ body: () throws -> (output: String, status: ExitStatus)) -> Never {
    do {
        let (output, status) = try body()
        end(printing: output, status)
    } catch {
        end(reporting: error)
    }
}

/// `finish` for an async command (`tvimport-serve`): the same output, messages and exit statuses.
///
///     func run() async throws {
///         await finish(awaiting: { try await ServeServer.run(options: options); return ("", .success) })
///     }
public func finish(awaiting body: () async throws -> (output: String, status: ExitStatus)) async -> Never {
    do {
        let (output, status) = try await body()
        end(printing: output, status)
    } catch {
        end(reporting: error)
    }
}

private func end(printing output: String, _ status: ExitStatus) -> Never {
    if !output.isEmpty { print(output) }
    exit(status.rawValue)
}

private func end(reporting error: any Error) -> Never {
    if let error = error as? JobError ?? JobError(error) {
        JobLog.failure(error.message)
        exit(error.status.rawValue)
    }
    JobLog.failure("\(error)")
    exit(ExitStatus.dataError.rawValue)
}

/// `--db`, shared by every command that opens the database. Left out, it defaults as `run`'s does.
///
///     @OptionGroup var database: DatabaseOption
///     let path = database.resolved(config: config)
public struct DatabaseOption: ParsableArguments {
    @Option(help: "The SQLite database (default: the config's database, else $TVIMPORT_DB, else ./tvimport.sqlite).")
    public var db: String?

    public init() {}

    /// The database to use, given the config the command was handed (if any).
    public func resolved(config: JobConfig? = nil) -> String {
        db ?? config?.database ?? JobConfig.defaultDatabase()
    }
}

/// `--config`, shared by every command that reads or changes a database: the database, output
/// directory, XMLTV path, modules, aliases, whitelists and publish target then come from it, so
/// that a command never writes another database or forgets a module that the nightly run uses.
///
///     @OptionGroup var configuration: ConfigOption
///     let config = try configuration.load()
///     let path = database.resolved(config: config)
public struct ConfigOption: ParsableArguments {
    @Option(help: "The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.")
    public var config: String?

    public init() {}

    /// The configuration, when one was given (its sources are not required).
    public func load() throws -> JobConfig? {
        try config.map { try JobConfig.load(path: $0, requireSources: false) }
    }
}

/// The options of `tvimport serve`, parsed by tvimport (its help, its usage errors) and again by
/// tvimport-serve, which tvimport execs with the same arguments.
///
///     @OptionGroup var arguments: ServeArguments
public struct ServeArguments: ParsableArguments {
    /// What `tvimport serve --help` says, and `tvimport-serve --help` too.
    public static let abstract = "Serve the feeds, the guide and the model's pages over HTTP (127.0.0.1:8080)."
    public static let discussion = """
        Read-only unless a token is configured (the config's serve.token or TVIMPORT_SERVE_TOKEN); edits then need it. SIGTERM stops accepting connections and lets requests in flight finish.

        Example:
          tvimport serve --config /etc/tvimport/config.json --port 8080
        """

    @Option(help: "The configuration file (JSON): database, feed directory, refresh interval, modules, serve key.") public var config: String?
    @OptionGroup public var database: DatabaseOption
    @Option(help: "The feed directory (default: the config's output, else $TVIMPORT_OUTPUT, else ./feeds).") public var feeds: String?
    @Option(help: "The address to bind (default: 127.0.0.1).") public var host: String?
    @Option(help: "The port (default: 8080).") public var port: Int?

    public init() {}

    public func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535") }
    }
}
