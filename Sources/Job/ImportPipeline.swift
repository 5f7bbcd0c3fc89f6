import Fetch
import Feeds
import Foundation
import ObjectGraph
import Primitives
import XMLTV
import XMLTVImport

/// One source as an import sees it: a name and where its guide comes from.
///
/// ```swift
/// let source = SourceSpec(name: "uk", inputs: [.fetched("https://example.org/uk.xml.gz")])
/// ```
public struct SourceSpec: Sendable {
    /// Where one part of a source's guide comes from.
    public enum Input: Sendable, Equatable {
        /// Through the fetcher: an http(s) or file URL or a path, with conditional GET, the cache
        /// of the last good download and the content hash that makes an identical guide `unchanged`.
        case fetched(String)
        /// Read as it is, once: a file, or a named pipe such as `/dev/stdin`.
        case file(String)
        /// The bundled sample guide, moved to today so that it always has a future.
        case bundledSample(String)
        /// A grabber's standard output, merged as it runs (the source's only input; CommandSource.swift).
        case command(SourceCommand)
    }

    public var name: String
    public var inputs: [Input]
    /// Seconds east of UTC that replace the zone the feed claims.
    public var timeOffset: Int?
    public var includeChannels: Set<String>?
    public var excludeChannels: Set<String> = []
    /// Higher wins where sources overlap; nil keeps the remembered one (else 0).
    public var priority: Int?

    public init(name: String, inputs: [Input]) {
        self.name = name
        self.inputs = inputs
    }
}

/// What every import of a run shares: the options `run` and `import` both take.
public struct PipelineOptions: Sendable {
    /// The command line's flags, as `run` and `import` parsed them.
    public var flags: JobFlags
    public var dryRun: Bool { flags.dryRun }
    public var force: Bool { flags.force }
    /// Collect every change (dry run, JSON and verbose reports); otherwise only count.
    public var collectChanges: Bool { flags.collectsChanges }
    /// Pass a command source's standard error through (--verbose), each line prefixed with the source's name.
    public var passCommandErrors: Bool { flags.verbose }
    public var maxDeleteShare = 0.2
    public var maxChannelMB = 16
    public var whitelists: [String: Set<String>] = [:]
    public var cacheDirectory: String
    public var fetchPolicy = FetchPolicy()
    public var now = Int64(Date().timeIntervalSince1970)
    /// Source channel id → canonical channel id (the config's `channels` aliases).
    public var channelAliases: [String: String] = [:]
    /// The config's timeshifted channels; nil without a config (they are then left as they are).
    public var timeshifts: [TimeshiftRule]?

    public init(flags: JobFlags = JobFlags(), cacheDirectory: String) {
        self.flags = flags
        self.cacheDirectory = cacheDirectory
    }
}

/// The outcome of one source's import, as the report and the exit code need it.
struct SourceOutcome {
    var report: RunReport.Source
    var status: String { report.status }
    var exitStatus: ExitStatus
}

/// The one import pipeline: fetch (when remote), read, merge in one transaction, keep the good
/// download. `run` calls it for each source of its config, `import` for the files it is given.
struct ImportPipeline {
    let store: Store
    let options: PipelineOptions
    let progress: Progress

    /// One source, standing alone: a failure leaves its data, validators and last good file as they were.
    /// `beforeImport` runs once the guide is in hand and is about to be merged.
    func importSource(_ source: SourceSpec, beforeImport: () throws -> Void = {}) -> SourceOutcome {
        if source.inputs.count == 1, case .command(let command) = source.inputs[0] {
            return importCommand(source, command, beforeImport: beforeImport)
        }
        func failed(_ status: ExitStatus, _ message: String) -> SourceOutcome {
            SourceOutcome(report: .init(name: source.name, status: "failed", error: message, report: nil), exitStatus: status)
        }
        var files: [String] = []
        var downloads: [(url: String, download: Download)] = []
        var sampleCopies: [String] = []
        defer {
            for (_, d) in downloads where !d.isLocal { try? FileManager.default.removeItem(atPath: d.file) }
            for s in sampleCopies { try? FileManager.default.removeItem(atPath: s) }
        }
        // Validators and the content hash describe one download: with several inputs every one is
        // fetched in full, since the import needs all of them together.
        // --force fetches in full and imports whatever came, but still keeps the validators, so
        // the next night's run is a conditional GET again. A changed priority changes what is
        // shown even when the guide did not change.
        let singleDownload: Bool
        if source.inputs.count == 1, case .fetched = source.inputs[0] { singleDownload = true } else { singleDownload = false }
        let conditional = singleDownload && !options.force && !priorityChanged(source) && !rulesChanged(source)
        let previous = conditional ? (try? FetchState.load(store, source: source.name)) ?? nil : nil
        for input in source.inputs {
            switch input {
            case .file(let path):
                files.append(path)
            case .bundledSample(let path):
                do {
                    let copy = try BundledSample.rebasedCopy(of: path, to: options.now)
                    sampleCopies.append(copy)
                    files.append(copy)
                } catch let error as JobError {
                    return failed(error.status, error.message)
                } catch {
                    return failed(.noInput, "\(error)")
                }
            case .command(let command):
                return failed(.config, "source '\(source.name)': a command (\(command.displayed)) must be the source's only input")
            case .fetched(let url):
                do {
                    try FileManager.default.createDirectory(atPath: options.cacheDirectory, withIntermediateDirectories: true)
                } catch {
                    return failed(.cannotCreate, "cannot create the cache directory \(options.cacheDirectory): \(error.localizedDescription)")
                }
                let request = FetchRequest(url: url, validators: previous?.validators, previousContentHash: previous?.contentHash,
                                           force: options.force, policy: options.fetchPolicy)
                progress.show("\(source.name): fetching \(url)…")
                do {
                    switch try Fetcher(cacheDirectory: options.cacheDirectory).fetch(request) {
                    case .notModified:
                        return SourceOutcome(report: .init(name: source.name, status: "unchanged", error: nil, report: nil), exitStatus: .success)
                    case .downloaded(let d):
                        downloads.append((url, d))
                        files.append(d.file)
                    }
                } catch {
                    if case .notFound = error.kind { return failed(.noInput, error.message) }
                    return failed(.unavailable, error.message)
                }
            }
        }
        let importOptions = self.importOptions(for: source)
        do {
            try beforeImport()
            let r = try importGuide(into: store, files: files, options: importOptions, dryRun: options.dryRun, overwritable: options.whitelists)
            rememberSettings(of: source)
            if !options.dryRun, singleDownload, let (url, d) = downloads.first {
                keepLastGood(d, source: source.name)
                try? FetchState.save(store, source: source.name, url: url, validators: d.validators, contentHash: d.contentHash)
            }
            return SourceOutcome(report: .init(name: source.name, status: r.changedAnything ? "applied" : "unchanged", error: nil, report: r),
                                 exitStatus: .success)
        } catch let error as ImportError {
            var message = "\(error)"
            // Name what the user gave, not the temporary file it was downloaded to.
            for (url, d) in downloads where !d.isLocal { message = message.replacingOccurrences(of: d.file, with: url) }
            return failed(ExitStatus(error), message)
        } catch let error as JobError {
            return failed(error.status, error.message)
        } catch {
            return failed(.cannotCreate, "\(error)")
        }
    }

