import Feeds
import Foundation
import ObjectGraph

/// What follows the database after a command changed the guide outside `run` (`undo`, `apply`,
/// `edit`, `import` with `--config`): the feeds, the XMLTV file and the bucket that the config
/// names, written as `run` writes them (unchanged files keep their bytes and mtime), so that
/// every output is consistent with the database when the command returns (docs/design.md#one-truth).
public enum DerivedOutputs {
    /// Rewrites `config`'s outputs from `database`; one line per output, and the status to
    /// return (`cannotCreate` when a file could not be written, the publish status otherwise).
    public static func refresh(config: JobConfig, database: String, now: Int64 = Int64(Date().timeIntervalSince1970)) -> (lines: [String], status: ExitStatus) {
        var lines: [String] = []
        var status = ExitStatus.success
        let store: Store
        do {
            let model = try StoreAccess.model(forDatabase: database, userModules: config.modules)
            store = try StoreAccess.open(path: database, model: model, mustExist: true)
        } catch {
            return (["outputs: not refreshed, the database could not be opened: \(error); they are stale until the next run"], .cannotCreate)
        }
        var feedsWritten = false
        do {
            var settings = config
            settings.database = database
            let exported = try settings.exporter(store: store, now: now).export()
            feedsWritten = true
            lines.append(exported.written.isEmpty && exported.removed.isEmpty
                         ? "feeds: nothing changed in \(config.output)/"
                         : "feeds: \(exported.written.count) written, \(exported.unchanged.count) unchanged, \(exported.removed.count) removed in \(config.output)/")
        } catch {
            status = .cannotCreate
            lines.append("feeds: stale, the export to \(config.output) failed: \(error)")
        }
        if let xmltv = config.xmltv {
            do {
                lines.append(try XMLTVExportStep.run(store: store, path: xmltv))
            } catch {
                if status == .success { status = .cannotCreate }
                lines.append("xmltv: \(xmltv) stale: \(error)")
            }
        }
        let playlists = PlaylistStep.runConfigured(store: store, config: config, now: now)
        lines += playlists.lines
        if status == .success { status = playlists.status }
        if feedsWritten, let published = PublishCommand.publish(config: config, feedDirectory: config.output) {
            lines.append(published.line)
            if status == .success { status = published.status }
        }
        return (lines, status)
    }
}

extension DerivedOutputs {
    /// A command's own output and status, followed by the refresh of `config`'s outputs when it
    /// succeeded: the config given, else the one the database's last `run` wrote its outputs with
    /// (`LastRunOutputs`); with neither, no output is named and none is stale.
    public static func following(_ output: String, _ status: ExitStatus, config: JobConfig?, database: String) -> (output: String, status: ExitStatus) {
        guard status == .success, let config = config ?? LastRunOutputs.config(forDatabase: database) else { return (output, status) }
        let refreshed = refresh(config: config, database: database)
        return (([output] + refreshed.lines).filter { !$0.isEmpty }.joined(separator: "\n"), refreshed.status)
    }
}

extension EditCommand {
    /// The edit as `tvimport edit` runs it under a config (or none): the config's modules and
    /// change directory, then the config's outputs brought up to date (`following`).
    public func run(under settings: JobConfig?) throws -> (output: String, status: ExitStatus) {
        var edit = self
        edit.userModules = settings?.modules ?? []
        edit.changesDirectory = settings?.changesDirectory
        let line = try edit.run()
        return DerivedOutputs.following(line, .success, config: settings, database: edit.database)
    }
}
