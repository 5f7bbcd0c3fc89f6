import Listings
import Merge
import ObjectGraph
import Primitives

/// A timeshifted channel of the config (`"channels": {"rte1plus1.ie": {"timeshiftOf": "RTEOne.ie",
/// "hours": 1, "displayName": "RTÉ One +1"}}`).
public struct TimeshiftRule: Sendable, Hashable {
    /// The timeshifted channel's own id.
    public var channel: String
    /// The canonical id of the channel it repeats.
    public var original: String
    /// How much later (negative: earlier) its programmes are, in seconds.
    public var seconds: Int64
    /// Its display name; nil: the original's with "+N" (or "-N") after it.
    public var displayName: String?

    public init(channel: String, original: String, seconds: Int64, displayName: String? = nil) {
        self.channel = channel
        self.original = original
        self.seconds = seconds
        self.displayName = displayName
    }

    /// The `source` of a timeshifted channel's rows: made from another channel, never read.
    public var source: String { Self.sourcePrefix + original }
    public static let sourcePrefix = "timeshift:"

    /// Why `name` cannot name a source of listings, or nil when it can: it must not be empty, hold
    /// a control character, nor begin like a timeshifted channel's rows (those would be taken for
    /// rows the rules made).
    public static func problem(withSourceName name: String) -> String? {
        if name.isEmpty { return "a non-empty name" }
        // A name keys the source's rows and side tables, and is bound as text: a control
        // character (a NUL above all, where some bindings end the text) would make it another's.
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "a name without control characters" }
        if name.hasPrefix(sourcePrefix) { return "a name that does not begin with \"\(sourcePrefix)\" (the timeshifted channels' own)" }
        return nil
    }

    /// "+1", "-2", "+1.5".
    var hoursText: String {
        let sign = seconds < 0 ? "-" : "+"
        let m = seconds.magnitude
        return m % 3600 == 0 ? "\(sign)\(m / 3600)" : "\(sign)\(m / 3600).5"
    }
}

/// Timeshifted channels are derived state (docs/design.md#timeshifted-channels): their shown
/// rows (`Channel`, `Programme` with credits and categories) are the original's shown rows with
/// the times moved, made again inside every import's transaction, so that they follow each
/// import, and with it each undo and apply (the change file holds their changes beside the
/// original's) and each config change (the rules are part of every source's settings, so `run`
/// imports again when they change). Each timeshifted channel's programmes have their own identity
/// (its id, the moved start): their own UIDs, and edits and hidden flags of their own, which the
/// merge never overwrites. A rule removed from the config removes its channel.
public struct TimeshiftDeriver {
    let context: ObjectContext
    let rules: [TimeshiftRule]
    let channelLayout: MergeLayout
    let programmeLayout: MergeLayout
    let merge: SortedMerge

    public init(context: ObjectContext, rules: [TimeshiftRule], overwritable: [String: Set<String>] = [:],
                programmeInsertValues: [String: Value] = [:], stamps: [String: UpdateStamp] = [:]) throws {
        self.context = context
        self.rules = rules.sorted { Array($0.channel.utf8).lexicographicallyPrecedes(Array($1.channel.utf8)) }
        let model = context.model
        programmeLayout = try ListingsLayouts.programme(model, alsoWritten: ["source"], overwritable: overwritable)
        let channel = try model.requireEntity("Channel")
        channelLayout = try MergeLayout(entity: channel, keys: ListingsMapper.channelKeys + ["source"],
                                        overwritable: (overwritable["Channel"] ?? Set(channel.overwritable)).union(["source"]))
        merge = SortedMerge(context: context, insertValues: programmeInsertValues, stamps: stamps)
    }

    /// Makes every timeshifted channel follow its original, and removes those no rule names.
    @discardableResult
    public func derive() throws -> (channels: MergeTally, programmes: MergeTally) {
        var channels = MergeTally(), programmes = MergeTally()
        let configured = Set(rules.map(\.channel))
        // Channels made by a rule that is gone.
        let made = try context.fetchAll("Channel", where: Self.madeByRules, keys: ["xmltvId"])
        for row in made where !configured.contains(row["xmltvId"].stringValue ?? "") {
            programmes.deleted += try context.count("Programme", where: .related("channel", row.id))
            try context.delete(row.id)
            channels.deleted += 1
        }
        for rule in rules {
            let (c, p) = try derive(rule)
            channels += c
            programmes += p
            try context.processPendingChanges()
        }
        return (channels, programmes)
    }

