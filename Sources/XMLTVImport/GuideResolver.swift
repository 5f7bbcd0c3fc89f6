import Listings
import Merge
import ObjectGraph
import Primitives

/// Resolves the shown guide (`Channel`, `Programme`) of canonical channels from every source's own
/// rows (`SourceChannel`, `SourceProgramme`), by the rules of docs/design.md#several-sources-one-guide:
///
/// - sources are ranked by priority (higher first), equal priorities by name (UTF-8 bytes);
/// - on a channel, a source's programme is shown when it overlaps no shown programme of a
///   higher-ranked source ([start, stop) half-open; a programme without a stop claims
///   [start, start + 1)): the highest-ranked source with programmes there shows them all, lower
///   ones fill the gaps;
/// - a shown programme's missing attributes (null values, no credits, no categories) are filled
///   from lower-ranked programmes with the same start and stop, in rank order;
/// - a channel's attributes are the highest-ranked source's, missing ones filled the same way.
///
/// The shown rows are a function of the sources' rows and the priorities alone, so the order of
/// imports does not matter. Each shown programme carries a hash of what it was made from (the
/// winner's content hash, its source, the fillers' hashes): the merge into `Programme` compares
/// it with the stored one and reads the source rows only of programmes whose makings changed.
///
/// ```swift
/// let resolver = try GuideResolver(context: context, priorities: ["grabber": 10])
/// try resolver.resolve(["bbc1.uk"])
/// print(resolver.programmes.updated)
/// ```
public final class GuideResolver {
    let context: ObjectContext
    let priorities: [String: Int]
    let channelLayout: MergeLayout
    let programmeLayout: MergeLayout
    let merge: SortedMerge
    /// What changed in the shown guide.
    public private(set) var channels = MergeTally()
    public private(set) var programmes = MergeTally()
    /// The canonical ids of channels whose shown guide changed (a `Set<String>`, for reports:
    /// canonically equal ids count once there).
    public private(set) var changedChannels = Set<String>()

    /// `overwritable` are the user's whitelists (per entity name): what a resolution may
    /// overwrite in the shown rows; `programmeInsertValues` are set on shown programmes created,
    /// `stamps` written with each update (the feeds' revision stamps).
    public init(context: ObjectContext, priorities: [String: Int], overwritable: [String: Set<String>] = [:],
                programmeInsertValues: [String: Value] = [:], stamps: [String: UpdateStamp] = [:]) throws {
        self.context = context
        self.priorities = priorities
        let model = context.model
        // The winning source is the resolution's own bookkeeping: always written.
        programmeLayout = try ListingsLayouts.programme(model, alsoWritten: ["source"], overwritable: overwritable)
        let channel = try model.requireEntity("Channel")
        channelLayout = try MergeLayout(entity: channel, keys: ListingsMapper.channelKeys + ["source"],
                                        overwritable: (overwritable["Channel"] ?? Set(channel.overwritable)).union(["source"]))
        merge = SortedMerge(context: context, insertValues: programmeInsertValues, stamps: stamps)
    }

    /// Sources in rank order: priority (higher first), then name as UTF-8 bytes.
    func ranked(_ sources: [String]) -> [String] {
        sources.sorted { Self.ranks($0, above: $1, priorities: priorities) }
    }

    /// Whether source `a` ranks above `b`: a higher priority (0 when unset), then, between equal
    /// priorities, the name first in UTF-8 byte order.
    public static func ranks(_ a: String, above b: String, priorities: [String: Int]) -> Bool {
        let pa = priorities[a] ?? 0, pb = priorities[b] ?? 0
        if pa != pb { return pa > pb }
        return Value.compare(.string(a), .string(b)) < 0
    }

    /// Resolves these canonical channels (in UTF-8 byte order, so the work is deterministic).
    /// `changed` may give, per channel, the time ranges of the source programmes that changed
    /// (old and new [start, stop) of each inserted, updated or deleted one): only the shown
    /// programmes those can reach are merged again. A channel without ranges is resolved whole.
    public func resolve(_ ids: [String], changed: [String: [Range<Int64>]] = [:]) throws {
        for id in ids.sorted(by: { Value.compare(.string($0), .string($1)) < 0 }) {
            try resolveChannel(id, changed: changed[id])
            // A channel's changes at a time: observers (the change recorder among them) never hold
            // the whole guide's.
            try context.processPendingChanges()
        }
    }

