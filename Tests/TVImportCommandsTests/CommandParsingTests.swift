import ArgumentParser
import CommandLineOptions
import Job
import TestSupport
import Testing
import TVImportCommands

/// Every command's flags, defaults, conflicts and bad values, parsed in process as
/// swift-argument-parser tests its own commands (Tests/TestSupport/ParseAssertions.swift says why
/// the checks are written here). The binary's own behaviour (exit codes, output) stays with the
/// end-to-end tests in JobTests.
@Suite struct CommandParsingTests {
    // MARK: run, the default command

    @Test func noArgumentsIsTonightsRunWithItsDefaults() {
        expectParse(TVImport.self, [], as: TVImport.Run.self) { run in
            #expect(run.config == nil)
            #expect(run.flags.jobFlags == JobFlags())
            #expect(!run.wait)
            #expect(run.logFormat == .text)
        }
    }

    @Test func flagsWithoutACommandAreRunsFlags() {
        expectParse(TVImport.self, ["--dry-run", "--format", "json"], as: TVImport.Run.self) { run in
            #expect(run.flags.jobFlags == JobFlags(dryRun: true, json: true))
        }
    }

    @Test func runTakesEveryFlag() {
        expectParse(TVImport.self, ["run", "--config", "/etc/tvimport/config.json", "--dry-run", "--format", "json", "--force",
                                    "--quiet", "--wait", "--log-format", "json"], as: TVImport.Run.self) { run in
            #expect(run.config == "/etc/tvimport/config.json")
            #expect(run.flags.jobFlags == JobFlags(dryRun: true, force: true, json: true, quiet: true))
            #expect(run.wait)
            #expect(run.logFormat == .json)
        }
        expectParse(TVImport.self, ["run", "--verbose"], as: TVImport.Run.self) { run in
            #expect(run.flags.jobFlags == JobFlags(verbose: true))
        }
    }

    @Test func runRefusesConflictsAndBadValues() {
        expectParseError(TVImport.self, ["run", "--quiet", "--verbose"], message: "--quiet and --verbose exclude each other")
        expectParseError(TVImport.self, ["--quiet", "--verbose"], message: "--quiet and --verbose exclude each other")
        expectParseError(TVImport.self, ["run", "--format", "xml"],
                         message: "The value 'xml' is invalid for '--format <format>'. Please provide one of 'text' and 'json'.")
        expectParseError(TVImport.self, ["run", "--log-format", "yaml"],
                         message: "The value 'yaml' is invalid for '--log-format <log-format>'. Please provide one of 'text' and 'json'.")
        expectParseError(TVImport.self, ["run", "extra"], message: "Unexpected argument 'extra'")
        expectParseError(TVImport.self, ["run", "--config"], message: "Missing value for '--config <config>'")
    }

    // MARK: import

    @Test func importDefaults() {
        expectParse(TVImport.self, ["import", "guide.xml"], as: TVImport.Import.self) { command in
            #expect(command.files == ["guide.xml"])
            #expect(command.database.db == nil)
            #expect(command.source == nil)
            #expect(command.priority == nil)
            #expect(command.configuration.config == nil)
            #expect(command.flags.jobFlags == JobFlags())
            #expect(command.changeFile)
            #expect(!command.patchFile)
        }
    }

    @Test func importTakesEveryOption() {
        expectParse(TVImport.self, ["import", "--db", "tv.sqlite", "--source", "uk", "--priority=-3", "--config", "c.json",
                                    "--dry-run", "--format", "json", "--force", "--verbose", "--no-change-file", "--patch-file",
                                    "a.xml", "-", "https://example.org/b.xml.gz"], as: TVImport.Import.self) { command in
            #expect(command.database.db == "tv.sqlite")
            #expect(command.source == "uk")
            #expect(command.priority == -3)
            #expect(command.configuration.config == "c.json")
            #expect(command.flags.jobFlags == JobFlags(dryRun: true, force: true, json: true, verbose: true))
            #expect(!command.changeFile)
            #expect(command.patchFile)
            #expect(command.files == ["a.xml", "-", "https://example.org/b.xml.gz"])
        }
        expectParse(TVImport.self, ["import", "--quiet", "--change-file", "a.xml"], as: TVImport.Import.self) { command in
            #expect(command.flags.jobFlags == JobFlags(quiet: true))
            #expect(command.changeFile)
        }
    }

