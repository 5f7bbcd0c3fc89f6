import ArgumentParser
import Foundation
import Job

/// The command line of the user contract (docs/design.md#user-contract, README). Each command is a thin shell over the Job library: parse the
/// flags, call the job, print, exit with the contract's code.
@main
struct TVImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tvimport",
        abstract: "Import XMLTV TV listings into SQLite and publish iCalendar feeds.",
        discussion: """
            Run nightly from cron or a systemd timer. `tvimport` alone is `tvimport run`.
            Exit codes: 0 success, 64 usage, 65 bad input data (nothing changed), 66 input missing,
            69 download failed, 73 output not writable, 75 locked by another run, 78 configuration.

            Examples:
              tvimport                       # tonight's run (bundled sample config when no --config)
              tvimport --dry-run             # what tonight's run would change; touches nothing
              tvimport import --db tv.sqlite guide.xml.gz
            """,
        subcommands: [Run.self, Import.self, Export.self, Edit.self, Status.self, Model.self, Apply.self, Undo.self],
        defaultSubcommand: Run.self)
}

/// Prints `text` (if any) and exits with the status; errors become one line on stderr.
func finish(_ body: () throws -> (output: String, status: ExitStatus)) -> Never {
    do {
        let (output, status) = try body()
        if !output.isEmpty { print(output) }
        exit(status.rawValue)
    } catch let error as JobError {
        JobLog.failure(error.message)
        exit(error.status.rawValue)
    } catch {
        JobLog.failure("\(error)")
        exit(ExitStatus.dataError.rawValue)
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

extension LogFormat: ExpressibleByArgument {}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge XMLTV files (plain or gzip) into the database as one source.",
        discussion: """
            Several files are one import: read together, one merge, one transaction.

            Example:
              tvimport import --db tv.sqlite --source uk --dry-run --format json uk-guide.xml.gz
            """)

    @Option(help: "The SQLite database (created if missing).") var db: String
    @Option(help: "The source name (default: the first file's base name without extensions).") var source: String?
    @Flag(help: "Do everything up to the commit, print what would change, change nothing.") var dryRun = false
    @Option(help: "Report format.") var format: OutputFormat = .text
    @Flag(help: "Apply even when the safety guard refuses.") var force = false
    @Flag(help: "List every change.") var verbose = false
    @Flag(inversion: .prefixedNo, help: "Write changes/<run-id>.json (the diff of this import, for apply and undo).")
    var changeFile = true
    @Argument(help: "XMLTV files.") var files: [String]

    func run() throws {
        finish {
            var job = ImportJob(database: db, files: files)
            job.source = source
            job.dryRun = dryRun
            job.force = force
            job.json = format == .json
            job.verbose = verbose
            job.writeChangeFile = changeFile
            return try job.run()
        }
    }
}

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set attributes of a stored object (local edits survive imports unless whitelisted).",
        discussion: """
            A programme's id is CHANNEL/START[/CLUMP], START as 20261122030000 +0000 or 2026-11-22T03:00:00Z.

            Example:
              tvimport edit --db tv.sqlite Channel bbc1.uk hidden=true customName="BBC One"
            """)

    @Option(help: "The SQLite database.") var db: String
    @Argument(help: "The entity, for example Channel or Programme.") var entity: String
    @Argument(help: "The object's identifier.") var id: String
    @Argument(help: "KEY=VALUE assignments.") var assignments: [String]

    func run() throws {
        finish { (try EditCommand.run(database: db, entityName: entity, id: id, assignments: assignments), .success) }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what is stored and the last runs.",
        discussion: "Example:\n  tvimport status --db tv.sqlite --format json")

    @Option(help: "The SQLite database.") var db: String
    @Option(help: "Report format.") var format: OutputFormat = .text

    func run() throws {
        finish { (try StatusCommand.run(database: db, json: format == .json), .success) }
    }
}

struct Model: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the merged entity model: entities, keys, whitelists, delete rules and modules.",
        discussion: "Example:\n  tvimport model --format json")

    @Option(help: "A config file whose modules are added to the built-in ones.") var config: String?
    @Option(help: "Output format.") var format: OutputFormat = .text

    func run() throws {
        finish {
            let modules = try config.map { try JobConfig.load(path: $0).modules } ?? []
            return (ModelCommand.render(try StoreAccess.model(userModules: modules), json: format == .json), .success)
        }
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The nightly job: fetch, parse, merge, export, report (the default command).",
        discussion: """
            Without --config, the bundled sample configuration imports a bundled sample guide (no
            network) into ./tvimport.sqlite and writes feeds to ./feeds/.

            Examples:
              tvimport run --config /etc/tvimport/config.json --quiet
              tvimport --dry-run --format json
            """)

    @Option(help: "The configuration file (JSON).") var config: String?
    @Flag(help: "Do everything up to the commit, print what would change, change nothing.") var dryRun = false
    @Option(help: "Report format.") var format: OutputFormat = .text
    @Flag(help: "Ignore HTTP validators and the safety guard.") var force = false
    @Flag(help: "Print nothing on success.") var quiet = false
    @Flag(help: "List every change.") var verbose = false
    @Flag(help: "Wait for another run to finish instead of exiting 75.") var wait = false
    @Option(help: "Log lines on stderr as text or JSON (for containers).") var logFormat: LogFormat = .text

    func run() throws {
        JobLog.bootstrap(format: logFormat)
        StopSignal.install()
        finish {
            let cfg = try config.map { try JobConfig.load(path: $0) } ?? JobConfig.bundledSample()
            var job = NightlyJob(config: cfg)
            job.dryRun = dryRun
            job.force = force
            job.json = format == .json
            job.quiet = quiet
            job.verbose = verbose
            job.waitForLock = wait
            return try job.run()
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "(Re)write the iCalendar feeds and index.html from the database.",
        discussion: "Unchanged feeds keep their bytes and mtime.\n\nExample:\n  tvimport export --db tv.sqlite --out /var/www/tv --config /etc/tvimport/config.json")

    @Option(help: "The SQLite database.") var db: String
    @Option(help: "The output directory.") var out: String
    @Option(help: "A config file for filtered feeds, base URL and windows.") var config: String?

    func run() throws {
        finish { try ExportCommand.run(database: db, output: out, configPath: config) }
    }
}

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a change file (from changes/ of another database) to this database.",
        discussion: """
            An object whose current values differ from the file's old values is a conflict: it is
            reported and left untouched (exit 65).

            Example:
              tvimport apply --db mirror.sqlite changes/20261122T030000Z.json
            """)

    @Option(help: "The database to change.") var db: String
    @Flag(help: "Report what would be applied; change nothing.") var dryRun = false
    @Argument(help: "The change file.") var file: String

    func run() throws {
        finish { try ApplyCommand.apply(database: db, file: file, dryRun: dryRun) }
    }
}

struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revert the last import by applying the inverse of its change file.",
        discussion: "Objects changed since (by a later import or an edit) are conflicts and stay as they are.\n\nExample:\n  tvimport undo --db tv.sqlite")

    @Option(help: "The database.") var db: String

    func run() throws {
        finish { try ApplyCommand.undo(database: db) }
    }
}