    /// How `source` is read and merged.
    func importOptions(for source: SourceSpec) -> ImportOptions {
        var importOptions = ImportOptions(source: source.name, force: options.force, maxDeleteShare: options.maxDeleteShare,
                                          collectChanges: options.collectChanges,
                                          reader: XMLTVReaderOptions(timeOffsetOverride: source.timeOffset, includeChannels: source.includeChannels,
                                                                     excludeChannels: source.excludeChannels),
                                          now: options.now)
        // The feeds' revision stamps, written by the merge with each insert and update (one write).
        let now = options.now
        importOptions.programmeInsertValues = ["changedAt": .date(now)]
        importOptions.updateStamps = ["Programme": ProgrammeRevision.stamp(now: now)]
        importOptions.reader.channelAliases = options.channelAliases
        importOptions.timeshifts = options.timeshifts
        importOptions.priorities = priorities(with: source)
        let rulesChanged = rulesChanged(source)
        importOptions.resolveAllChannels = priorityChanged(source) || rulesChanged
        importOptions.forgetsContentHashes = rulesChanged
        importOptions.maxChannelBytes = Int64(options.maxChannelMB) << 20
        let progress = self.progress, name = source.name
        importOptions.progress = { programmes in progress.show("\(name): \(programmes) programmes merged") }
        return importOptions
    }

    /// Every remembered priority, with this source's own from the config or command line.
    func priorities(with source: SourceSpec) -> [String: Int] {
        var all = (try? SourcePriorities.all(in: store)) ?? [:]
        if let priority = source.priority { all[source.name] = priority }
        return all
    }

    /// Whether the source is given a priority other than the one remembered.
    func priorityChanged(_ source: SourceSpec) -> Bool {
        guard let priority = source.priority else { return false }
        return ((try? SourcePriorities.all(in: store)) ?? [:])[source.name] ?? 0 != priority
    }

    /// Whether the rules that map the source's guide changed since its last applied import
    /// (`SourceSettings`): then an unchanged download is imported all the same.
    func rulesChanged(_ source: SourceSpec) -> Bool {
        SourceSettings.changed(source.name, SourceSettings.fingerprint(of: source, options: options), in: store)
    }

    /// Remembers the priority and the rules the source was just applied with, for the imports
    /// after it. A dry run does too inside `Store.dryRun`, so that its later sources see them as
    /// the real run's would (they go with its rollback); a lone dry import does not.
    func rememberSettings(of source: SourceSpec) {
        guard !options.dryRun || store.isInDryRun else { return }
        rememberPriority(of: source)
        rememberRules(of: source)
    }

    private func rememberRules(of source: SourceSpec) {
        let fingerprint = SourceSettings.fingerprint(of: source, options: options)
        guard SourceSettings.changed(source.name, fingerprint, in: store) else { return }
        try? SourceSettings.remember(source.name, fingerprint, in: store)
    }

    private func rememberPriority(of source: SourceSpec) {
        guard let priority = source.priority, priorityChanged(source) else { return }
        try? SourcePriorities.remember(priority, for: source.name, in: store)
    }

    /// Only once it is applied is a download the last good one: kept in the cache with its validators.
    private func keepLastGood(_ download: Download, source: String) {
        guard !download.isLocal else { return }
        let lastGood = options.cacheDirectory + "/" + FeedExporter.fileName(for: source).replacingOccurrences(of: ".ics", with: ".last-good")
        // Renamed over the previous one: there is always a last good download, the old or the new.
        try? DurableFile.moveIntoPlace(download.file, to: lastGood)
    }
}
