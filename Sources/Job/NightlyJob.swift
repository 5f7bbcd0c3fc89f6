import Feeds
import Fetch
import Foundation
import Merge
import ObjectGraph
import Primitives
import XMLTV
import XMLTVImport

/// `tvimport run`: every source fetched, parsed and merged in its own transaction, old
/// programmes pruned, feeds exported, a report printed and the run recorded.
public struct NightlyJob {
    public var config: JobConfig
    /// Preview, force, report format and how much it says: `run`'s `ImportFlags`.
    public var flags = JobFlags()
    /// Wait for another run's lock instead of exiting 75 at once.
    public var waitForLock = false
    public var now = Int64(Date().timeIntervalSince1970)

    public init(config: JobConfig) { self.config = config }

    /// The options every source's import shares.
    var pipelineOptions: PipelineOptions {
        var options = PipelineOptions(flags: flags, cacheDirectory: config.cacheDirectory)
        options.maxDeleteShare = config.maxDeleteShare
        options.maxChannelMB = config.maxChannelMB
        options.whitelists = config.whitelists
        options.fetchPolicy = config.fetchPolicy
        options.now = now
        options.channelAliases = config.channelAliases
        options.timeshifts = Array(config.timeshifts.values)
        return options
    }

    public func run() throws -> (output: String, status: ExitStatus) {
        let config = self.config
        let plan = RunEnvelope.Plan(
            command: "run", database: config.database, flags: flags, started: now,
            model: { try StoreAccess.model(userModules: config.modules) },
            changeFiles: ChangeFiles(directory: config.changesDirectory),
            writesChangeFile: config.changeFiles, writesPatch: config.changeFilesPatch, config: config,
            waitsForLock: waitForLock)
        return try RunEnvelope.enclose(plan) { envelope in
            let (output, status) = try runLocked(envelope)
            return (output, status, true)
        }
    }

    /// The run, under the lock.
    private func runLocked(_ envelope: RunEnvelope) throws -> (output: String, status: ExitStatus) {
        let (store, progress, dryRun) = (envelope.store, envelope.progress, flags.dryRun)
        // The channels whose programmes tonight's transactions changed: only their feeds are rebuilt.
        let dirty = DirtyOwnersObserver(parentEntity: "Channel", relationship: "programmes")
        store.addObserver(dirty)
        var status = ExitStatus.success
        let pipeline = ImportPipeline(store: store, options: pipelineOptions, progress: progress)

        // The change file records the run's changes as the store makes them. Started only when
        // a source has something to import, so a night of 304s costs nothing.
        func importAndPrune() throws -> Int {
            for source in config.sources {
                if StopSignal.requested {
                    envelope.report.sources.append(.init(name: source.name, status: "skipped", error: "stopped by a signal before it started", report: nil))
                    if status == .success { status = .tempFail }
                    continue
                }
                progress.show("\(source.name): fetching and importing…")
                let outcome = pipeline.importSource(source.spec, beforeImport: envelope.startRecording)
                progress.clear()
                if outcome.status == "failed", status == .success { status = outcome.exitStatus }
                envelope.report.sources.append(outcome.report)
            }
            return config.retentionDays > 0 ? try prune(store, beforeChange: envelope.startRecording).0 : 0
        }
        // A dry run's sources each see what those before them would have done (`Store.dryRun`).
        let pruned = dryRun ? try store.dryRun(importAndPrune) : try importAndPrune()
        let changeFile = envelope.finishRecording(kind: .run) {
            let applied = envelope.report.sources.filter { $0.status == "applied" }.map(\.name)
            return "the run of " + (applied.isEmpty ? "retention" : "source" + (applied.count == 1 ? " " : "s ") + applied.joined(separator: ", "))
                + envelope.report.countsInWords
        }
        if !dryRun && config.changeFilesDays > 0 {
            let removed = ChangeFiles(directory: config.changesDirectory).prune(olderThan: now - Int64(config.changeFilesDays) * 86400,
                                                                                      keeping: try? ChangeRegister.latest(in: store)?.path)
            if removed > 0 { JobLog.logger.info("removed \(removed) change files older than \(config.changeFilesDays) days") }
        }

        var exportLine = ""
        if !dryRun && StopSignal.requested {
            exportLine = "stopped by a signal: feeds not exported (the next run will)"
            envelope.log(status: .tempFail, outcome: "stopped by a signal")
            if status == .success { status = .tempFail }
        } else if !dryRun {
            // Always export: the exporter rebuilds only dirty channels (and those edited since
            // the last export), so a quiet night costs a read of the channel list.
            var exportedFeeds = false
            do {
                let exported = try config.exporter(store: store, now: now).export(channels: flags.force ? nil : dirty.dirtyOwners)
                exportedFeeds = true
                // Only a run that failed nowhere: a failed one leaves the database as it was.
                if status == .success { try? LastRunOutputs.remember(config, in: store) }
                exportLine = exported.written.isEmpty && exported.removed.isEmpty
                    ? "feeds: nothing changed, \(config.output)/ left as it was"
                    : "feeds: \(exported.written.count) written, \(exported.unchanged.count) unchanged, \(exported.removed.count) removed in \(config.output)/ (open \(config.output)/index.html)"
            } catch {
                if status == .success { status = .cannotCreate }
                exportLine = "feeds: export failed: \(error)"
                JobLog.logger.error("export failed: \(error)")
            }
            if let xmltv = config.xmltv {
                do {
                    exportLine += "\n" + (try XMLTVExportStep.run(store: store, path: xmltv))
                } catch {
                    if status == .success { status = .cannotCreate }
                    exportLine += "\n\(error)"
                    JobLog.logger.error("\(error)")
                }
            }
            if !config.playlists.isEmpty {
                let playlists = PlaylistStep.runConfigured(store: store, config: config, now: now)
                for line in playlists.lines { exportLine += "\n" + line }
                for line in playlists.stderr { JobLog.logger.warning("\(line)") }
                envelope.report.playlists = playlists.json
                if status == .success { status = playlists.status }
            }
            // Published last, so that the XMLTV file of this run goes up with its feeds.
            if exportedFeeds, let published = PublishCommand.publish(config: config, feedDirectory: config.output) {
                exportLine += "\n" + published.line
                if published.status != .success { JobLog.logger.error("\(published.line)") }
                if status == .success { status = published.status }
            }
            envelope.log(status: status, outcome: envelope.report.sources.map { "\($0.name): \($0.status)" }.joined(separator: "; ")
                                                     + (pruned > 0 ? "; \(pruned) pruned" : ""))
        }

        var notes: [String] = []
        if pruned > 0 {
            notes.append("retention: \(plural(pruned, "programme")) that ended more than \(plural(config.retentionDays, "day")) ago "
                         + "\(dryRun ? "would be" : pruned == 1 ? "was" : "were") pruned")
        }
        if !exportLine.isEmpty { notes.append(exportLine) }
        if let changeFile { notes.append("changes: \(changeFile)") }
        return (try envelope.output(notes: notes), status)
    }

