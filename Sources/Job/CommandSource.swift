import Fetch
import Foundation
import Grabber
import ObjectGraph
import Primitives
import XMLTV
import XMLTVImport

/// A source's `"command"`: a grabber run without a shell, its standard output read as XMLTV.
public struct SourceCommand: Sendable, Equatable {
    /// The argument vector, as configured (the first names the command).
    public var arguments: [String]
    /// Where the command was found when the configuration was checked.
    public var executable: String
    /// The configuration file's folder: the command runs there.
    public var directory: String
    public var timeoutSeconds: Double
    public static let defaultTimeout = 3600.0

    /// The command line as one would type it, for messages.
    public var displayed: String {
        arguments.map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    /// Checks `arguments` of a configuration file: a command that cannot be started is a
    /// configuration error (78) found before anything runs, naming the command and the PATH searched.
    init(arguments: [String], timeoutSeconds: Double?, configFile: String, key: String,
         searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) throws {
        guard let name = arguments.first, !name.isEmpty else {
            throw JobError(.config, "\(configFile): key '\(key)': expected a command and its arguments, such as [\"tv_grab_uk_freeview\", \"--days\", \"7\"]")
        }
        let folder = URL(fileURLWithPath: configFile).deletingLastPathComponent().standardizedFileURL.path
        guard let executable = ExecutableLookup.locate(name, directory: folder, searchPath: searchPath) else {
            let where_ = name.contains("/") ? "(relative to \(folder))" : "in PATH \(searchPath ?? "(PATH is not set)")"
            throw JobError(.config, "\(configFile): key '\(key)': the command '\(name)' cannot be started: no executable file \(where_)")
        }
        if let timeoutSeconds, !(timeoutSeconds > 0 && timeoutSeconds <= 7 * 86400) {
            throw JobError(.config, "\(configFile): key '\(key)': expected \"timeoutSeconds\" to be a number of seconds above 0 and at most 604800 (a week)")
        }
        self.arguments = arguments
        self.executable = executable
        directory = folder
        self.timeoutSeconds = timeoutSeconds ?? Self.defaultTimeout
    }
}

extension ImportPipeline {
    /// A command source: the command runs while its output is merged; it fails closed like a
    /// download (exit 69, nothing of the source changed) when it exits non-zero, dies by a signal,
    /// outlives its time limit or prints something that is not a whole XMLTV document.
    func importCommand(_ source: SourceSpec, _ command: SourceCommand, beforeImport: () throws -> Void) -> SourceOutcome {
        func outcome(_ status: String, _ exit: ExitStatus, error: String? = nil, report: SourceImportReport? = nil) -> SourceOutcome {
            SourceOutcome(report: .init(name: source.name, status: status, error: error, report: report), exitStatus: exit)
        }
        let previousHash = options.force || priorityChanged(source) || rulesChanged(source) ? nil : ((try? FetchState.load(store, source: source.name)) ?? nil)?.contentHash
        let name = source.name
        let passOn: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("[\(name)] \(line)\n".utf8)) }
        let run: CommandRun
        do {
            run = try CommandRun(executable: command.executable, arguments: command.arguments, directory: command.directory,
                                 timeout: command.timeoutSeconds, errorLine: options.passCommandErrors ? passOn : nil, stopRequested: { StopSignal.requested })
        } catch {
            return outcome("failed", .unavailable, error: "command \(command.displayed): \(error)")
        }
        let meter = OutputMeter()
        var importOptions = self.importOptions(for: source)
        importOptions.reader.inputObserver = { bytes in
            let (read, merged) = meter.add(bytes)
            progress.show("\(name): \(read >> 20) MiB read from \(command.arguments[0]), \(merged) programmes merged")
        }
        importOptions.progress = { merged in meter.merged(merged) }