    @Test func importRefusesConflictsAndBadValues() {
        expectParseError(TVImport.self, ["import"], message: "Missing expected argument '<files> ...'")
        expectParseError(TVImport.self, ["import", "--quiet", "--verbose", "a.xml"], message: "--quiet and --verbose exclude each other")
        expectParseError(TVImport.self, ["import", "--priority", "high", "a.xml"], message: "The value 'high' is invalid for '--priority <priority>'")
        expectParseError(TVImport.self, ["import", "--format", "csv", "a.xml"],
                         message: "The value 'csv' is invalid for '--format <format>'. Please provide one of 'text' and 'json'.")
        // A negative priority is written --priority=-3: after a space it reads as an option.
        expectParseError(TVImport.self, ["import", "--priority", "-3", "a.xml"], message: "Missing value for '--priority <priority>'")
        // ArgumentParser's own suggestion; the binary's main names the nearest option instead (aMistypedOptionIsNamed).
        expectParseError(TVImport.self, ["import", "--wait", "a.xml"], message: "Unknown option '--wait'. Did you mean '--quiet'?")
    }

    // MARK: edit

    @Test func editTakesAssignmentsAndUnsets() {
        expectParse(TVImport.self, ["edit", "Channel", "bbc1.uk", "hidden=true", "customName=BBC One"], as: TVImport.Edit.self) { edit in
            #expect(edit.entity == "Channel")
            #expect(edit.id == "bbc1.uk")
            #expect(edit.assignments == ["hidden=true", "customName=BBC One"])
            #expect(edit.unset.isEmpty)
            #expect(!edit.force)
            #expect(edit.database.db == nil && edit.configuration.config == nil)
        }
        expectParse(TVImport.self, ["edit", "--db", "tv.sqlite", "--config", "c.json", "--unset", "a", "--unset", "b", "--force",
                                    "Programme", "bbc1.uk/20261122030000 +0000"], as: TVImport.Edit.self) { edit in
            #expect(edit.unset == ["a", "b"])
            #expect(edit.force)
            #expect(edit.assignments.isEmpty)
            #expect(edit.id == "bbc1.uk/20261122030000 +0000")
            #expect(edit.database.db == "tv.sqlite" && edit.configuration.config == "c.json")
        }
    }

    @Test func editNeedsSomethingToChange() {
        expectParseError(TVImport.self, ["edit", "Channel", "bbc1.uk"], message: "give at least one KEY=VALUE or --unset KEY")
        expectParseError(TVImport.self, ["edit", "Channel"], message: "Missing expected argument '<id>'")
        expectParseError(TVImport.self, ["edit"], message: "Missing expected argument '<entity>'")
    }

    // MARK: status, model, channels

    @Test func statusAndModelFormats() {
        expectParse(TVImport.self, ["status"], as: TVImport.Status.self) { status in
            #expect(status.format == .text && status.database.db == nil && status.configuration.config == nil)
        }
        expectParse(TVImport.self, ["status", "--format", "json", "--db", "tv.sqlite"], as: TVImport.Status.self) { status in
            #expect(status.format == .json && status.database.db == "tv.sqlite")
        }
        expectParse(TVImport.self, ["model"], as: TVImport.Model.self) { model in
            #expect(model.format == .text && model.config == nil)
        }
        expectParse(TVImport.self, ["model", "--config", "c.json", "--format", "json"], as: TVImport.Model.self) { model in
            #expect(model.format == .json && model.config == "c.json")
        }
        expectParseError(TVImport.self, ["status", "--format", "csv"],
                         message: "The value 'csv' is invalid for '--format <format>'. Please provide one of 'text' and 'json'.")
        expectParseError(TVImport.self, ["model", "--db", "tv.sqlite"], message: "Unknown option '--db'")
    }

    @Test func channelsOptions() {
        expectParse(TVImport.self, ["channels"], as: TVImport.Channels.self) { channels in
            #expect(channels.source == nil && !channels.unmapped && channels.playlist == nil && channels.format == .text)
        }
        expectParse(TVImport.self, ["channels", "--db", "tv.sqlite", "--source", "uk", "--unmapped", "--playlist", "kodi.m3u",
                                    "--format", "json"], as: TVImport.Channels.self) { channels in
            #expect(channels.database.db == "tv.sqlite" && channels.source == "uk" && channels.unmapped)
            #expect(channels.playlist == "kodi.m3u" && channels.format == .json)
        }
        expectParseError(TVImport.self, ["channels", "--format", "xml"],
                         message: "The value 'xml' is invalid for '--format <format>'. Please provide one of 'text' and 'json'.")
    }

    // MARK: export

    @Test func exportOptions() {
        expectParse(TVImport.self, ["export"], as: TVImport.Export.self) { export in
            #expect(export.out == nil && export.xmltv == nil && export.playlist == nil && export.config == nil && export.pastHours == nil)
        }
        expectParse(TVImport.self, ["export", "--db", "tv.sqlite", "--out", "/var/www/tv", "--xmltv", "guide.xml.gz",
                                    "--playlist", "kodi.m3u", "--config", "c.json", "--past-hours", "0"], as: TVImport.Export.self) { export in
            #expect(export.database.db == "tv.sqlite" && export.out == "/var/www/tv" && export.xmltv == "guide.xml.gz")
            #expect(export.playlist == "kodi.m3u" && export.config == "c.json" && export.pastHours == 0)
        }
    }