    /// Rows whose source starts with "timeshift:" (";" follows ":" in UTF-8).
    static let madeByRules = ObjectPredicate.and([.compare("source", .greaterOrEqual, .string(TimeshiftRule.sourcePrefix)),
                                                   .compare("source", .less, .string("timeshift;"))])

    private func derive(_ rule: TimeshiftRule) throws -> (MergeTally, MergeTally) {
        let scope = ObjectPredicate.compare("xmltvId", .equal, .string(rule.channel))
        let stored = try context.first("Channel", where: scope, keys: ["source"])
        if let stored, stored["source"].stringValue?.hasPrefix(TimeshiftRule.sourcePrefix) != true {
            // A source gives a channel of that id: the guide's own wins, nothing is derived.
            return (MergeTally(), MergeTally())
        }
        guard let original = try context.first("Channel", where: .compare("xmltvId", .equal, .string(rule.original)),
                                                keys: ListingsMapper.channelKeys) else {
            var tally = (MergeTally(), MergeTally())
            if let stored {
                tally.1.deleted = try context.count("Programme", where: .related("channel", stored.id))
                try context.delete(stored.id)
                tally.0.deleted = 1
            }
            return tally
        }
        var values = ListingsMapper.channelKeys.map { original[$0] }
        values[0] = .string(rule.channel)
        let name = rule.displayName ?? original["displayName"].stringValue.map { "\($0) \(rule.hoursText)" }
        values[1] = name.map(Value.string) ?? .null
        values[2] = .null   // the original's other names are the original's
        values.append(.string(rule.source))
        let channelTally = try merge.merge(channelLayout, incoming: [IncomingObject(values: values)], scope: scope, parent: nil)
        guard let shifted = try context.first("Channel", where: scope, keys: []) else { return (channelTally, MergeTally()) }
        let incoming = try shiftedProgrammes(of: original.id, by: rule.seconds, source: rule.source)
        let programmeTally = try merge.merge(programmeLayout, incoming: incoming, scope: .related("channel", shifted.id), parent: shifted.id)
        return (channelTally, programmeTally)
    }

    /// The original's shown programmes with their credits and categories, moved by `seconds`
    /// (clamped at the ends of time rather than trapping), in (start, clump index) order.
    private func shiftedProgrammes(of channel: ObjectID, by seconds: Int64, source: String) throws -> [IncomingObject] {
        let rows = try context.fetchAll("Programme", where: .related("channel", channel), orderBy: [SortKey("start"), SortKey("clumpIndex")],
                                        keys: ListingsMapper.programmeKeys + ["contentHash"])
        var programmes: [IncomingObject] = []
        programmes.reserveCapacity(rows.count)
        var index: [Int64: Int] = [:]
        let startIndex = ListingsMapper.programmeKeys.firstIndex(of: "start")!, stopIndex = ListingsMapper.programmeKeys.firstIndex(of: "stop")!
        for row in rows {
            var values = Array(row.values.prefix(ListingsMapper.programmeKeys.count))
            for i in [startIndex, stopIndex] {
                if let t = values[i].integerValue { values[i] = .date(Self.adding(t, seconds)) }
            }
            values.append(.string(source))
            var object = IncomingObject(values: values, children: [[], []])
            // The original's hash with the shift: equal when neither changed, so the merge skips it.
            if let hash = row["contentHash"].integerValue {
                var h = ContentHash.Accumulator(UInt64(bitPattern: hash))
                h.add(seconds)
                object.contentHash = h.value
            }
            index[row.id.rowID] = programmes.count
            programmes.append(object)
        }
        let ids = rows.map { Value.integer($0.id.rowID) }
        for chunk in ids.chunks(of: 4096) {
            for (child, entity, keys, order) in [(0, "Credit", ListingsMapper.creditKeys, [SortKey("programme"), SortKey("role"), SortKey("name")]),
                                                 (1, "Category", ListingsMapper.categoryKeys, [SortKey("programme"), SortKey("name"), SortKey("lang")])] {
                for m in try context.fetchAll(entity, where: .isIn("programme", Array(chunk)), orderBy: order, keys: keys + ["programme"]) {
                    guard let owner = m["programme"].integerValue, let i = index[owner] else { continue }
                    programmes[i].children[child].append(IncomingObject(values: Array(m.values.prefix(keys.count))))
                }
            }
        }
        return programmes
    }

    static func adding(_ t: Int64, _ seconds: Int64) -> Int64 {
        let (sum, overflow) = t.addingReportingOverflow(seconds)
        return overflow ? (seconds > 0 ? .max : .min) : sum
    }
}