    struct Slot {
        var rowID: Int64
        var start: Int64
        var clumpIndex: Int64
        var stop: Int64?
        var hash: Int64
        /// The end the overlap test uses: a programme without a stop (or an empty one) claims its start second.
        var end: Int64 { max(stop ?? start + 1, start + 1) }
    }

    /// One source's programmes on a channel as its import has just merged them: every row of
    /// that source there with a start in `window`, sorted by start and clump index. The resolution
    /// takes their slots and values from here instead of reading them back.
    struct MergedBlock {
        var source: String
        var window: Range<Int64>
        var programmes: [IncomingObject]
        /// Each programme's stop (an undecoded programme's values hold only its identifier).
        var stops: [Int64?]
        /// The programmes the source's merge has already decoded, by index
        /// (`SortedMerge.resolved`): not decoded a second time for the shown rows.
        var decoded: [Int: IncomingObject] = [:]
    }

    /// Resolves the programmes of one shared channel where `changed` says its source programmes
    /// changed: a re-import does it as soon as a source's block of them is merged (`merged`, when
    /// given), while the next block is read (the channel's own attributes are resolved by
    /// `resolve(_:changed:)` once every block is). Returns false, resolving nothing, when the
    /// channel has no shown programmes yet: it is to be resolved whole.
    func resolveProgrammes(of id: String, changed: [Range<Int64>], merged: MergedBlock? = nil) throws -> Bool {
        guard let canonical = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: []),
              try context.first("Programme", where: .related("channel", canonical.id), keys: []) != nil else { return false }
        try resolveProgrammes(id, canonical: canonical.id, sourceRows: rankedSourceChannels(id), changed: changed, firstTime: false,
                              merged: merged)
        try context.processPendingChanges()
        return true
    }

    /// Every source's row of a canonical channel, in rank order.
    private func rankedSourceChannels(_ id: String) throws -> [FetchedObject] {
        let rows = try context.fetchAll("SourceChannel", where: .compare("xmltvId", .equal, .string(id)), keys: ["source"] + ListingsMapper.channelKeys)
        let bySource = Dictionary(rows.map { ($0["source"].stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        return ranked(rows.compactMap { $0["source"].stringValue }).compactMap { bySource[$0] }
    }

    private func resolveChannel(_ id: String, changed: [Range<Int64>]?) throws {
        let sourceRows = try rankedSourceChannels(id)
        let stored = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: [])
        guard !sourceRows.isEmpty else {
            // No source has the channel any more.
            if let stored {
                programmes.deleted += try context.count("Programme", where: .related("channel", stored.id))
                try context.delete(stored.id)
                channels.deleted += 1
                changedChannels.insert(id)
            }
            return
        }

        // The channel: the first declared value of each attribute, in rank order.
        var values = ListingsMapper.channelKeys.map { key in sourceRows.lazy.map { $0[key] }.first { !$0.isNull } ?? .null }
        let declaring = sourceRows.first { row in ListingsMapper.channelKeys.dropFirst().contains { !row[$0].isNull } } ?? sourceRows[0]
        values.append(declaring["source"])
        let channelTally = try merge.merge(channelLayout, incoming: [IncomingObject(values: values)],
                                           scope: .compare("xmltvId", .equal, .string(id)), parent: nil)
        channels.inserted += channelTally.inserted
        channels.updated += channelTally.updated
        if channelTally.inserted + channelTally.updated > 0 { changedChannels.insert(id) }
        guard let canonical = stored?.id ?? (try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: []))?.id else { return }
        let firstTime = try context.first("Programme", where: .related("channel", canonical), keys: []) == nil
        if !firstTime, let changed, changed.isEmpty { return }   // the channel's own attributes alone
        try resolveProgrammes(id, canonical: canonical, sourceRows: sourceRows, changed: firstTime ? nil : changed, firstTime: firstTime)
    }

    /// The shown programmes of a channel from its sources' rows (`sourceRows`, in rank order):
    /// where `changed` can reach, or all of them.
    private func resolveProgrammes(_ id: String, canonical: ObjectID, sourceRows: [FetchedObject], changed: [Range<Int64>]?,
                                   firstTime: Bool, merged: MergedBlock? = nil) throws {
        // Every source's slots, in rank order; those of a block just merged from memory, the rest read.
        var levels: [(source: String, channel: ObjectID, slots: [Slot])] = []
        for row in sourceRows {
            let source = row["source"].stringValue ?? ""
            var slots: [Slot]
            if let merged, merged.source == source {
                slots = try storedSlots(row.id, .compare("start", .less, .date(merged.window.lowerBound)))
                for (i, p) in merged.programmes.enumerated() {
                    // A negative row id names the block's programme (`SourceRows.programme`).
                    slots.append(Slot(rowID: -1 - Int64(i), start: p.values[0].integerValue ?? 0, clumpIndex: p.values[1].integerValue ?? 0,
                                      stop: merged.stops[i], hash: p.contentHash ?? 0))
                }
                slots += try storedSlots(row.id, .compare("start", .greaterOrEqual, .date(merged.window.upperBound)))
            } else {
                slots = try storedSlots(row.id, nil)
            }
            if !slots.isEmpty { levels.append((source, row.id, slots)) }
        }

        // Only what the changes can reach, when they say where they are: the slots that start in
        // the region are all that overlap it (`reach`), so the rest need no look.
        var scope = ObjectPredicate.related("channel", canonical)
        if !firstTime, let changed, let region = Self.reach(of: changed, among: levels.map(\.slots)) {
            for i in levels.indices { levels[i].slots = Self.slots(levels[i].slots, startingIn: region) }
            // A query per range (`.union`): each seeks its range in the channel's identity index.
            scope = .union(region.map { .and([scope, .compare("start", .greaterOrEqual, .date($0.lowerBound)),
                                              .compare("start", .less, .date($0.upperBound))]) })
        }

        // Shown: each level against the shown programmes of the levels above it.
        var shown: [(level: Int, slot: Slot)] = []
        var above: [(start: Int64, end: Int64)] = []     // sorted by start
        var maxEnd: [Int64] = []                         // running maximum of `above`'s ends
        for (level, entry) in levels.enumerated() {
            var kept: [Slot] = []
            for slot in entry.slots where !overlaps(slot, above, maxEnd) { kept.append(slot) }
            shown += kept.map { (level, $0) }
            above += kept.map { ($0.start, $0.end) }
            above.sort { $0.start < $1.start }
            maxEnd = []
            maxEnd.reserveCapacity(above.count)
            for a in above { maxEnd.append(max(maxEnd.last ?? Int64.min, a.end)) }
        }
        shown.sort { ($0.slot.start, $0.slot.clumpIndex) < ($1.slot.start, $1.slot.clumpIndex) }

        // Lower levels' programmes by (start, stop), for filling: the first of each in start order.
        var bySlot: [[SlotKey: Slot]] = levels.map { _ in [:] }
        if levels.count > 1 {
            for (level, entry) in levels.enumerated() where level > 0 {
                for slot in entry.slots where bySlot[level][SlotKey(start: slot.start, stop: slot.stop)] == nil {
                    bySlot[level][SlotKey(start: slot.start, stop: slot.stop)] = slot
                }
            }
        }

        // A channel shown for the first time, or resolved again whole (it became shared, a
        // source's priority changed), needs every row or most: read them a source at a time.
        // Other resolutions need only the rows whose makings changed: read those at once, when the
        // merge has found which they are.
        let whole = firstTime || changed == nil
        let sourceProgrammes = SourceRows(context, channels: levels.map(\.channel), wholeChannels: whole,
                                          merged: merged?.programmes ?? [], decoded: merged?.decoded ?? [:])
        var incoming: [IncomingObject] = []
        incoming.reserveCapacity(shown.count)
        var makings: [[(level: Int, rowID: Int64)]] = []   // per incoming: the winner, then the fillers
        makings.reserveCapacity(shown.count)
        let sourceHashes = levels.map { ContentHash.of(IncomingObject(values: [.string($0.source)])) }
        for (level, slot) in shown {
            let source = levels[level].source
            var fillers: [(level: Int, slot: Slot)] = []
            for lower in (level + 1)..<levels.count {
                if let f = bySlot[lower][SlotKey(start: slot.start, stop: slot.stop)] { fillers.append((lower, f)) }
            }
            var h = ContentHash.Accumulator(UInt64(bitPattern: slot.hash))
            h.add(sourceHashes[level])
            for f in fillers { h.add(f.slot.hash) }
            let winner = (level, slot.rowID), fillerIDs = fillers.map { ($0.level, $0.slot.rowID) }, hash = h.value
            makings.append([winner] + fillerIDs)
            incoming.append(IncomingObject(values: [.date(slot.start), .integer(slot.clumpIndex)], contentHash: hash, resolve: {
                try GuideResolver.shownProgramme(winner, source: source, fillers: fillerIDs, from: sourceProgrammes, hash: hash)
            }))
        }
        // The rows of the shown programmes the merge will make, read at once rather than one by one.
        let tally = try merge.merge(programmeLayout, incoming: incoming, scope: scope, parent: canonical) { resolving in
            try sourceProgrammes.read(resolving.flatMap { makings[$0] })
        }
        programmes.inserted += tally.inserted
        programmes.updated += tally.updated
        programmes.deleted += tally.deleted
        if tally.inserted + tally.updated + tally.deleted > 0 { changedChannels.insert(id) }
    }

    /// A source channel's stored slots (those matching `condition`, if given), sorted by start and
    /// clump index. Read in place, no object per row: a re-import reads every slot of each shared
    /// channel it touched.
    private func storedSlots(_ channel: ObjectID, _ condition: ObjectPredicate?) throws -> [Slot] {
        let related = ObjectPredicate.related("channel", channel)
        let cursor = try context.fetch("SourceProgramme", where: condition.map { .and([related, $0]) } ?? related,
                                       orderBy: [SortKey("start"), SortKey("clumpIndex")], keys: ["start", "clumpIndex", "stop", "contentHash"])
        var slots: [Slot] = []
        while try cursor.step() {
            slots.append(Slot(rowID: cursor.rowID, start: cursor.integer(at: 0) ?? 0, clumpIndex: cursor.integer(at: 1) ?? 0,
                              stop: cursor.integer(at: 2), hash: cursor.integer(at: 3) ?? 0))
        }
        return slots
    }

    /// The time ranges whose shown programmes `changed` can alter, or nil when that is most of
    /// the channel. Whether a programme is shown depends only on the programmes of higher-ranked
    /// sources that overlap it, and its filling on those with its start and stop, so the ranges
    /// are widened by every programme (of any source) that overlaps them, until none reaches out:
    /// then every programme that overlaps a range lies inside it, and resolving the programmes
    /// that start inside the ranges gives what resolving the whole channel would give there.
    static func reach(of changed: [Range<Int64>], among levels: [[Slot]]) -> [Range<Int64>]? {
        var region = merged(changed)
        let all = levels.joined().map { $0.start..<$0.end }.sorted { $0.lowerBound < $1.lowerBound }
        while true {
            var extra: [Range<Int64>] = []
            var r = 0
            for slot in all {
                // The ranges are sorted and disjoint: step to the first that ends after the slot starts.
                while r < region.count && region[r].upperBound <= slot.lowerBound { r += 1 }
                guard r < region.count else { break }
                let range = region[r]
                if range.overlaps(slot) && (slot.lowerBound < range.lowerBound || slot.upperBound > range.upperBound) {
                    extra.append(slot)
                }
            }
            if extra.isEmpty { break }
            region = merged(region + extra)
        }
        // Many scattered ranges would make a long query: the whole channel is cheaper then.
        return region.count > 64 ? nil : region
    }

    /// The slots (sorted by start) that start in one of `ranges` (sorted, disjoint).
    static func slots(_ slots: [Slot], startingIn ranges: [Range<Int64>]) -> [Slot] {
        var kept: [Slot] = []
        var r = 0
        for slot in slots {
            while r < ranges.count && ranges[r].upperBound <= slot.start { r += 1 }
            if r == ranges.count { break }
            if ranges[r].contains(slot.start) { kept.append(slot) }
        }
        return kept
    }

    /// Sorted, disjoint ranges covering the same instants.
    static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    private struct SlotKey: Hashable {
        var start: Int64
        var stop: Int64?
    }

    /// Whether `slot` overlaps any interval of `above` (sorted by start; `maxEnd` their running maximum end).
    private func overlaps(_ slot: Slot, _ above: [(start: Int64, end: Int64)], _ maxEnd: [Int64]) -> Bool {
        // The last interval that starts before the slot ends.
        var low = 0, high = above.count
        while low < high {
            let mid = (low + high) / 2
            if above[mid].start < slot.end { low = mid + 1 } else { high = mid }
        }
        return low > 0 && maxEnd[low - 1] > slot.start
    }

    /// The shown programme made from the winner's row, its missing values filled from the fillers' rows.
    private static func shownProgramme(_ winner: (level: Int, rowID: Int64), source: String, fillers: [(level: Int, rowID: Int64)],
                                       from rows: SourceRows, hash: Int64) throws -> IncomingObject {
        guard var object = try rows.programme(winner.rowID, level: winner.level) else {
            throw ObjectGraphError.invalidOperation("the resolution lost source programme \(winner.rowID)")
        }
        for filler in fillers {
            guard let f = try rows.programme(filler.rowID, level: filler.level) else { continue }
            for i in object.values.indices where object.values[i].isNull { object.values[i] = f.values[i] }
            for c in object.children.indices where object.children[c].isEmpty { object.children[c] = f.children[c] }
        }
        object.values.append(.string(source))
        object.contentHash = hash
        return object
    }
}

