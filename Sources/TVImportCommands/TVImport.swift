import ArgumentParser
import CommandLineOptions
import Foundation
import Job

/// The command line (the table in README.md). Each command is a thin shell over the Job library:
/// parse the flags, call the job, print, exit with the documented code.
public struct TVImport: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "tvimport",
        abstract: "Import XMLTV TV listings into SQLite and publish iCalendar feeds.",
        discussion: """
            Run nightly from cron or a systemd timer. `tvimport` alone is `tvimport run`.

            Exit codes: 0 success, 64 usage, 65 bad input data (nothing changed), 66 input missing, 69 download failed, 73 output not writable, 75 locked by another run, 78 configuration.

            Examples:
              tvimport                       # tonight's run (bundled sample config when no --config)
              tvimport --dry-run             # what tonight's run would change; touches nothing
              tvimport import --db tv.sqlite guide.xml.gz
            """,
        version: BuildVersion.description,
        subcommands: [Run.self, Import.self, Export.self, Channels.self, Publish.self, Edit.self, Status.self, Model.self, Apply.self, Undo.self, Changes.self, Serve.self],
        defaultSubcommand: Run.self)

    /// A mistyped command would otherwise be read as `run` with stray arguments ("Unknown option
    /// '--db'"): name the command meant instead.
    public static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let message = commandMistake(in: arguments) {
            FileHandle.standardError.write(Data("tvimport: \(message)\n".utf8))
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            if let message = optionSuggestion(for: error, arguments: arguments) {
                FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }

    /// A first word that names no command and is no option ("unknown command 'imprt': did you mean
    /// 'import'?"), or `help` followed by such a word, which would print the general help and exit 0.
    public static func commandMistake(in arguments: [String]) -> String? {
        if let word = arguments.first, let message = CommandSuggestion.unknownCommandMessage(word, known: commandNames) {
            return message
        }
        if arguments.first == "help", let word = arguments.dropFirst().first {
            return CommandSuggestion.unknownCommandMessage(word, known: commandNames, asked: "no command")
        }
        return nil
    }

    /// "Unknown option '--verison'" with the option meant, taken from the help of the command
    /// the arguments name (`run`, the default, and the root's own `--version` and `--help`).
    public static func optionSuggestion(for error: Error, arguments: [String]) -> String? {
        let message = self.message(for: error)
        guard message.hasPrefix("Unknown option '"), let option = message.split(separator: "'").dropFirst().first else { return nil }
        let named = arguments.first.flatMap { word in configuration.subcommands.first { $0.configuration.commandName == word } }
        let help = helpMessage(for: named ?? Run.self) + " --version --help"
        return CommandSuggestion.unknownOptionMessage(String(option), help: help)
    }

    /// Every subcommand names itself (`commandName`): deriving a name from the type
    /// (`String(describing:)`) looked up protocol conformances on every start, a few percent of
    /// a medium guide's import (callgrind).
    static var commandNames: [String] {
        configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    }
}

public enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

extension LogFormat: ExpressibleByArgument {}

/// What `run` and `import` share: preview, report format, force and how much to say.
public struct ImportFlags: ParsableArguments {
    public init() {}

    @Flag(help: "Do everything up to the commit, print what would change, change nothing.") public var dryRun = false
    @Option(help: "Report format.") public var format: OutputFormat = .text
    @Flag(help: "Ignore HTTP validators and the safety guard.") public var force = false
    @Flag(help: "Print nothing on success; a failure is one line on stderr.") public var quiet = false
    @Flag(help: "List every change and every warning with its file and line.") public var verbose = false

    public func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
    }

    /// The flags as the job and its pipeline take them: made here once, used as they are from then on.
    public var jobFlags: JobFlags {
        JobFlags(dryRun: dryRun, force: force, json: format == .json, quiet: quiet, verbose: verbose)
    }
}

