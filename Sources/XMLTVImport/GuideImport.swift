import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import XMLTV

/// How one source's import is run.
public struct ImportOptions: Sendable {
    public var source: String
    /// Skip the safety guard.
    public var force: Bool
    /// The largest share of the source's stored programmes or channels one import may delete.
    public var maxDeleteShare: Double
    /// Collect every change (for dry-run reports and change files); otherwise only count.
    public var collectChanges: Bool
    public var reader: XMLTVReaderOptions
    /// "Now", for the guard's "anything in the future?" question.
    public var now: Int64
    /// Further values set on every inserted programme (for example when it was first seen).
    public var programmeInsertValues: [String: Value] = [:]
    /// Stamps written with each update of an entity's objects, in the same write (the feeds'
    /// revision stamps of a programme: `Sources/Feeds/ProgrammeRevisionObserver.swift`).
    public var updateStamps: [String: UpdateStamp] = [:]
    /// Called after each channel with the number of programmes merged so far (progress display).
    public var progress: (@Sendable (Int) -> Void)?
    /// The most one channel's programmes may hold in one guide, as read (`ProgrammeRecord.textBytes`:
    /// their elements, text and markup).
    /// The merge holds a channel's programmes in memory (several times their text), so this
    /// bounds memory whatever the size of the stream; a real channel's fortnight is well under
    /// 1 MiB.
    public var maxChannelBytes: Int64 = 16 << 20

    public init(source: String, force: Bool = false, maxDeleteShare: Double = 0.2, collectChanges: Bool = false,
                reader: XMLTVReaderOptions = .init(), now: Int64 = Int64(Date().timeIntervalSince1970)) {
        self.source = source
        self.force = force
        self.maxDeleteShare = maxDeleteShare
        self.collectChanges = collectChanges
        self.reader = reader
        self.now = now
    }
}

/// A problem in the data that did not stop the import, with where it was found.
public struct ImportWarning: Sendable, Codable, Hashable {
    public var kind: String
    public var message: String
    public var source: String
    public var file: String?
    public var line: Int?
    public var channel: String?
}

/// What one source's import did.
public struct SourceImportReport: Sendable {
    public var source: String
    public var channels = MergeTally()
    public var programmes = MergeTally()
    /// Stored programmes before each channel's window: history, kept.
    public var keptAsHistory = 0
    /// Per channel id: the covered window [start, stop) inside which missing programmes were deleted.
    public var windows: [String: (start: Int64, end: Int64)] = [:]
    public var warnings: [ImportWarning] = []
    public var changes: [MergeChange] = []
    /// The safety guard's verdict, in words.
    public var guardVerdict = "passed"
    /// Programmes merged: the programme elements read, less duplicates and channels left out.
    public var programmesRead = 0
    /// Programme elements dropped as duplicates of another with the same identity.
    public var duplicatesDropped = 0
    /// The XMLTV ids of the channels whose programmes (or own attributes) changed.
    public var touchedChannelIDs = Set<String>()

    /// Whether the import changed anything at all.
    public var changedAnything: Bool {
        channels.inserted + channels.updated + channels.deleted + programmes.inserted + programmes.updated + programmes.deleted > 0
    }
}

/// Why an import was refused. Nothing was changed.
public enum ImportError: Error, Sendable, CustomStringConvertible {
    case badInput(XMLTVError)
    case safetyGuard(source: String, reason: String)
    case notSorted(String)
    /// A temporary file of the import (staging, a pipe's copy) could not be written: the input
    /// may be fine, the machine is not (a full disk); exit 73, nothing changed.
    case cannotWrite(String)

    public var description: String {
        switch self {
        case .badInput(let e): "\(e)"
        case let .safetyGuard(source, reason): "source '\(source)' refused by the safety guard: \(reason) (nothing was changed; --force overrides)"
        case .notSorted(let m): m
        case .cannotWrite(let m): m
        }
    }

    /// A channel over `ImportOptions.maxChannelBytes`, found at `line` of `file`.
    static func channelTooLarge(_ channel: String, file: String, line: Int, limit: Int64) -> ImportError {
        let size = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return .badInput(XMLTVError(file: file, line: line, message: "channel '\(channel.excerpt())' has more than \(size) of programme text "
                             + "in this guide (a real channel's fortnight takes well under 1 MiB): refused, so that memory stays bounded"))
    }
}

/// Imports XMLTV files as one source into the listings model, following the user contract's merge (docs/design.md#user-contract)
/// semantics: identities, duplicates, whitelists, delete scope per channel window, history,
/// channel deletion and the safety guard. Call it inside one `Store.write` transaction: a thrown
/// error rolls everything back.
public final class GuideImporter {
    let context: ObjectContext
    let options: ImportOptions
    let channelLayout: MergeLayout
    let programmeLayout: MergeLayout
    let merge: SortedMerge
    private(set) var report: SourceImportReport
    private var channelIDs: [[UInt8]: (id: String, rowID: Int64)] = [:]
    private var createdChannels = Set<Int64>()
    private var storedProgrammesBefore = 0
    private var storedChannelsBefore = 0
    private var anyInFuture = false
    /// A guide not grouped by channel is merged from a staging table instead; see `importGuide`.
    struct NotGroupedByChannel: Error { let channel: String }

