import ArgumentParser
import CommandLineOptions
import Foundation
import Job
import Serve

/// The server behind `tvimport serve`: tvimport parses the options, then execs this program with
/// them (same process, so SIGTERM and the exit status are this program's). It is a program of its
/// own so that the nightly commands do not load Hummingbird, NIO and Prometheus.
@main
struct TVImportServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tvimport-serve",
        abstract: ServeArguments.abstract,
        discussion: ServeArguments.discussion)

    @OptionGroup var arguments: ServeArguments

    func run() async throws {
        JobLog.bootstrap(format: .text)
        await finish(awaiting: {
            try await ServeServer.run(options: try options())
            return ("", .success)
        })
    }

    /// The config's serve settings, with the command line's options over them.
    func options() throws -> ServeOptions {
        let environment = ProcessInfo.processInfo.environment
        let cfg = try arguments.config.map { try JobConfig.load(path: $0, requireSources: false) }
        var options = try cfg.map { try ServeOptions(config: $0, environment: environment) }
            ?? ServeOptions(database: arguments.database.resolved(), feedsDirectory: environment["TVIMPORT_OUTPUT"] ?? "feeds")
        if cfg == nil { options.token = try ServeOptions.token(config: nil, environment: environment) }
        options.database = arguments.database.resolved(config: cfg)
        if let feeds = arguments.feeds {
            options.feedsDirectory = feeds
            options.feedsDirectoryNamed = true
        }
        if let host = arguments.host { options.host = host }
        if let port = arguments.port { options.port = port }
        return options
    }
}