extension TVImport {
    public struct Import: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Merge XMLTV files (plain or gzip) or URLs into the database as one source.",
            discussion: """
                Several files are one import: read together, one merge, one transaction. `-` reads standard input. An http(s) URL is fetched like a source of the config (conditional GET, cache, fail closed).

                Example:
                  tvimport import --db tv.sqlite --source uk --dry-run --format json uk-guide.xml.gz
                """)

        @OptionGroup public var database: DatabaseOption
        @Option(help: "The source name (default: default).") public var source: String?
        @Option(help: "The source's priority where sources overlap (higher wins; remembered; default 0).") public var priority: Int?
        @OptionGroup public var configuration: ConfigOption
        @OptionGroup public var flags: ImportFlags
        @Flag(inversion: .prefixedNo, help: "Write a change file of this import (for apply and undo).")
        public var changeFile = true
        @Flag(help: "Also write the change file as JSON Patch (changes/<run-id>.patch.json).") public var patchFile = false
        @Argument(help: "XMLTV files, URLs, or - for standard input.") public var files: [String]

        public func run() throws {
            finish {
                let settings = try configuration.load()
                var job = ImportJob(database: database.resolved(config: settings), files: files)
                job.source = source
                job.flags = flags.jobFlags
                job.writeChangeFile = changeFile
                job.writePatch = patchFile
                job.priority = priority
                if let settings {
                    (job.channelAliases, job.whitelists, job.userModules) = (settings.channelAliases, settings.whitelists, settings.modules)
                    job.config = settings
                }
                return try job.run()
            }
        }
    }

    public struct Edit: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Set attributes of a stored object (local edits survive imports unless whitelisted).",
            discussion: """
                A programme's id is CHANNEL/START[/CLUMP], START as 20261122030000 +0000 or 2026-11-22T03:00:00Z. `KEY=` clears an attribute (or sets an empty text where the attribute must have a value); `--unset KEY` always clears it. Identity keys and derived attributes are refused; an attribute the next import overwrites (see `tvimport model`) needs --force.

                Example:
                  tvimport edit Channel bbc1.uk hidden=true customName="BBC One"
                """)

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption
        @Option(name: .customLong("unset"), help: "An attribute to clear (repeatable).") public var unset: [String] = []
        @Flag(help: "Also set attributes that the next import overwrites.") public var force = false
        @Argument(help: "The entity, for example Channel or Programme.") public var entity: String
        @Argument(help: "The object's identifier.") public var id: String
        @Argument(help: "KEY=VALUE assignments.") public var assignments: [String] = []

        public func validate() throws {
            if assignments.isEmpty && unset.isEmpty { throw ValidationError("give at least one KEY=VALUE or --unset KEY") }
        }

        public func run() throws {
            finish {
                let settings = try configuration.load()
                var edit = EditCommand(database: database.resolved(config: settings), entityName: entity, id: id)
                edit.assignments = assignments
                edit.unset = unset
                edit.force = force
                return try edit.run(under: settings)
            }
        }
    }

    public struct Status: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show what is stored and the last runs.",
            discussion: "Example:\n  tvimport status --format json")

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption
        @Option(help: "Report format.") public var format: OutputFormat = .text

        public func run() throws {
            finish { (try StatusCommand.run(database: database.resolved(config: try configuration.load()), json: format == .json), .success) }
        }
    }

    public struct Model: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "model",
            abstract: "Print the merged entity model: entities, keys, whitelists, delete rules and modules.",
            discussion: "Example:\n  tvimport model --format json")

        @Option(help: "A config file whose modules are added to the built-in ones.") public var config: String?
        @Option(help: "Output format.") public var format: OutputFormat = .text

        public func run() throws {
            finish {
                let modules = try config.map { try JobConfig.load(path: $0).modules } ?? []
                return (ModelCommand.render(try StoreAccess.model(userModules: modules), json: format == .json), .success)
            }
        }
    }

    public struct Run: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "The nightly job: fetch, parse, merge, export, report (the default command).",
            discussion: """
                Without --config, the bundled sample configuration imports a bundled sample guide (no network) into ./tvimport.sqlite and writes feeds to ./feeds/.

                Examples:
                  tvimport run --config /etc/tvimport/config.json --quiet
                  tvimport --dry-run --format json
                """)

        @Option(help: "The configuration file (JSON).") public var config: String?
        @OptionGroup public var flags: ImportFlags
        @Flag(help: "Wait for another run to finish instead of exiting 75.") public var wait = false
        @Option(help: "Log lines on stderr as text or JSON (for containers).") public var logFormat: LogFormat = .text

        public func run() throws {
            JobLog.bootstrap(format: logFormat)
            StopSignal.install()
            finish {
                let cfg = try config.map { try JobConfig.load(path: $0) } ?? JobConfig.bundledSample()
                if config == nil { try NightlyJob.checkSampleTarget(cfg) }
                var job = NightlyJob(config: cfg)
                job.flags = flags.jobFlags
                job.waitForLock = wait
                return try job.run()
            }
        }
    }

    public struct Export: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "(Re)write the iCalendar feeds and index.html, and/or the guide as one XMLTV file.",
            discussion: """
                Unchanged files keep their bytes and mtime. Without --config the feeds cover the past 24 hours (--past-hours) and everything ahead; a config adds filtered feeds, the base URL and its windows. The XMLTV file (gzip when its name ends in .gz) is the guide as shown (sources resolved, canonical ids): what Jellyfin, Kodi's IPTV Simple or tvheadend read. With --xmltv alone no feeds are written.

                Examples:
                  tvimport export --db tv.sqlite --out /var/www/tv --config /etc/tvimport/config.json
                  tvimport export --db tv.sqlite --xmltv /srv/media/guide.xml.gz
                  tvimport export --db tv.sqlite --xmltv /srv/media/kodi.xml --playlist /srv/media/kodi.m3u

                With --playlist the XMLTV file holds exactly the playlist's channels, in its order, each under the entry's tvg-id: an entry is matched by canonical id or alias, else by tvg-id or tvg-name equal to a display name (case, accents, spaces, punctuation, a bracketed note and a last HD, FHD, UHD or 4K ignored; a +1 never ignored); iptv-org's ID@FEED matches as ID, ID@PlusN is ID moved N hours when the guide has no channel of its own for it; tvg-shift moves the entry's times. Entries that match nothing are named on standard error with the nearest display names; the config's "fill" gives them, and the gaps of the others, placeholder programmes.
                """)

        @OptionGroup public var database: DatabaseOption
        @Option(help: "The output directory (default: the config's output, else ./feeds).") public var out: String?
        @Option(help: "The XMLTV file to write (gzip when it ends in .gz).") public var xmltv: String?
        @Option(help: "With --xmltv: write only this M3U playlist's channels, in its order, under its tvg-ids.") public var playlist: String?
        @Option(help: "A config file for filtered feeds, base URL and windows.") public var config: String?
        @Option(help: "How many hours of the past the feeds keep (default: the config's, else 24).") public var pastHours: Int?

        public func validate() throws {
            if let pastHours, pastHours < 0 { throw ValidationError("--past-hours must be 0 or more") }
        }

        public func run() throws {
            finish {
                let cfg = try config.map { try JobConfig.load(path: $0, requireSources: false) }
                var export = ExportCommand(database: database.resolved(config: cfg), output: out ?? (xmltv == nil ? cfg?.output ?? "feeds" : nil))
                export.config = cfg
                export.pastHours = pastHours
                export.xmltv = xmltv
                export.playlist = playlist
                let result = try export.run()
                for line in export.warnings { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                return result
            }
        }
    }

    public struct Channels: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "channels",
            abstract: "List every channel per source: display names, programmes, canonical id, winning source.",
            discussion: """
                Ids are canonical: the config's aliases are applied while reading. The winner is the source whose channel name and icon are shown: the highest priority that declares the channel (equal priorities: the first name).

                --unmapped lists source channels that no alias maps and whose display name matches a channel of another source under another id, with the alias line to add under "channels" in the config. Display names are compared normalised, as a playlist's entries are matched: case, accents, width, spaces, punctuation and bracketed notes ignored; "+1" (any +N) kept as a word of its own (a timeshift channel never matches its parent); last words HD, UHD, FHD, SD or 4K dropped ("BBC One HD" = "bbc one" = "BBC-One" = "BBC One (1080p)"; "BBC One +1" differs).

                Examples:
                  tvimport channels --db tv.sqlite --source uk
                  tvimport channels --db tv.sqlite --unmapped
                  tvimport channels --db tv.sqlite --playlist kodi.m3u

                --playlist shows each entry of an M3U playlist with the channel it matches and why (as export --playlist matches), or the nearest display names when it matches none.
                """)

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption
        @Option(help: "Only this source's channels.") public var source: String?
        @Flag(help: "Suggest aliases for channels that look like another source's.") public var unmapped = false
        @Option(help: "Show how each entry of this M3U playlist matches the guide's channels.") public var playlist: String?
        @Option(help: "Output format.") public var format: OutputFormat = .text

        public func run() throws {
            finish {
                let cfg = try configuration.load()
                if let playlist {
                    return (try ChannelsCommand.run(database: database.resolved(config: cfg), playlist: playlist, config: cfg, json: format == .json), .success)
                }
                return (try ChannelsCommand.run(database: database.resolved(config: cfg), source: source, unmapped: unmapped, json: format == .json), .success)
            }
        }
    }

    public struct Publish: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Upload what changed in the feeds to the config's object store (publish.s3).",
            discussion: """
                Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), never from the config file. `run` publishes after each export, `export` too when the config has publish.s3; this publishes now. Exit 69 when the store refuses or cannot be reached: the next run uploads whatever is missing.

                Example:
                  tvimport publish --config /etc/tvimport/config.json --verify
                """)

        @Option(help: "The configuration file (JSON) with publish.s3.") public var config: String?
        @Flag(help: "List the bucket and repair any difference with the local feeds.") public var verify = false
        @Flag(help: "Print what would be uploaded and deleted; touch nothing, remote included.") public var dryRun = false
        @Option(help: "Log lines on stderr as text or JSON (for containers).") public var logFormat: LogFormat = .text

        public func run() throws {
            JobLog.bootstrap(format: logFormat)
            finish { try PublishCommand.run(configPath: config, verify: verify, dryRun: dryRun) }
        }
    }

    public struct Apply: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "apply",
            abstract: "Apply a change file (from changes/ of another database) to this database.",
            discussion: """
                An object whose current values differ from the file's old values is a conflict: it is reported and left untouched (exit 65).

                Example:
                  tvimport apply --db mirror.sqlite changes/20261122T030000Z.json
                """)

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption
        @Flag(help: "Report what would be applied; change nothing.") public var dryRun = false
        @Argument(help: "The change file.") public var file: String

        public func run() throws {
            finish {
                let settings = try configuration.load()
                let path = database.resolved(config: settings)
                let (line, status) = try ApplyCommand.apply(database: path, file: file, dryRun: dryRun)
                return dryRun ? (line, status) : DerivedOutputs.following(line, status, config: settings, database: path)
            }
        }
    }

    public struct Changes: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "changes",
            abstract: "Print a change file as RFC 6902 JSON Patch.",
            discussion: """
                RUN is a run id (20261122T030000Z-001, or its first 16 characters for the newest of that second) in the database's changes/ folder, or a change file's path.

                Example:
                  tvimport changes --patch 20261122T030000Z-001 > patch.json
                """)

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption
        @Option(help: "The folder of change files (default: the config's, else changes/ beside the database).") public var changes: String?
        @Option(name: .customLong("patch"), help: "The run whose change file to print as JSON Patch.") public var runID: String

        public func run() throws {
            finish {
                let settings = try configuration.load()
                let files = changes.map { ChangeFiles(directory: $0) } ?? settings.map { ChangeFiles(directory: $0.changesDirectory) }
                    ?? ChangeFiles(database: database.resolved(config: settings))
                return (try files.patch(of: runID), .success)
            }
        }
    }

    public struct Undo: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(
            commandName: "undo",
            abstract: "Revert this database's newest change (an import, a run or an edit) by applying the inverse of its change file.",
            discussion: """
                All or nothing: if an object changed since (an apply, or an edit not recorded), the conflicts are listed, nothing changes and the exit status is 65. A second undo reverts the change before; with none left, exit 66. The feeds, the XMLTV file and the bucket that --config names (else those of the database's last run) are rewritten to match; the next run fetches and imports every source in full.

                Example:
                  tvimport undo --db tv.sqlite
                """)

        @OptionGroup public var database: DatabaseOption
        @OptionGroup public var configuration: ConfigOption

        public func run() throws {
            finish {
                let settings = try configuration.load()
                let path = database.resolved(config: settings)
                let (line, status) = try ApplyCommand.undo(database: path)
                return DerivedOutputs.following(line, status, config: settings, database: path)
            }
        }
    }

    public struct Serve: ParsableCommand {
        public init() {}

        public static let configuration = CommandConfiguration(commandName: "serve", abstract: ServeArguments.abstract, discussion: ServeArguments.discussion)

        // Parsed here for the help and the usage errors, then again by tvimport-serve.
        @OptionGroup public var arguments: ServeArguments

        public func run() throws {
            // Everything after the command word, as given: tvimport-serve parses the same options.
            ServeExec.run(arguments: Array(CommandLine.arguments.dropFirst().drop { $0 != "serve" }.dropFirst()))
        }
    }
}
