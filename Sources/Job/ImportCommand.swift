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
    /// Write a change file (changes/<run-id>.json) after a real import.
    public var writeChangeFile = true
    public var files: [String]
    public var userModules: [ModelModule] = []

    public init(database: String, files: [String]) {
        self.database = database
        self.files = files
    }

    /// The source name: given, or the first file's base name without extensions.
    public var sourceName: String {
        if let source { return source }
        let base = (files.first ?? "guide").split(separator: "/").last.map(String.init) ?? "guide"
        return base.split(separator: ".").first.map(String.init) ?? base
    }

    /// Runs the import; returns what to print on stdout and the exit status.
    public func run() throws -> (output: String, status: ExitStatus) {
        for file in files where !FileManager.default.isReadableFile(atPath: file) {
            throw JobError(.noInput, "\(file): no such file or not readable")
        }
        // One writer at a time, like `run`: a second one exits 75 at once rather than waiting on
        // SQLite and failing after its busy timeout.
        let lock = dryRun ? nil : try RunLock(path: database + ".lock")
        defer { lock?.release() }
        let started = Int64(Date().timeIntervalSince1970)
        let model = try StoreAccess.model(forDatabase: database, userModules: userModules)
        let store = try StoreAccess.open(path: database, model: model)
        var options = ImportOptions(source: sourceName, force: force, collectChanges: dryRun || json || verbose)
        options.programmeInsertValues = ["changedAt": .date(started)]
        var report = RunReport(dryRun: dryRun)
        var status = ExitStatus.success
        let before = dryRun || !writeChangeFile ? nil : try ChangeFiles.takeBefore(of: store)
        do {
            let r = try importGuide(into: store, files: files, options: options, dryRun: dryRun)
            report.sources.append(.init(name: sourceName, status: r.changedAnything ? "applied" : "unchanged", error: nil, report: r))
        } catch let error as ImportError {
            status = ExitStatus(error)
            report.sources.append(.init(name: sourceName, status: "failed", error: "\(error)", report: nil))
        }
        var changeFile: String?
        if let before, report.sources.contains(where: { $0.status == "applied" }) {
            let touched = report.sources.reduce(into: Set<String>()) { $0.formUnion($1.report?.touchedChannelIDs ?? []) }
            changeFile = try? ChangeFiles(database: database).record(before: before, after: store, runID: ChangeFiles.runID(started),
                                                                     channels: touched)
        }
        if !dryRun {
            try? RunLog.record(database: database, started: started, command: "import", dryRun: dryRun, exitCode: status.rawValue,
                               outcome: report.sources.map { "\($0.name): \($0.status)\($0.error.map { " (\($0))" } ?? "")" }.joined(separator: "; "))
        }
        let output = try store.read { context in
            json ? report.json(model: model, context: context)
                 : report.text(showChanges: dryRun || verbose, context: context) + (changeFile.map { "\nchanges: \($0)" } ?? "")
        }
        return (output, status)
    }
}