    public init(context: ObjectContext, options: ImportOptions, overwritable: [String: Set<String>] = [:]) throws {
        self.context = context
        self.options = options
        let model = context.model
        let credit = try MergeLayout(entity: model.requireEntity("Credit"), keys: ListingsMapper.creditKeys,
                                     parentKey: "programme", overwritable: overwritable["Credit"])
        let category = try MergeLayout(entity: model.requireEntity("Category"), keys: ListingsMapper.categoryKeys,
                                       parentKey: "programme", overwritable: overwritable["Category"])
        programmeLayout = try MergeLayout(entity: model.requireEntity("Programme"), keys: ListingsMapper.programmeKeys,
                                          parentKey: "channel", children: [("credits", credit), ("categories", category)],
                                          overwritable: overwritable["Programme"])
        channelLayout = try MergeLayout(entity: model.requireEntity("Channel"), keys: ListingsMapper.channelKeys,
                                        overwritable: overwritable["Channel"])
        report = SourceImportReport(source: options.source)
        let source = options.source
        merge = SortedMerge(context: context, insertValues: options.programmeInsertValues.merging(["source": .string(source)]) { $1 },
                            deletableKeys: ["source"],
                            deletable: { $0["source"] == .string(source) },
                            stamps: options.updateStamps)
        // The report reads what the merge changed from the context's change stream: channels
        // always (their updates are counted), programmes when every change is wanted.
        collector = MergeChangeCollector(layouts: options.collectChanges ? [channelLayout, programmeLayout] : [channelLayout])
        try context.addObserver(collector)
    }

    /// What the safety guard measures deletions against; counted while the reader starts.
    private func countStored() throws {
        let source = Value.string(options.source)
        storedProgrammesBefore = try context.count("Programme", where: .compare("source", .equal, source))
        storedChannelsBefore = try context.count("Channel", where: .compare("source", .equal, source))
    }

    private let collector: MergeChangeCollector

    /// Whether the source has stored programmes: then most programmes will be unchanged, and
    /// decoding is left to the merge, which decodes only the changed ones.
    private func isReimport() throws -> Bool {
        try context.first("Programme", where: .compare("source", .equal, .string(options.source)), keys: []) != nil
    }

    /// Reads and merges the files, streaming: one channel's programmes at a time, read on one
    /// thread and merged on this one.
    public func run(files: [String]) throws -> SourceImportReport {
        let producer = GuideProducer(files: files, options: options, deferDecoding: try isReimport())
        producer.start()
        do {
            try countStored()
            while true {
                let item = producer.next()
                switch item {
                case .block(let block):
                    try mergeBlock(block)
                case let .end(declared, warnings):
                    report.warnings += warnings.prefix(max(0, 10_000 - report.warnings.count))
                    return try finish(declared)
                case .failure(let error):
                    throw error
                }
                producer.recycle(consume item)
            }
        } catch {
            producer.cancel()
            throw error
        }
    }

    /// Merges staged blocks (already grouped) when the file was not grouped by channel.
    func run(declared: [[UInt8]: XMLTVChannel], blocks: (_ body: (String, [ProgrammeRecord]) throws -> Void) throws -> Void,
             readerWarnings: [ImportWarning]) throws -> SourceImportReport {
        // Staged records are the reader's own, mapped as a grouped guide's are.
        let map = GuideProducer.mapping(deferDecoding: try isReimport())
        try countStored()
        report.warnings += readerWarnings
        try blocks { channel, programmes in
            if let block = PreparedBlock.prepare(channel, programmes, file: nil, options: options, map: map) {
                try mergeBlock(block)
            }
        }
        return try finish(declared)
    }

    private func finish(_ declared: [[UInt8]: XMLTVChannel]) throws -> SourceImportReport {
        try mergeChannels(declared)
        try context.processPendingChanges()
        try checkSafetyGuard()
        if options.collectChanges {
            let channelIDs = Dictionary(self.channelIDs.values.map { ($0.rowID, $0.id) }, uniquingKeysWith: { a, _ in a })
            report.changes = collector.changesWithParents.map { change, parent in
                var change = change
                change.owner = parent.flatMap { channelIDs[$0.rowID] }
                return change
            }
        }
        report.programmes.deleted = context.summary["Programme"].deleted
        return report
    }

    private func warn(_ kind: String, _ message: String, _ file: String?, _ line: Int?, _ channel: String?) {
        guard report.warnings.count < 10_000 else { return }
        report.warnings.append(ImportWarning(kind: kind, message: message, source: options.source, file: file, line: line, channel: channel))
    }