    @Test func exportRefusesANegativeOrNonNumericPast() {
        expectParseError(TVImport.self, ["export", "--past-hours=-1"], message: "--past-hours must be 0 or more")
        // A negative number after a space reads as an option: its value is missing.
        expectParseError(TVImport.self, ["export", "--past-hours", "-1"], message: "Missing value for '--past-hours <past-hours>'")
        expectParseError(TVImport.self, ["export", "--past-hours", "x"], message: "The value 'x' is invalid for '--past-hours <past-hours>'")
    }

    // MARK: publish, apply, changes, undo

    @Test func publishOptions() {
        expectParse(TVImport.self, ["publish"], as: TVImport.Publish.self) { publish in
            #expect(publish.config == nil && !publish.verify && !publish.dryRun && publish.logFormat == .text)
        }
        expectParse(TVImport.self, ["publish", "--config", "c.json", "--verify", "--dry-run", "--log-format", "json"],
                    as: TVImport.Publish.self) { publish in
            #expect(publish.config == "c.json" && publish.verify && publish.dryRun && publish.logFormat == .json)
        }
        expectParseError(TVImport.self, ["publish", "--log-format", "x"],
                         message: "The value 'x' is invalid for '--log-format <log-format>'. Please provide one of 'text' and 'json'.")
    }