        // Inside the transaction, once the output is read: the command's verdict, then the hash.
        var ended: CommandRun.Outcome?
        struct CommandFailed: Error {}
        struct SameOutput: Error {}
        let stream = GuideStream(path: run.outputPath, name: "the output of \(command.displayed)")
        let result: Swift.Result<SourceImportReport, any Error>
        do {
            try beforeImport()
            result = .success(try importGuide(into: store, stream: stream, options: importOptions, dryRun: options.dryRun, overwritable: options.whitelists) {
                let end = run.finish()
                ended = end
                guard end.succeeded else { throw CommandFailed() }
                if meter.hash == previousHash { throw SameOutput() }
            })
        } catch {
            result = .failure(error)
        }
        // The import stopped early (bad output, a refused guard): the rest of the output is not wanted.
        let end = ended ?? run.abort()
        if !options.dryRun { try? CommandState.save(database: store.path, source: source.name, command: command, outcome: end) }
        JobLog.logger.debug("source \(name): command \(command.displayed): \(end.status) after \(String(format: "%.1f", end.duration)) s, \(meter.bytes) bytes read")

        switch result {
        case .success(let report):
            rememberSettings(of: source)
            if !options.dryRun {
                try? FetchState.save(store, source: source.name, url: "command: " + command.displayed, validators: HTTPValidators(), contentHash: meter.hash)
            }
            return outcome(report.changedAnything ? "applied" : "unchanged", .success, report: report)
        case .failure(let error):
            if error is SameOutput { return outcome("unchanged", .success) }
            // A command stopped by us (`abandoned`) did not fail: what stopped the import is the cause.
            if error is CommandFailed || (!end.succeeded && !end.abandoned) {
                return outcome("failed", .unavailable, error: "command \(command.displayed): \(end.summary)")
            }
            if let error = error as? ImportError, case .badInput(let reason) = error {
                // Output that is not a whole XMLTV document fails the source like a bad download.
                return outcome("failed", .unavailable, error: "command \(command.displayed) (\(end.status)) printed something that is not a whole XMLTV document: \(reason)"
                               + (end.errorTail.isEmpty ? "" : "; the last lines of its standard error:\n" + end.errorTail.map { "  " + $0 }.joined(separator: "\n")))
            }
            if let error = error as? ImportError { return outcome("failed", ExitStatus(error), error: "\(error)") }
            return outcome("failed", .cannotCreate, error: "\(error)")
        }
    }
}

/// What passed through a command's standard output: bytes, their content hash, and the
/// programmes merged so far (for the progress line). The reader's thread adds, the merge's reads.
final class OutputMeter: @unchecked Sendable {
    private let lock = NSLock()
    private var contentHash = ContentHash()
    private var count: Int64 = 0
    private var programmes = 0

    func add(_ bytes: UnsafeRawBufferPointer) -> (bytes: Int64, programmes: Int) {
        lock.withLock {
            contentHash.update(bytes)
            count += Int64(bytes.count)
            return (count, programmes)
        }
    }
    func merged(_ count: Int) { lock.withLock { programmes = count } }
    var bytes: Int64 { lock.withLock { count } }
    var hash: String { lock.withLock { contentHash.hex } }
}

/// Each command source's last run (exit status, duration), for `tvimport status`: a file beside
/// the database, as the run log is, so that a night whose output did not change writes nothing
/// to the database.
public enum CommandState {
    public struct Entry: Sendable, Codable, Equatable {
        public var command: String
        public var status: String
        public var succeeded: Bool
        public var durationSeconds: Double
        public var finished: Int64
    }

    public static func path(forDatabase database: String) -> String { database + ".commands" }

    static func save(database: String, source: String, command: SourceCommand, outcome: CommandRun.Outcome) throws {
        var all = load(database: database)
        all[source] = Entry(command: command.displayed, status: outcome.status, succeeded: outcome.succeeded,
                            durationSeconds: (outcome.duration * 1000).rounded() / 1000, finished: Int64(Date().timeIntervalSince1970))
        var text = JSONText(escapingSlashes: true)
        try text.append(encoding: all, pretty: true)
        try DurableFile.replace(path(forDatabase: database), with: text.bytes)
    }

    /// Source name -> its command's last run.
    public static func load(database: String) -> [String: Entry] {
        guard let data = FileManager.default.contents(atPath: path(forDatabase: database)) else { return [:] }
        return (try? JSONDecoder().decode([String: Entry].self, from: data)) ?? [:]
    }
}