    /// Deletes programmes that ended longer ago than the retention (reported as pruned); returns
    /// how many, and their channels.
    func prune(_ store: Store, beforeChange: () throws -> Void) throws -> (Int, Set<String>) {
        let cutoff = now - Int64(config.retentionDays) * 86400
        let (count, sourceRows) = try store.read { context in
            // Sources' own rows age out with the shown ones, so that no later resolution brings them back.
            (try Self.ended(before: cutoff, in: context, entity: "Programme", channelEntity: "Channel").reduce(0) { $0 + $1.1.count },
             try Self.ended(before: cutoff, in: context, entity: "SourceProgramme", channelEntity: "SourceChannel").reduce(0) { $0 + $1.1.count })
        }
        guard count > 0 || sourceRows > 0 else { return (0, []) }
        try beforeChange()
        return try store.write(dryRun: flags.dryRun) { context -> (Int, Set<String>) in
            for (_, programmes) in try Self.ended(before: cutoff, in: context, entity: "SourceProgramme", channelEntity: "SourceChannel") {
                for p in programmes { try context.delete(p) }
            }
            var channels = Set<String>()
            for (channel, programmes) in try Self.ended(before: cutoff, in: context, entity: "Programme", channelEntity: "Channel") {
                for p in programmes { try context.delete(p) }
                channels.insert(channel)
            }
            return (count, channels)
        }.result
    }

    /// The programmes of `entity` that ended before `cutoff`, by the XMLTV id of their channel (an
    /// `channelEntity`), channels with none left out. `stop` has no index (Sources/Listings/TVModel.swift):
    /// a programme never ends before it starts (the import repairs or drops such a stop), so a
    /// channel's are among those its identity index finds starting before the cutoff.
    static func ended(before cutoff: Int64, in context: ObjectContext, entity: String, channelEntity: String) throws -> [(String, [ObjectID])] {
        var ended: [(String, [ObjectID])] = []
        for channel in try context.fetchAll(channelEntity, keys: ["xmltvId"]) {
            let programmes = try context.fetchAll(entity, where: .and([.related("channel", channel.id), .compare("start", .less, .date(cutoff)),
                                                                      .compare("stop", .less, .date(cutoff))]), keys: [])
            if !programmes.isEmpty { ended.append((channel["xmltvId"].stringValue ?? "", programmes.map(\.id))) }
        }
        return ended
    }
}