/// The source programmes of one canonical channel, shaped as the import shapes them. With
/// `wholeChannels`, a level (one source's channel) is read at once when the merge first asks for
/// one of its rows: three queries per source instead of three per programme. Otherwise the rows
/// the merge will ask for are read at once before it does (`read`, three queries per 4096 rows);
/// a row it did not announce is read the same way, alone. The programmes of a block just merged
/// (`merged`, named by negative row ids: -1 the first) are not read at all.
/// The merge asks on its own thread, one request at a time.
private final class SourceRows: @unchecked Sendable {
    let context: ObjectContext
    let channels: [ObjectID]
    let wholeChannels: Bool
    let merged: [IncomingObject]
    /// Those of `merged` already decoded, by index.
    let decoded: [Int: IncomingObject]
    private var loaded: [[Int64: IncomingObject]?]

    init(_ context: ObjectContext, channels: [ObjectID], wholeChannels: Bool, merged: [IncomingObject] = [],
         decoded: [Int: IncomingObject] = [:]) {
        self.context = context
        self.channels = channels
        self.wholeChannels = wholeChannels
        self.merged = merged
        self.decoded = decoded
        loaded = channels.map { _ in nil }
    }

    /// Reads these rows at once, for `programme` to find (levels read whole have them anyway).
    func read(_ rows: [(level: Int, rowID: Int64)]) throws {
        guard !wholeChannels else { return }
        let stored = rows.lazy.map(\.rowID).filter { $0 >= 0 }
        for chunk in Array(stored).chunks(of: 4096) { announced.merge(try load(.rowIDs(chunk))) { $1 } }
    }