    @Test func applyChangesAndUndo() {
        expectParse(TVImport.self, ["apply", "--db", "mirror.sqlite", "--dry-run", "changes/20261122T030000Z.json"], as: TVImport.Apply.self) { apply in
            #expect(apply.database.db == "mirror.sqlite" && apply.dryRun && apply.file == "changes/20261122T030000Z.json")
        }
        expectParse(TVImport.self, ["apply", "f.json"], as: TVImport.Apply.self) { apply in #expect(!apply.dryRun) }
        expectParseError(TVImport.self, ["apply"], message: "Missing expected argument '<file>'")

        expectParse(TVImport.self, ["changes", "--patch", "20261122T030000Z-001"], as: TVImport.Changes.self) { changes in
            #expect(changes.runID == "20261122T030000Z-001" && changes.changes == nil)
        }
        expectParse(TVImport.self, ["changes", "--changes", "/srv/changes", "--patch", "r"], as: TVImport.Changes.self) { changes in
            #expect(changes.changes == "/srv/changes" && changes.runID == "r")
        }
        expectParseError(TVImport.self, ["changes"], message: "Missing expected argument '--patch <patch>'")

        expectParse(TVImport.self, ["undo", "--db", "tv.sqlite", "--config", "c.json"], as: TVImport.Undo.self) { undo in
            #expect(undo.database.db == "tv.sqlite" && undo.configuration.config == "c.json")
        }
        expectParseError(TVImport.self, ["undo", "--dry-run"], message: "Unknown option '--dry-run'")
    }

    // MARK: serve

    @Test func serveOptionsAreTVImportServes() {
        expectParse(TVImport.self, ["serve"], as: TVImport.Serve.self) { serve in
            let a = serve.arguments
            #expect(a.config == nil && a.database.db == nil && a.feeds == nil && a.host == nil && a.port == nil)
        }
        expectParse(TVImport.self, ["serve", "--config", "c.json", "--db", "tv.sqlite", "--feeds", "/var/www/tv", "--host", "0.0.0.0",
                                    "--port", "0"], as: TVImport.Serve.self) { serve in
            let a = serve.arguments
            #expect(a.config == "c.json" && a.database.db == "tv.sqlite" && a.feeds == "/var/www/tv" && a.host == "0.0.0.0" && a.port == 0)
        }
        // The same group alone, as tvimport-serve parses it.
        expectParse(ServeArguments.self, ["--port", "65535"]) { #expect($0.port == 65535) }
        expectParseError(TVImport.self, ["serve", "--port", "65536"], message: "--port must be from 0 to 65535")
        expectParseError(TVImport.self, ["serve", "--port", "x"], message: "The value 'x' is invalid for '--port <port>'")
    }

    // MARK: what main adds to the parser

    @Test func aMistypedCommandIsNamed() {
        let known = "(commands: run, import, export, channels, publish, edit, status, model, apply, undo, changes, serve, help)"
        #expect(TVImport.commandMistake(in: ["imprt", "a.xml"]) == "unknown command 'imprt': did you mean 'import'? \(known)")
        #expect(TVImport.commandMistake(in: ["help", "imprt"]) == "no command 'imprt': did you mean 'import'? \(known)")
        #expect(TVImport.commandMistake(in: ["import", "a.xml"]) == nil)
        #expect(TVImport.commandMistake(in: ["--dry-run"]) == nil)
        #expect(TVImport.commandMistake(in: ["help", "export"]) == nil)
        #expect(TVImport.commandMistake(in: []) == nil)
    }

    @Test func aMistypedOptionIsNamed() throws {
        for (arguments, message) in [(["run", "--verison"], "unknown option '--verison': did you mean --version?"),
                                     (["--verison"], "unknown option '--verison': did you mean --version?"),
                                     (["import", "--dry-rn", "a.xml"], "unknown option '--dry-rn': did you mean --dry-run?")] {
            let error = try #require(throws: (any Error).self) { try TVImport.parseAsRoot(arguments) }
            #expect(TVImport.optionSuggestion(for: error, arguments: arguments) == message)
        }
        // Nothing near: ArgumentParser's own message stands.
        let error = try #require(throws: (any Error).self) { try TVImport.parseAsRoot(["undo", "--dry-run"]) }
        #expect(TVImport.optionSuggestion(for: error, arguments: ["undo", "--dry-run"]) == nil)
    }

    // MARK: help and version

    @Test func versionAndHelpEndCleanly() throws {
        let version = try #require(cleanExit(TVImport.self, ["--version"]))
        #expect(version.exitCode == 0)
        #expect(version.output.hasPrefix("tvimport 0.5.0 ("))
        // --help parses as ArgumentParser's help command, which prints this.
        #expect(TVImport.helpMessage(for: TVImport.Import.self, columns: 200)
            .hasPrefix("OVERVIEW: Merge XMLTV files (plain or gzip) or URLs into the database as one source."))
    }

    @Test func statusHelp() {
        expectHelp(TVImport.self, for: TVImport.Status.self, equals: """
            OVERVIEW: Show what is stored and the last runs.

            Example:
              tvimport status --format json

            USAGE: tvimport status [--db <db>] [--config <config>] [--format <format>]

            OPTIONS:
              --db <db>               The SQLite database (default: the config's database,
                                      else $TVIMPORT_DB, else ./tvimport.sqlite).
              --config <config>       The configuration file (JSON): its database, outputs,
                                      modules, aliases and whitelists apply.
              --format <format>       Report format. (values: text, json; default: text)
              --version               Show the version.
              -h, --help              Show help information.

            """)
    }

    /// Every subcommand's help names each of its options, with the defaults the README promises.
    @Test func everyCommandsHelpListsItsOptions() {
        let expected: [(any ParsableCommand.Type, [String])] = [
            (TVImport.Run.self, ["--config <config>", "--dry-run", "--format <format>", "(values: text, json; default: text)", "--force",
                                 "--quiet", "--verbose", "--wait", "--log-format <log-format>"]),
            (TVImport.Import.self, ["--db <db>", "--source <source>", "--priority <priority>", "--config <config>", "--dry-run",
                                    "--change-file/--no-change-file", "(default: --change-file)", "--patch-file", "<files>"]),
            (TVImport.Export.self, ["--db <db>", "--out <out>", "--xmltv <xmltv>", "--playlist <playlist>", "--config <config>",
                                    "--past-hours <past-hours>"]),
            (TVImport.Channels.self, ["--db <db>", "--config <config>", "--source <source>", "--unmapped", "--playlist <playlist>",
                                      "--format <format>"]),
            (TVImport.Publish.self, ["--config <config>", "--verify", "--dry-run", "--log-format <log-format>"]),
            (TVImport.Edit.self, ["--db <db>", "--config <config>", "--unset <unset>", "--force", "<entity>", "<id>", "<assignments>"]),
            (TVImport.Status.self, ["--db <db>", "--config <config>", "--format <format>"]),
            (TVImport.Model.self, ["--config <config>", "--format <format>"]),
            (TVImport.Apply.self, ["--db <db>", "--config <config>", "--dry-run", "<file>"]),
            (TVImport.Undo.self, ["--db <db>", "--config <config>"]),
            (TVImport.Changes.self, ["--db <db>", "--config <config>", "--changes <changes>", "--patch <patch>"]),
            (TVImport.Serve.self, ["--config <config>", "--db <db>", "--feeds <feeds>", "--host <host>", "--port <port>"]),
        ]
        #expect(Set(expected.map { "\($0.0)" }) == Set(TVImport.configuration.subcommands.map { "\($0)" }), "a command without a help check")
        for (command, options) in expected {
            let help = TVImport.helpMessage(for: command, columns: 200)
            for option in options { #expect(help.contains(option), "tvimport \(command) --help does not show \(option)") }
        }
    }
}