    private func mergeBlock(_ block: PreparedBlock) throws {
        report.warnings += block.warnings.prefix(max(0, 10_000 - report.warnings.count))
        report.duplicatesDropped += block.warnings.reduce(0) { $0 + ($1.kind == "duplicate" || $1.kind == "conflicting-duplicate" ? 1 : 0) }
        guard !block.incoming.isEmpty else { return }
        let channel = block.channel
        report.programmesRead += block.incoming.count
        if block.anyInFuture { anyInFuture = true }
        report.windows[channel] = (block.windowStart, block.windowEnd)
        let channelID = try ensureChannel(channel)
        let owner = ObjectID(entity: "Channel", rowID: channelID)
        report.keptAsHistory += try context.count("Programme", where: .and([.related("channel", owner), .compare("start", .less, .date(block.windowStart))]))
        let tally = try merge.merge(programmeLayout, incoming: block.incoming,
                                    scope: .and([.related("channel", owner),
                                                 .compare("start", .greaterOrEqual, .date(block.windowStart)),
                                                 .compare("start", .less, .date(block.windowEnd))]),
                                    parent: owner)
        report.programmes += tally
        options.progress?(report.programmesRead)
        if tally.inserted + tally.updated + tally.deleted > 0 {
            report.touchedChannelIDs.insert(channel)
        }
        try context.processPendingChanges()
    }

    /// The row id of a channel, creating a bare one (completed by `mergeChannels`) when new.
    private func ensureChannel(_ id: String) throws -> Int64 {
        if let known = channelIDs[Array(id.utf8)] { return known.rowID }
        if let existing = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: []) {
            channelIDs[Array(id.utf8)] = (id, existing.id.rowID)
            return existing.id.rowID
        }
        var row = channelLayout.entity.attributes.map(\.defaultValue)
        row += Array(repeating: Value.null, count: channelLayout.entity.rowKeys.count - row.count)
        row[channelLayout.entity.rowIndex(of: "xmltvId")!] = .string(id)
        row[channelLayout.entity.rowIndex(of: "source")!] = .string(options.source)
        let created = try context.insert(into: channelLayout.entity, row: row)
        channelIDs[Array(id.utf8)] = (id, created.rowID)
        createdChannels.insert(created.rowID)
        return created.rowID
    }

    /// Channels: declared ones are created or updated; those with programmes but no declaration
    /// are kept as they are; the source's other channels are deleted with their programmes.
    private func mergeChannels(_ declared: [[UInt8]: XMLTVChannel]) throws {
        var incoming: [IncomingObject] = declared.values.map(ListingsMapper.channel)
        for (key, (id, rowID)) in channelIDs where declared[key] == nil {
            // Known only from its programmes: present what is stored, so nothing is overwritten.
            guard let stored = try context.object(ObjectID(entity: "Channel", rowID: rowID), keys: ListingsMapper.channelKeys) else { continue }
            incoming.append(IncomingObject(values: ListingsMapper.channelKeys.map { stored[$0] }))
            if createdChannels.contains(rowID) {
                warn("missing-channel", "programmes refer to channel '\(id.excerpt())', which the guide does not declare", nil, nil, id)
            }
        }
        incoming.sort { Value.compare($0.values[0], $1.values[0]) < 0 }
        let source = options.source
        let channelMerge = SortedMerge(context: context, insertValues: ["source": .string(source)], deletableKeys: ["source"],
                                       deletable: { $0["source"] == .string(source) })
        let t = try channelMerge.merge(channelLayout, incoming: incoming, scope: .all, parent: nil)
        try context.processPendingChanges()
        // A channel created bare for its programmes and completed here is one insert (the
        // collector folds the two); the merge counted its completion as an update.
        var tally = MergeTally()
        for channel in collector.updatedObjects(of: "Channel") {
            tally.updated += 1
            if let id = try context.object(channel, keys: ["xmltvId"])?["xmltvId"].stringValue { report.touchedChannelIDs.insert(id) }
        }
        let completions = t.updated - tally.updated
        tally.inserted = t.inserted + createdChannels.count
        tally.deleted = t.deleted
        tally.unchanged = t.unchanged - (createdChannels.count - completions)
        report.channels = tally
    }

    private func checkSafetyGuard() throws {
        let source = options.source
        var problems: [String] = []
        if report.programmesRead == 0 {
            problems.append("the guide holds no programmes")
        } else if !anyInFuture {
            problems.append("no programme in the guide ends in the future")
        }
        let deletedProgrammes = context.summary["Programme"].deleted
        if storedProgrammesBefore > 0, Double(deletedProgrammes) > options.maxDeleteShare * Double(storedProgrammesBefore) {
            problems.append("it would delete \(deletedProgrammes) of the source's \(storedProgrammesBefore) stored programmes (more than \(Int(options.maxDeleteShare * 100)) %)")
        }
        let deletedChannels = report.channels.deleted
        if storedChannelsBefore > 0, Double(deletedChannels) > options.maxDeleteShare * Double(storedChannelsBefore) {
            problems.append("it would delete \(deletedChannels) of the source's \(storedChannelsBefore) stored channels (more than \(Int(options.maxDeleteShare * 100)) %)")
        }
        if problems.isEmpty { return }
        if options.force {
            report.guardVerdict = "overridden by --force: " + problems.joined(separator: "; ")
            return
        }
        report.guardVerdict = "refused: " + problems.joined(separator: "; ")
        throw ImportError.safetyGuard(source: source, reason: problems.joined(separator: "; "))
    }
}
