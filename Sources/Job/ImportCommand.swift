import Foundation
import Merge
import ObjectGraph
import XMLTV
import XMLTVImport

/// `tvimport import`: XMLTV files merged as one source, one transaction.
public struct ImportJob {
    public var database: String
    public var source: String?
    public var dryRun = false
    public var force = false
    public var json = false
    public var verbose = false
    /// Print nothing on success (a failure is still one line on stderr).
    public var quiet = false
    /// Write a change file (changes/<run-id>.json) after a real import.
    public var writeChangeFile = true
    /// Also write it as JSON Patch (changes/<run-id>.patch.json).
    public var writePatch = false
    public var files: [String]
    public var userModules: [ModelModule] = []
    /// Remembered for the source when given (`import --priority`).
    public var priority: Int?
    /// From `import --config`: source channel id → canonical id, and the merge's whitelists.
    public var channelAliases: [String: String] = [:]
    /// The config's timeshifted channels; nil without a config (they are left as they are).
    public var timeshifts: [TimeshiftRule]?
    public var whitelists: [String: Set<String>] = [:]
    /// The config given with `--config`: its modules are recorded like `run`'s, its change-file
    /// folder used, and its outputs (feeds, XMLTV file, bucket) follow the import.
    public var config: JobConfig?

    public init(database: String, files: [String]) {
        self.database = database
        self.files = files
    }

    /// The source name: given, or `default`. A file's name is not a source's name: dated file
    /// names would make a new source each night, and nothing would ever be deleted.
    public var sourceName: String { source ?? "default" }

    /// What the arguments name: `-` is standard input, an http(s) URL is fetched like a source of
    /// the config, anything else is read as it is.
    public var inputs: [SourceSpec.Input] {
        files.map { argument in
            if argument == "-" { return .file("/dev/stdin") }
            let lower = argument.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") { return .fetched(argument) }
            return .file(argument)
        }
    }

    /// Runs the import; returns what to print on stdout and the exit status.
    public func run() throws -> (output: String, status: ExitStatus) {
        for case .file(let file) in inputs {
            var isDirectory: ObjCBool = false
            // An input that cannot be read as a file, like a missing one (sysexits' EX_NOINPUT).
            if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
                throw JobError(.noInput, "\(file): a directory, not an XMLTV file")
            }
            guard FileManager.default.isReadableFile(atPath: file) else { throw JobError(.noInput, "\(file): no such file or not readable") }
        }
        try StoreAccess.refuseDirectory(database)
        // What a first import that changes nothing must not leave behind, the lock included.
        var created = NewFiles(beside: database, changes: config?.changesDirectory ?? ChangeFiles(database: database).directory)
        // One writer at a time, like `run`: a second one exits 75 at once rather than waiting on
        // SQLite and failing after its busy timeout.
        let lock = dryRun ? nil : try RunLock(path: database + ".lock")
        defer { lock?.release() }
        created.keepAllIfDatabaseExists()
        do {
            let (output, status, stored) = try importLocked()
            if dryRun || !stored { created.remove() }
            return (output, status)
        } catch {
            created.remove()
            throw error
        }
    }

    /// The import, under the lock; `stored` when the source's import was committed (applied, or
    /// unchanged: an empty guide given with --force makes an empty store, as asked).
    private func importLocked() throws -> (output: String, status: ExitStatus, stored: Bool) {
        let started = Int64(Date().timeIntervalSince1970)
        let model = try StoreAccess.model(forDatabase: database, userModules: userModules)
        let store = try StoreAccess.open(path: database, model: model)
        if !dryRun, let config { try StoreAccess.remember(modulesJSON: config.modulesJSON, in: store) }
        var options = PipelineOptions(cacheDirectory: database + ".cache")
        options.dryRun = dryRun
        options.force = force
        options.collectChanges = dryRun || json || verbose
        options.now = started
        options.channelAliases = channelAliases
        options.timeshifts = timeshifts ?? config.map { Array($0.timeshifts.values) }
        options.whitelists = whitelists
        let progress = Progress(quiet: quiet || json)
        try FetchState.prepare(store)
        let prioritiesBefore = (try? SourcePriorities.all(in: store)) ?? [:]
        var report = RunReport(dryRun: dryRun)
        var recording: ChangeFiles.Recording?
        var spec = SourceSpec(name: sourceName, inputs: inputs)
        spec.priority = priority
        let outcome = ImportPipeline(store: store, options: options, progress: progress)
            .importSource(spec) {
                // Recorded from the store's own change stream, from the first write of the import on.
                if !dryRun && writeChangeFile && recording == nil {
                    let files = config.map { ChangeFiles(directory: $0.changesDirectory) } ?? ChangeFiles(database: database)
                    recording = try files.startRecording(store, runID: ChangeFiles.runID(started), writesPatch: writePatch)
                }
            }
        progress.clear()
        report.sources.append(outcome.report)
        var status = outcome.exitStatus
        var changeFile: String?
        if let recording {
            changeFile = try? recording.finish()
            if let changeFile {
                try? ChangeRegister.record(path: changeFile, in: store, prioritiesBefore: prioritiesBefore, kind: .importing,
                                           about: "the import of source \(sourceName)" + report.countsInWords)
            }
        }
        if !dryRun {
            try? RunLog.record(database: database, started: started, command: "import", dryRun: dryRun, exitCode: status.rawValue,
                               outcome: report.sources.map { "\($0.name): \($0.status)\($0.error.map { " (\($0))" } ?? "")" }.joined(separator: "; "))
        }
        var outputLines: [String] = []
        if !dryRun, outcome.status == "applied", let outputs = config ?? LastRunOutputs.config(forDatabase: database) {
            let refreshed = DerivedOutputs.refresh(config: outputs, database: database, now: started)
            outputLines = refreshed.lines
            if status == .success { status = refreshed.status }
        }
        if quiet {
            // Cron mails whatever is printed: a failure is one line on stderr, success nothing.
            for s in report.sources where s.status == "failed" { JobLog.failure("source \(s.name): \(s.error ?? "failed")") }
            return ("", status, ["applied", "unchanged"].contains(outcome.status))
        }
        let output = try store.read { context in
            json ? report.json(model: model, context: context)
                 : report.text(showChanges: dryRun || verbose, context: context, listWarnings: verbose)
                   + outputLines.map { "\n" + $0 }.joined() + (changeFile.map { "\nchanges: \($0)" } ?? "")
        }
        return (output, status, ["applied", "unchanged"].contains(outcome.status))
    }
}
