import ArgumentParser
import CommandLineOptions
import Foundation
import Job
import Serve

/// The server behind `tvimport serve`: tvimport parses the options, then execs this program with
/// them (same process, so SIGTERM and the exit status are this program's). It is a program of its
/// own so that the nightly commands do not load Hummingbird, NIO and Prometheus.
@main
struct TVImportServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tvimport-serve",
        abstract: ServeArguments.abstract,
        discussion: ServeArguments.discussion)

    @OptionGroup var arguments: ServeArguments

    func run() throws {
        JobLog.bootstrap(format: .text)
        finish {
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
            try ServeBlocking.run(options)
            return ("", .success)
        }
    }
}

/// Runs the async server from the synchronous command line until it stops.
enum ServeBlocking {
    final class Outcome: @unchecked Sendable { var error: (any Error)? }

    static func run(_ options: ServeOptions) throws {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await ServeServer.run(options: options) } catch { outcome.error = error }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }
}
