import Foundation
import ObjectGraph

/// What `import` and `run` both do around their imports, written once: one writer at a time (the
/// lock beside the database), the store opened with the side tables the pipeline needs, the change
/// file recorded from the first write on, the run log, and the report as the flags ask for it.
///
/// ```swift
/// let result = try RunEnvelope.enclose(plan) { envelope in
///     let outcome = pipeline.importSource(spec, beforeImport: envelope.startRecording)
///     envelope.report.sources.append(outcome.report)
///     let changeFile = envelope.finishRecording(kind: .importing) { "the import of source uk" }
///     envelope.log(status: outcome.exitStatus, outcome: "uk: \(outcome.status)")
///     return (try envelope.output(notes: changeFile.map { ["changes: \($0)"] } ?? []), outcome.exitStatus, true)
/// }
/// ```
final class RunEnvelope {
    /// What differs between the commands that use the envelope.
    struct Plan {
        /// The command as the run log names it: `import` or `run`.
        var command: String
        var database: String
        var flags: JobFlags
        /// When the run started: its change file's run id and its run-log entry.
        var started: Int64
        /// The model the store is opened with.
        var model: () throws -> ObjectModel
        /// Where the change file goes, and whether one is written (never by a dry run).
        var changeFiles: ChangeFiles
        var writesChangeFile = true
        var writesPatch = false
        /// The config whose modules the database remembers (not by a dry run).
        var config: JobConfig?
        /// Wait for another run's lock instead of exiting 75 at once.
        var waitsForLock = false
        /// `run` locks even to preview; a dry `import` takes no lock.
        var previewTakesLock = true
        /// `import`: a first import that stores nothing (refused, previewed, failed) leaves no file
        /// behind, the lock and the database included.
        var removesNewFilesUnlessStored = false
    }

    let plan: Plan
    var flags: JobFlags { plan.flags }
    let model: ObjectModel
    let store: Store
    let progress: Progress
    var report: RunReport
    /// Every source's priority before the run, for the change file's inverse.
    private let prioritiesBefore: [String: Int]
    /// Whether the store held no object before the run: its undo empties the store.
    private let startedEmpty: Bool
    private var recording: ChangeFiles.Recording?

    private init(_ plan: Plan) throws {
        self.plan = plan
        model = try plan.model()
        store = try StoreAccess.open(path: plan.database, model: model)
        if !plan.flags.dryRun, let config = plan.config { try StoreAccess.remember(modulesJSON: config.modulesJSON, in: store) }
        try FetchState.prepare(store)
        prioritiesBefore = (try? SourcePriorities.all(in: store)) ?? [:]
        startedEmpty = (try? store.holdsNoObjects()) ?? false
        progress = Progress(quiet: !plan.flags.showsProgress)
        report = RunReport(dryRun: plan.flags.dryRun)
    }

    /// Runs `body` under the lock with the store open; `body` returns the output, the exit status
    /// and whether anything was stored. What it throws is the command's error.
    static func enclose(_ plan: Plan, _ body: (RunEnvelope) throws -> (output: String, status: ExitStatus, stored: Bool)) throws
        -> (output: String, status: ExitStatus)
    {
        var created = plan.removesNewFilesUnlessStored ? NewFiles(beside: plan.database, changes: plan.changeFiles.directory) : nil
        // A second writer exits 75 at once rather than waiting on SQLite and failing after its busy timeout.
        let lock = plan.flags.dryRun && !plan.previewTakesLock ? nil : try RunLock(path: plan.database + ".lock", wait: plan.waitsForLock)
        defer { lock?.release() }
        created?.keepAllIfDatabaseExists()
        do {
            let (output, status, stored) = try body(RunEnvelope(plan))
            if plan.flags.dryRun || !stored { created?.remove() }
            return (output, status)
        } catch {
            created?.remove()
            throw error
        }
    }

    /// Starts the change file, once, at the first write: the pipeline's `beforeImport`, and before
    /// any other change. A run that changes nothing (a night of 304s) writes none.
    func startRecording() throws {
        guard recording == nil, !flags.dryRun, plan.writesChangeFile else { return }
        recording = try plan.changeFiles.startRecording(store, runID: ChangeFiles.runID(plan.started), writesPatch: plan.writesPatch)
    }

    /// Ends the change file, if one was started and something changed, and registers it for `undo`;
    /// returns its path. A change file that cannot be written is logged: the run's data is stored.
    func finishRecording(kind: ChangeRegister.Kind, about: () -> String) -> String? {
        guard let recording else { return nil }
        do {
            guard let file = try recording.finish() else { return nil }
            try ChangeRegister.record(path: file, in: store, prioritiesBefore: prioritiesBefore, kind: kind, about: about(),
                                      madeOnEmptyStore: startedEmpty)
            return file
        } catch {
            JobLog.logger.error("could not write the change file: \(error)")
            return nil
        }
    }

    /// The run-log entry (`tvimport status`, the container's health check); none for a dry run.
    func log(status: ExitStatus, outcome: String) {
        guard !flags.dryRun else { return }
        try? RunLog.record(database: plan.database, started: plan.started, command: plan.command, dryRun: false,
                           exitCode: status.rawValue, outcome: outcome)
    }

    /// What to print on stdout: nothing with --quiet, the JSON report with --format json, else the
    /// text report followed by `notes` (exports, change file). Failed sources are named on stderr
    /// when stdout does not name them (--quiet) or is a document for programs (JSON report or log).
    func output(notes: [String]) throws -> String {
        for s in report.sources where s.status == "failed" && (flags.quiet || flags.json || JobLog.format == .json) {
            if JobLog.format == .json {
                JobLog.logger.error("source \(s.name): \(s.error ?? "failed")", metadata: ["source": "\(s.name)"])
            } else {
                JobLog.failure("source \(s.name): \(s.error ?? "failed")")
            }
        }
        // Cron mails whatever is printed: with --quiet success prints nothing.
        if flags.quiet { return "" }
        return try store.read { context in
            if flags.json { return report.json(model: model, context: context) }
            let text = report.text(showChanges: flags.showsChanges, context: context, listWarnings: flags.verbose)
            return ([text] + notes).joined(separator: "\n")
        }
    }
}