    /// Rows read by `read`.
    private var announced: [Int64: IncomingObject] = [:]

    func programme(_ rowID: Int64, level: Int) throws -> IncomingObject? {
        if rowID < 0 {
            let index = Int(-1 - rowID)
            let p = try decoded[index] ?? merged[index].resolved()
            return IncomingObject(values: p.values, children: p.children)
        }
        if let known = announced[rowID] { return known }
        if !wholeChannels {
            try read([(level, rowID)])
            return announced[rowID]
        }
        if loaded[level] == nil { loaded[level] = try load(.related("channel", channels[level])) }
        return loaded[level]?[rowID]
    }

    private func load(_ predicate: ObjectPredicate) throws -> [Int64: IncomingObject] {
        var programmes: [Int64: IncomingObject] = [:]
        for p in try context.fetchAll("SourceProgramme", where: predicate, keys: ListingsMapper.programmeKeys) {
            programmes[p.id.rowID] = IncomingObject(values: p.values, children: [[], []])
        }
        let ids = programmes.keys.sorted().map { Value.integer($0) }
        // Members in the order the import gives them (credits by role and name, categories by name
        // and language), owner first as the identity index has them (so SQLite sorts nothing); in
        // chunks well under SQLite's limit of bound parameters.
        for chunk in ids.chunks(of: 4096) {
            for (child, entity, keys, order) in [(0, "SourceCredit", ListingsMapper.creditKeys, [SortKey("programme"), SortKey("role"), SortKey("name")]),
                                                 (1, "SourceCategory", ListingsMapper.categoryKeys, [SortKey("programme"), SortKey("name"), SortKey("lang")])] {
                for m in try context.fetchAll(entity, where: .isIn("programme", chunk), orderBy: order, keys: keys + ["programme"]) {
                    guard let owner = m["programme"].integerValue else { continue }
                    programmes[owner]?.children[child].append(IncomingObject(values: Array(m.values.prefix(keys.count))))
                }
            }
        }
        return programmes
    }
}

extension MergeChange {
    /// A change to a source's row, named as the listings entity it stands for (the report and
    /// change-file readers know `Channel` and `Programme`; the row id still names the source row).
    var asListings: MergeChange {
        let names = ["SourceChannel": "Channel", "SourceProgramme": "Programme", "SourceCredit": "Credit", "SourceCategory": "Category"]
        guard let name = names[entity] else { return self }
        return MergeChange(kind: kind, entity: name, id: id, attributes: attributes.filter { $0.name != "source" },
                           relationships: relationships, owner: owner)
    }
}