/// HTTP validators and the content hash of each source's last good download, in the database.
enum FetchState {
    static let table = SideTable(name: "_tvimport_fetch", key: "source", columns: [
        AttributeDescription("url", .string, optional: false), AttributeDescription("etag", .string),
        AttributeDescription("lastModified", .string), AttributeDescription("contentHash", .string),
        AttributeDescription("fetched", .integer),
    ])
    struct State { var validators: HTTPValidators; var contentHash: String? }

    static func prepare(_ store: Store) throws {
        try store.create(table)
    }
    static func load(_ store: Store, source: String) throws -> State? {
        try store.row(forKey: source, in: table).map {
            State(validators: HTTPValidators(etag: $0["etag"]?.stringValue, lastModified: $0["lastModified"]?.stringValue),
                  contentHash: $0["contentHash"]?.stringValue)
        }
    }
    /// Forgets every source's last download, inside a transaction that changed the guide some
    /// other way (`undo`, `apply`): the rows no longer hold what those downloads gave, so the next
    /// run fetches and imports each source in full, even a source whose bytes did not change.
    static func forgetAll(in context: ObjectContext) throws {
        try context.removeAllRows(in: table)
    }

    static func save(_ store: Store, source: String, url: String, validators: HTTPValidators, contentHash: String) throws {
        try store.save(["url": .string(url), "etag": validators.etag.map(Value.string) ?? .null,
                        "lastModified": validators.lastModified.map(Value.string) ?? .null,
                        "contentHash": .string(contentHash), "fetched": .integer(Int64(Date().timeIntervalSince1970))],
                       forKey: source, in: table)
    }
}

/// One run at a time: an exclusive lock on a file beside the database.
final class RunLock {
    private let fd: Int32
    init(path: String, wait: Bool = false) throws {
        fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw JobError(.cannotCreate, "cannot create the lock file \(path): \(String(cString: strerror(errno)))") }
        if flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            throw JobError(.tempFail, "another tvimport run holds the lock \(path): try again later")
        }
    }
    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

/// The bundled sample guide is written for 2000-01-01..03; a run moves it to today (UTC) so that
/// the sample always has a future and passes the safety guard.
enum BundledSample {
    static func rebasedCopy(of path: String, to now: Int64) throws -> String {
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw JobError(.noInput, "\(path): cannot read the bundled sample guide")
        }
        let today = now - now % 86400
        for day in 0..<3 {
            let c = UTCTime.components(today + Int64(day) * 86400)
            let replacement = String(format: "%04d%02d%02d", c.year, c.month, c.day)
            text = text.replacingOccurrences(of: "2000010\(day + 1)", with: replacement)
        }
        let copy = NSTemporaryDirectory() + "tvimport-sample-\(getpid()).xml"
        try DurableFile.replace(copy, with: Array(text.utf8))
        return copy
    }
}

extension NightlyJob {
    /// `tvimport` with no config runs the bundled sample: never into a database that already
    /// holds other sources (`TVIMPORT_DB`, or a `./tvimport.sqlite` of a real job), which would
    /// gain the sample's made-up channels and feeds. Usage error (64), naming the way to run the
    /// real job; nothing is opened for writing.
    public static func checkSampleTarget(_ config: JobConfig) throws {
        let database = config.database
        guard FileManager.default.fileExists(atPath: database) else { return }
        let sample = config.sources.map(\.name)
        var others: [String] = []
        do {
            let model = try StoreAccess.model(forDatabase: database, userModules: [])
            let store = try StoreAccess.open(path: database, model: model, mustExist: true)
            others = try store.read { context in
                var names = Set<String>()
                for entity in ["Channel", "SourceChannel"] {
                    for row in try context.fetchAll(entity, where: .not(.isIn("source", sample.map(Value.string))), keys: ["source"]) {
                        names.insert(row["source"].stringValue ?? "(none)")
                    }
                }
                return names.sorted()
            }
        } catch {
            others = ["(a database the sample cannot read: \(error))"]
        }
        guard !others.isEmpty else { return }
        let how = ProcessInfo.processInfo.environment["TVIMPORT_DB"].map { $0.isEmpty ? "" : " (from TVIMPORT_DB)" } ?? ""
        throw JobError(.usage, "tvimport with no --config runs the bundled sample guide, and \(database)\(how) holds other sources "
                       + "(\(others.prefix(5).joined(separator: ", "))): refused, nothing changed. Run your job with `tvimport run --config FILE`, "
                       + "or try the sample in an empty folder")
    }
}
