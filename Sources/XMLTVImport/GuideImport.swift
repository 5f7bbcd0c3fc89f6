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
    /// Every source's priority (absent: 0), this source's included: where sources share a
    /// channel, the resolution ranks them by it (docs/design.md#several-sources-one-guide).
    public var priorities: [String: Int] = [:]
    /// This source's priority changed: every channel it shares with other sources is resolved again.
    public var resolveAllChannels = false
    /// The rules that map this source's guide to rows changed (aliases, whitelists, its time
    /// offset or channel lists): the stored content hashes of its rows, and of the shown rows of
    /// channels it shares, describe rows mapped by the old rules, so they are forgotten first and
    /// the merge compares values.
    public var forgetsContentHashes = false
    /// The config's timeshifted channels, made again from their originals at the end of the
    /// import (`TimeshiftDeriver`); with none, channels an earlier rule made are removed; nil
    /// (no config given) leaves them as they are.
    public var timeshifts: [TimeshiftRule]?

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
    /// Shown programmes this import deleted that carried local edits (a note, a reminder, ...).
    public var lostEdits: [LostEdit] = []
    /// The safety guard's verdict, in words.
    public var guardVerdict = "passed"
    /// Programmes merged: the programme elements read, less duplicates and channels left out.
    public var programmesRead = 0
    /// Programme elements dropped as duplicates of another with the same identity.
    public var duplicatesDropped = 0
    /// The XMLTV ids of the channels whose programmes (or own attributes) changed in this
    /// source's rows.
    public var touchedChannelIDs = Set<String>()
    /// What changed in the shown guide (`Channel`, `Programme`): what feeds, the XMLTV export and
    /// `serve` show. The same as `channels` and `programmes` on channels no other source has;
    /// on shared ones, what their resolution changed.
    public var shownChannels = MergeTally()
    public var shownProgrammes = MergeTally()

    /// Whether the import changed anything at all.
    public var changedAnything: Bool {
        [channels, programmes, shownChannels, shownProgrammes].contains { $0.inserted + $0.updated + $0.deleted > 0 }
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
///
/// Where it writes depends on the channel (docs/design.md#several-sources-one-guide). A channel
/// that only this source has is its own: its programmes are merged straight into `Channel` and
/// `Programme`, the shown guide. A channel that several sources have is shared: each source's
/// rows are kept apart (`SourceChannel`, `SourceProgramme`), merged with the same rules, and the
/// shown rows are resolved from them by priority (`GuideResolver`). A channel becomes shared when
/// a second source first brings it: the first source's rows are copied to its own source rows.
public final class GuideImporter {
    let context: ObjectContext
    let options: ImportOptions
    let overwritable: [String: Set<String>]
    /// The shown guide's layouts: where a channel of this source alone is merged.
    let channelLayout: MergeLayout
    let programmeLayout: MergeLayout
    /// A shared channel's layouts: this source's own rows of it.
    let sourceChannelLayout: MergeLayout
    let sourceProgrammeLayout: MergeLayout
    let merge: SortedMerge
    let sourceMerge: SortedMerge
    private(set) var report: SourceImportReport
    /// Where each channel met so far is merged: its `Channel` row (own) or this source's `SourceChannel` row (shared).
    private var channelRows: [[UInt8]: (id: String, row: ObjectID)] = [:]
    /// Whether a canonical channel is shared, by its UTF-8 bytes (docs/design.md#identifiers-are-bytes).
    private var isSharedCache: [[UInt8]: Bool] = [:]
    private var createdChannels = Set<ObjectID>()
    /// Shared channels whose rows this import changed. Their programmes are resolved where they
    /// changed as each block is merged (`changedSlots`), or whole at the end (`wholeChannels`);
    /// their own attributes at the end.
    private var channelsToResolve: [[UInt8]: String] = [:]
    private var wholeChannels = Set<[UInt8]>()
    private let changedSlots = ChangedSlots()
    /// What this import changed on its own channels (the shown guide's part of it).
    private var ownProgrammes = MergeTally()
    private var storedProgrammesBefore = 0
    private var storedChannelsBefore = 0
    /// Rows that new aliases move to another canonical channel (`countMovedByAliases`).
    private var movedChannels = 0
    private var movedProgrammes = 0
    private var anyInFuture = false
    /// A guide not grouped by channel is merged from a staging table instead; see `importGuide`.
    struct NotGroupedByChannel: Error { let channel: String }

    public init(context: ObjectContext, options: ImportOptions, overwritable: [String: Set<String>] = [:]) throws {
        self.context = context
        self.options = options
        self.overwritable = overwritable
        let model = context.model
        programmeLayout = try ListingsLayouts.programme(model, overwritable: overwritable)
        channelLayout = try MergeLayout(entity: model.requireEntity("Channel"), keys: ListingsMapper.channelKeys,
                                        overwritable: overwritable["Channel"])
        // A source's rows are copies of its last import: every feed attribute is overwritten
        // (the whitelists apply where the shown guide is written, in GuideResolver).
        sourceProgrammeLayout = try ListingsLayouts.programme(model, entities: .sourceRows)
        sourceChannelLayout = try MergeLayout(entity: model.requireEntity("SourceChannel"), keys: ["source"] + ListingsMapper.channelKeys)
        report = SourceImportReport(source: options.source)
        let source = options.source
        merge = SortedMerge(context: context, insertValues: options.programmeInsertValues.merging(["source": .string(source)]) { $1 },
                            deletableKeys: ["source"],
                            deletable: { $0["source"] == .string(source) },
                            stamps: options.updateStamps)
        sourceMerge = SortedMerge(context: context, insertValues: ["source": .string(source)])
        // The resolution of a block's shared channel takes the programmes this merge decoded.
        sourceMerge.keepsResolved = true
        // The report reads what the merge changed from the context's change stream: channels
        // always (their updates are counted), programmes when every change is wanted.
        collector = MergeChangeCollector(layouts: options.collectChanges
                                         ? [channelLayout, sourceChannelLayout, programmeLayout, sourceProgrammeLayout]
                                         : [channelLayout, sourceChannelLayout])
        try context.addObserver(collector)
        try context.addObserver(changedSlots)
        lostEdits = LostEditsObserver(model: model)
        try context.addObserver(lostEdits)
    }

    private let collector: MergeChangeCollector
    private let lostEdits: LostEditsObserver

    /// The canonical ids of channels shared by several sources (those with source rows).
    private func sharedChannelIDs() throws -> [Value] {
        var ids: [[UInt8]: Value] = [:]
        let cursor = try context.fetch("SourceChannel", keys: ["xmltvId"])
        while let c = try cursor.next() { if let id = c["xmltvId"].stringValue { ids[Array(id.utf8)] = .string(id) } }
        return Array(ids.values)
    }

    /// This source's own channels' rows in the shown guide: its `Channel` rows less shared channels
    /// (whose `Channel` row names the winning source).
    private func ownChannels(shared: [Value]) -> ObjectPredicate {
        let mine = ObjectPredicate.compare("source", .equal, .string(options.source))
        return shared.isEmpty ? mine : .and([mine, .not(.isIn("xmltvId", shared))])
    }

    /// What the safety guard measures deletions against; counted while the reader starts.
    private func countStored() throws {
        let source = Value.string(options.source)
        let shared = try sharedChannelIDs()
        storedChannelsBefore = try context.count("SourceChannel", where: .compare("source", .equal, source))
        storedProgrammesBefore = try context.count("SourceProgramme", where: .compare("source", .equal, source))
        guard !shared.isEmpty else {
            // No channel is shared: the source's shown rows are all its own.
            storedChannelsBefore += try context.count("Channel", where: .compare("source", .equal, source))
            storedProgrammesBefore += try context.count("Programme", where: .compare("source", .equal, source))
            return
        }
        let ownChannelRows = try context.fetchAll("Channel", where: ownChannels(shared: shared), keys: [])
        storedChannelsBefore += ownChannelRows.count
        for chunk in ownChannelRows.map({ Value.integer($0.id.rowID) }).chunks(of: 4096) {
            storedProgrammesBefore += try context.count("Programme", where: .isIn("channel", chunk))
        }
    }

    /// `ImportOptions.forgetsContentHashes`, inside the import's transaction.
    private func forgetContentHashesIfAsked() throws {
        guard options.forgetsContentHashes else { return }
        let source = ObjectPredicate.compare("source", .equal, .string(options.source))
        try context.forgetContentHashes("Programme", where: source)
        try context.forgetContentHashes("SourceProgramme", where: source)
        let shared = try sharedChannelIDs()
        for chunk in shared.chunks(of: 4096) {
            let rows = try context.fetchAll("Channel", where: .isIn("xmltvId", Array(chunk)), keys: [])
            for rowChunk in rows.map({ Value.integer($0.id.rowID) }).chunks(of: 4096) {
                try context.forgetContentHashes("Programme", where: .isIn("channel", rowChunk))
            }
        }
    }

    /// This source's stored channels (and their programmes) under an id that an alias now maps
    /// to another canonical channel: the reader can no longer give them, so the merge deletes
    /// them and creates their rows under the canonical id. The safety guard does not count
    /// that move as a deletion (a config change, not a guide that lost its channels).
    private func countMovedByAliases() throws {
        let aliased = options.reader.channelAliases.filter { $0.key != $0.value }.keys.map(Value.string)
        guard !aliased.isEmpty else { return }
        let source = ObjectPredicate.compare("source", .equal, .string(options.source))
        let own = ownChannels(shared: try sharedChannelIDs())
        for chunk in aliased.chunks(of: 4096) {
            let ids = ObjectPredicate.isIn("xmltvId", Array(chunk))
            for (channel, programme, mine) in [("SourceChannel", "SourceProgramme", source), ("Channel", "Programme", own)] {
                let rows = try context.fetchAll(channel, where: .and([mine, ids]), keys: [])
                movedChannels += rows.count
                for rowChunk in rows.map({ Value.integer($0.id.rowID) }).chunks(of: 4096) {
                    movedProgrammes += try context.count(programme, where: .isIn("channel", rowChunk))
                }
            }
        }
    }

    /// Whether the source has stored programmes: then most programmes will be unchanged, and
    /// decoding is left to the merge, which decodes only the changed ones.
    private func isReimport() throws -> Bool {
        let source = ObjectPredicate.compare("source", .equal, .string(options.source))
        return try context.first("Programme", where: source, keys: []) != nil || context.first("SourceProgramme", where: source, keys: []) != nil
    }

    /// Reads and merges the files, streaming: one channel's programmes at a time, read on one
    /// thread and merged on this one.
    public func run(files: [String]) throws -> SourceImportReport {
        let producer = GuideProducer(files: files, options: options, deferDecoding: try isReimport())
        producer.start()
        do {
            try countStored()
            try countMovedByAliases()
            try forgetContentHashesIfAsked()
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
        try countMovedByAliases()
        try forgetContentHashesIfAsked()
        report.warnings += readerWarnings
        try blocks { channel, programmes in
            if let block = PreparedBlock.prepare(channel, programmes, file: nil, options: options, map: map) {
                try mergeBlock(block)
            }
        }
        return try finish(declared)
    }

    private func finish(_ declared: [[UInt8]: XMLTVChannel]) throws -> SourceImportReport {
        let ownChannels = try mergeChannels(declared)
        try context.processPendingChanges()
        // The shown programmes the resolution deleted so far (`resolveProgrammes`) are not this source's.
        ownProgrammes.deleted = context.summary["Programme"].deleted - (resolver?.programmes.deleted ?? 0)
        report.programmes.deleted = ownProgrammes.deleted + context.summary["SourceProgramme"].deleted
        try checkSafetyGuard()
        if options.collectChanges {
            var channelIDs: [ObjectID: String] = [:]
            for (id, row) in channelRows.values { channelIDs[row] = id }
            report.changes = collector.changesWithParents.map { change, parent in
                var change = change.asListings
                change.owner = parent.flatMap { channelIDs[$0] }
                return change
            }
        }
        // The resolution's writes are the shown guide's, not this source's: not listed as its changes.
        collector.isPaused = true
        try resolveSharedChannels()
        let derived = try options.timeshifts.map {
            try TimeshiftDeriver(context: context, rules: $0, overwritable: overwritable,
                                 programmeInsertValues: options.programmeInsertValues, stamps: options.updateStamps).derive()
        } ?? (channels: MergeTally(), programmes: MergeTally())
        report.shownChannels = ownChannels
        report.shownChannels += derived.channels
        report.shownProgrammes = ownProgrammes
        report.shownProgrammes += derived.programmes
        if let resolver {
            report.shownChannels += resolver.channels
            report.shownProgrammes += resolver.programmes
        }
        try context.processPendingChanges()
        report.lostEdits = try lostEdits.lost.map { row, edit in
            var edit = edit
            if let row, let id = try context.object(ObjectID(entity: "Channel", rowID: row), keys: ["xmltvId"])?["xmltvId"].stringValue { edit.channel = id }
            return edit
        }
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
        let owner = try ensureChannel(channel)
        let shared = owner.entity == "SourceChannel"
        let entity = shared ? "SourceProgramme" : "Programme"
        report.keptAsHistory += try context.count(entity, where: .and([.related("channel", owner), .compare("start", .less, .date(block.windowStart))]))
        let tally = try (shared ? sourceMerge : merge).merge(shared ? sourceProgrammeLayout : programmeLayout, incoming: block.incoming,
                                                            scope: .and([.related("channel", owner),
                                                                         .compare("start", .greaterOrEqual, .date(block.windowStart)),
                                                                         .compare("start", .less, .date(block.windowEnd))]),
                                                            parent: owner)
        report.programmes += tally
        if !shared { ownProgrammes += tally }
        options.progress?(report.programmesRead)
        if tally.inserted + tally.updated + tally.deleted > 0 {
            report.touchedChannelIDs.insert(channel)
            if shared { resolveLater(channel) }
        }
        try context.processPendingChanges()
        if shared && !options.resolveAllChannels && !wholeChannels.contains(Array(channel.utf8)) {
            try resolveProgrammes(of: channel, sourceChannel: owner, merged: block)
        }
    }

    /// Resolves a shared channel's programmes where this block changed them, while the reader
    /// goes on with the next block (the rest of the resolution waits for the end: see
    /// `resolveSharedChannels`). The block's programmes are this source's rows in its window.
    private func resolveProgrammes(of id: String, sourceChannel: ObjectID, merged block: PreparedBlock) throws {
        let ranges = changedSlots.take(sourceChannel.rowID)
        guard !ranges.isEmpty else { return }
        // The resolution's writes are the shown guide's, not this source's: not listed as its changes.
        collector.isPaused = true
        defer { collector.isPaused = false }
        let merged = GuideResolver.MergedBlock(source: options.source, window: block.windowStart..<block.windowEnd,
                                               programmes: block.incoming, stops: block.stops, decoded: sourceMerge.resolved)
        if try !sharedResolver().resolveProgrammes(of: id, changed: ranges, merged: merged) { resolveLater(id, whole: true) }
    }

    private var resolver: GuideResolver?

    /// The import's one resolver: what it changed adds up over the import.
    private func sharedResolver() throws -> GuideResolver {
        if let resolver { return resolver }
        let made = try GuideResolver(context: context, priorities: options.priorities, overwritable: overwritable,
                                     programmeInsertValues: options.programmeInsertValues, stamps: options.updateStamps)
        resolver = made
        return made
    }

    private func resolveLater(_ id: String, whole: Bool = false) {
        channelsToResolve[Array(id.utf8)] = id
        if whole { wholeChannels.insert(Array(id.utf8)) }
    }

    /// Whether a canonical channel is shared by several sources. A channel that another source
    /// has on its own becomes shared here (`share`); one of this source's own is remembered in
    /// `channelRows`, where `ensureChannel` finds it.
    private func isShared(_ id: String) throws -> Bool {
        let key = Array(id.utf8)
        if let known = isSharedCache[key] { return known }
        var shared = try context.first("SourceChannel", where: .compare("xmltvId", .equal, .string(id)), keys: []) != nil
        if !shared, let shown = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: ["source"]) {
            if let owner = shown["source"].stringValue, owner != options.source {
                try share(shown.id, of: owner)
                shared = true
                resolveLater(id, whole: true)
            } else {
                channelRows[key] = (id, shown.id)
            }
        }
        isSharedCache[key] = shared
        return shared
    }

    /// Makes `owner`'s own channel shared: copies its shown rows (the channel, its programmes
    /// with their credits and categories, history included) to `owner`'s source rows, which the
    /// resolution then reads beside this source's. The shown rows stay, and so do local edits.
    private func share(_ channel: ObjectID, of owner: String) throws {
        try context.processPendingChanges()
        collector.isPaused = true
        changedSlots.isPaused = true
        defer { collector.isPaused = false; changedSlots.isPaused = false }
        let model = context.model
        guard let shown = try context.object(channel, keys: ListingsMapper.channelKeys) else { return }
        var values = ["source": Value.string(owner)]
        for key in ListingsMapper.channelKeys { values[key] = shown[key] }
        let sourceChannel = try context.insert("SourceChannel", values)
        let programmeEntity = try model.requireEntity("SourceProgramme")
        let keys = ListingsMapper.programmeKeys + ["contentHash"]
        var copies: [Int64: ObjectID] = [:]
        for p in try context.fetchAll("Programme", where: .related("channel", channel), keys: keys) {
            var row = programmeEntity.defaultRow
            for key in keys { row[programmeEntity.rowIndex(of: key)!] = p[key] }
            row[programmeEntity.rowIndex(of: "source")!] = .string(owner)
            row[programmeEntity.rowIndex(of: "channel")!] = .integer(sourceChannel.rowID)
            copies[p.id.rowID] = try context.insert(into: programmeEntity, row: row)
        }
        let programmeIDs = copies.keys.sorted().map { Value.integer($0) }
        for (entity, copy, keys) in [("Credit", "SourceCredit", ListingsMapper.creditKeys), ("Category", "SourceCategory", ListingsMapper.categoryKeys)] {
            for chunk in programmeIDs.chunks(of: 4096) {
                for m in try context.fetchAll(entity, where: .isIn("programme", chunk), keys: keys + ["programme"]) {
                    guard let programme = m.related("programme").flatMap({ copies[$0.rowID] }) else { continue }
                    var values: [String: Value] = [:]
                    for key in keys { values[key] = m[key] }
                    try context.insert(copy, values, related: ["programme": programme])
                }
            }
        }
        try context.processPendingChanges()
    }

    /// Where a channel's programmes are merged, creating a bare channel (completed by
    /// `mergeChannels`) when this source has none: its `Channel` row when it is this source's
    /// own, this source's `SourceChannel` row when it is shared.
    private func ensureChannel(_ id: String) throws -> ObjectID {
        if let known = channelRows[Array(id.utf8)] { return known.row }
        let shared = try isShared(id)
        if let own = channelRows[Array(id.utf8)] { return own.row }   // found by `isShared`
        if shared, let existing = try context.first("SourceChannel", where: .and([.compare("source", .equal, .string(options.source)),
                                                                               .compare("xmltvId", .equal, .string(id))]), keys: []) {
            channelRows[Array(id.utf8)] = (id, existing.id)
            return existing.id
        }
        let layout = shared ? sourceChannelLayout : channelLayout
        var row = layout.entity.defaultRow
        row[layout.entity.rowIndex(of: "xmltvId")!] = .string(id)
        row[layout.entity.rowIndex(of: "source")!] = .string(options.source)
        let created = try context.insert(into: layout.entity, row: row)
        channelRows[Array(id.utf8)] = (id, created)
        createdChannels.insert(created)
        if shared { resolveLater(id) }
        return created
    }

    /// Channels: declared ones are created or updated; those with programmes but no declaration
    /// are kept as they are; the source's other channels are deleted with their programmes.
    /// Own channels are merged into `Channel`, shared ones into this source's `SourceChannel`
    /// rows. Returns what changed on the own ones.
    private func mergeChannels(_ declared: [[UInt8]: XMLTVChannel]) throws -> MergeTally {
        let source = options.source
        var own: [IncomingObject] = [], shared: [IncomingObject] = []
        for channel in declared.values {
            var object = ListingsMapper.channel(channel)
            if try isShared(channel.id) {
                object.values.insert(.string(source), at: 0)
                shared.append(object)
            } else {
                own.append(object)
            }
        }
        for (key, (id, row)) in channelRows where declared[key] == nil {
            // Known only from its programmes: present what is stored, so nothing is overwritten.
            let isOwn = row.entity == "Channel"
            let keys = isOwn ? channelLayout.keys : sourceChannelLayout.keys
            guard let stored = try context.object(row, keys: keys) else { continue }
            if isOwn { own.append(IncomingObject(values: keys.map { stored[$0] })) } else { shared.append(IncomingObject(values: keys.map { stored[$0] })) }
            if createdChannels.contains(row) {
                warn("missing-channel", "programmes refer to channel '\(id.excerpt())', which the guide does not declare", nil, nil, id)
            }
        }
        own.sort { Value.compare($0.values[0], $1.values[0]) < 0 }
        shared.sort { Value.compare($0.values[1], $1.values[1]) < 0 }
        let deletable: (FetchedObject) -> Bool = { $0["source"] == .string(source) }
        let ownMerge = SortedMerge(context: context, insertValues: ["source": .string(source)], deletableKeys: ["source"], deletable: deletable)
        let sharedIDs = try sharedChannelIDs()
        let ownTally = try ownMerge.merge(channelLayout, incoming: own, scope: ownChannels(shared: sharedIDs), parent: nil)
        // Shared channels: this source's rows; every one that changed is resolved again.
        let sharedTally = try SortedMerge(context: context).merge(sourceChannelLayout, incoming: shared,
                                                                   scope: .compare("source", .equal, .string(source)), parent: nil)
        try context.processPendingChanges()
        for change in collector.changes(of: "SourceChannel") {
            let named = change.attributes.first { $0.name == "xmltvId" }
            let stored = named == nil ? try context.object(change.id, keys: ["xmltvId"])?["xmltvId"].stringValue : nil
            // A deleted channel took its programmes with it: resolved whole.
            if let id = named?.new.stringValue ?? named?.old.stringValue ?? stored { resolveLater(id, whole: change.kind == .delete) }
        }

        // A channel created bare for its programmes and completed here is one insert (the
        // collector folds the two); the merges counted its completion as an update.
        var tally = MergeTally(), ownChanges = MergeTally()
        for entity in ["Channel", "SourceChannel"] {
            for channel in collector.updatedObjects(of: entity) {
                tally.updated += 1
                if entity == "Channel" { ownChanges.updated += 1 }
                if let id = try context.object(channel, keys: ["xmltvId"])?["xmltvId"].stringValue { report.touchedChannelIDs.insert(id) }
            }
        }
        let created = createdChannels.count, createdOwn = createdChannels.filter { $0.entity == "Channel" }.count
        let completions = ownTally.updated + sharedTally.updated - tally.updated
        tally.inserted = ownTally.inserted + sharedTally.inserted + created
        tally.deleted = ownTally.deleted + sharedTally.deleted
        tally.unchanged = ownTally.unchanged + sharedTally.unchanged - (created - completions)
        report.channels = tally
        ownChanges.inserted = ownTally.inserted + createdOwn
        ownChanges.deleted = ownTally.deleted
        return ownChanges
    }

    /// Resolves the shown guide of every shared channel whose source rows this import changed
    /// (all of this source's shared channels when its priority changed).
    private func resolveSharedChannels() throws {
        if options.resolveAllChannels {
            let cursor = try context.fetch("SourceChannel", where: .compare("source", .equal, .string(options.source)), keys: ["xmltvId"])
            while let c = try cursor.next() { if let id = c["xmltvId"].stringValue { resolveLater(id, whole: true) } }
        }
        guard !channelsToResolve.isEmpty else { return }
        // Where this source's programmes changed, per channel (`finish` processed the pending
        // changes, so `changedSlots` has them all); whole when that is not known.
        var changed: [String: [Range<Int64>]] = [:]
        for (key, id) in channelsToResolve where !wholeChannels.contains(key) {
            guard let row = channelRows[key]?.row, row.entity == "SourceChannel" else { continue }
            changed[id] = changedSlots.ranges[row.rowID] ?? []
        }
        try sharedResolver().resolve(Array(channelsToResolve.values), changed: changed)
    }

    private func checkSafetyGuard() throws {
        let source = options.source
        var problems: [String] = []
        if report.programmesRead == 0 {
            problems.append("the guide holds no programmes")
        } else if !anyInFuture {
            problems.append("no programme in the guide ends in the future")
        }
        let deletedProgrammes = max(0, report.programmes.deleted - movedProgrammes)
        if storedProgrammesBefore > 0, Double(deletedProgrammes) > options.maxDeleteShare * Double(storedProgrammesBefore) {
            problems.append("it would delete \(deletedProgrammes) of the source's \(storedProgrammesBefore) stored programmes (more than \(Int(options.maxDeleteShare * 100)) %)")
        }
        let deletedChannels = max(0, report.channels.deleted - movedChannels)
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
