import Foundation
import Merge
import ObjectGraph
import XMLTV
import XMLTVImport

/// `tvimport import`: XMLTV files merged as one source, one transaction.
public struct ImportJob {
    public var database: String
    public var source: String?
    /// Preview, force, report format and how much it says: `import`'s `ImportFlags`.
    public var flags = JobFlags()
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
        if let problem = TimeshiftRule.problem(withSourceName: sourceName) {
            throw JobError(.usage, "--source '\(sourceName)': expected \(problem)")
        }
        for case .file(let file) in inputs {
            var isDirectory: ObjCBool = false
            // An input that cannot be read as a file, like a missing one (sysexits' EX_NOINPUT).
            if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
                throw JobError(.noInput, "\(file): a directory, not an XMLTV file")
            }
            guard FileManager.default.isReadableFile(atPath: file) else { throw JobError(.noInput, "\(file): no such file or not readable") }
        }
        try StoreAccess.refuseDirectory(database)
        let (database, userModules) = (self.database, self.userModules)
        let plan = RunEnvelope.Plan(
            command: "import", database: database, flags: flags, started: Int64(Date().timeIntervalSince1970),
            model: { try StoreAccess.model(forDatabase: database, userModules: userModules) },
            changeFiles: config.map { ChangeFiles(directory: $0.changesDirectory) } ?? ChangeFiles(database: database),
            writesChangeFile: writeChangeFile, writesPatch: writePatch, config: config,
            // What a first import that changes nothing must not leave behind, the lock included.
            previewTakesLock: false, removesNewFilesUnlessStored: true)
        return try RunEnvelope.enclose(plan, importLocked)
    }

    /// The import, under the lock; `stored` when the source's import was committed (applied, or
    /// unchanged: an empty guide given with --force makes an empty store, as asked).
    private func importLocked(_ envelope: RunEnvelope) throws -> (output: String, status: ExitStatus, stored: Bool) {
        let started = envelope.plan.started
        var options = PipelineOptions(flags: flags, cacheDirectory: database + ".cache")
        options.now = started
        options.channelAliases = channelAliases
        options.timeshifts = timeshifts ?? config.map { Array($0.timeshifts.values) }
        options.whitelists = whitelists
        var spec = SourceSpec(name: sourceName, inputs: inputs)
        spec.priority = priority
        let outcome = ImportPipeline(store: envelope.store, options: options, progress: envelope.progress)
            .importSource(spec, beforeImport: envelope.startRecording)
        envelope.progress.clear()
        envelope.report.sources.append(outcome.report)
        var status = outcome.exitStatus
        let changeFile = envelope.finishRecording(kind: .importing) { "the import of source \(sourceName)" + envelope.report.countsInWords }
        envelope.log(status: status, outcome: envelope.report.sources.map { "\($0.name): \($0.status)\($0.error.map { " (\($0))" } ?? "")" }
                                                   .joined(separator: "; "))
        var notes: [String] = []
        if !flags.dryRun, outcome.status == "applied", let outputs = config ?? LastRunOutputs.config(forDatabase: database) {
            let refreshed = DerivedOutputs.refresh(config: outputs, database: database, now: started)
            notes = refreshed.lines
            if status == .success { status = refreshed.status }
        }
        if let changeFile { notes.append("changes: \(changeFile)") }
        return (try envelope.output(notes: notes), status, ["applied", "unchanged"].contains(outcome.status))
    }
}
