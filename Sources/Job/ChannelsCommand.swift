import Foundation
import Listings
import ObjectGraph
import Playlists
import Primitives
import XMLTVExport
import XMLTVImport

/// `tvimport channels`: every channel as each source provides it, the source that wins it, and
/// (`--unmapped`) the alias lines that would join channels that sources name differently.
///
/// Ids are stored as read, that is after the config's aliases (mapping happens while reading,
/// docs/design.md#several-sources-one-guide), so a channel's id is its canonical id and a source id
/// that an alias maps never shows up on its own.
public enum ChannelsCommand {
    /// One channel of one source.
    struct Row {
        var source: String
        var id: String
        var displayNames: [String]
        var programmes: Int
        var winner: String?
        var priority: Int
    }

    public static func run(database: String, source: String?, unmapped: Bool, json: Bool) throws -> String {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let priorities = try SourcePriorities.all(in: store)
        var rows = try store.read { context in try Self.rows(context, priorities: priorities) }
        if unmapped {
            let suggestions = Self.suggestions(rows)
            return json ? render(json: .array(suggestions.map { .object([
                                "source": .string($0.row.source), "id": .string($0.row.id), "displayName": .string($0.row.displayNames.first ?? ""),
                                "canonical": .string($0.canonical), "canonicalSource": .string($0.canonicalSource), "aliasLine": .string($0.aliasLine)]) }))
                        : suggestions.isEmpty ? "No unmapped channels look like another source's channel."
                        : (["Channels that look like another source's (add the line under \"channels\" in the config):"]
                           + suggestions.map { "  \($0.row.source) \($0.row.id) (\($0.row.displayNames.first ?? "")) = \($0.canonicalSource) \($0.canonical):  \($0.aliasLine)" })
                            .joined(separator: "\n")
        }
        if let source { rows = rows.filter { $0.source == source } }
        if json {
            return render(json: .array(rows.map { r in .object([
                "source": .string(r.source), "id": .string(r.id), "displayNames": .array(r.displayNames.map(JSONValue.string)),
                "programmes": .integer(Int64(r.programmes)), "canonical": .string(r.id), "winner": r.winner.map(JSONValue.string) ?? .null,
                "priority": .integer(Int64(r.priority))]) }))
        }
        guard !rows.isEmpty else { return "No channels stored\(source.map { " for source \($0)" } ?? "")." }
        var lines = ["source\tpriority\tid\tprogrammes\twinner\tdisplay names"]
        for r in rows {
            lines.append("\(r.source)\t\(r.priority)\t\(r.id)\t\(r.programmes)\t\(r.winner ?? "-")\t\(r.displayNames.joined(separator: " | "))")
        }
        return lines.joined(separator: "\n")
    }

    /// `--playlist`: each entry of an M3U playlist, the shown channel it matches and why
    /// (`PlaylistMatcher`), or the nearest display names.
    public static func run(database: String, playlist: String, config: JobConfig?, json: Bool) throws -> String {
        let model = try StoreAccess.model(forDatabase: database, userModules: config?.modules ?? [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let list = try PlaylistStep.load(playlist)
        let matches = try PlaylistGuideExporter(store: store, aliases: config?.channelAliases ?? [:]).matches(list)
        if json { return render(json: .array(matches.map(PlaylistStep.json))) }
        var lines = ["line\tname\ttvg-id\tchannel\twhy"]
        for m in matches {
            let why = m.channel == nil ? m.reason + (m.nearest.isEmpty ? "" : "; nearest: " + m.nearest.joined(separator: " | ")) : m.reason
            lines.append("\(m.entry.line)\t\(m.entry.name)\t\(m.entry.tvgID ?? "-")\t\(m.channel ?? "-")\t\(why)")
        }
        let unmatched = matches.filter { $0.channel == nil }.count
        lines.append("\(matches.count - unmatched) of \(matches.count) entries matched")
        return lines.joined(separator: "\n")
    }

    /// Every channel of every source (as its last import gave it), with the source that the
    /// shown guide takes the channel's name from, sorted by source then id. A channel that one
    /// source alone has is stored once, as shown; a shared one as each source's own row
    /// (docs/design.md#several-sources-one-guide).
    static func rows(_ context: ObjectContext, priorities: [String: Int]) throws -> [Row] {
        func programmeCounts(_ entity: String) throws -> [Int64: Int] {
            var counts: [Int64: Int] = [:]
            let programmes = try context.fetch(entity, keys: ["channel"])
            while try programmes.step() {
                if let channel = programmes.value(at: 0).integerValue { counts[channel, default: 0] += 1 }
            }
            return counts
        }
        func names(_ c: FetchedObject) -> [String] {
            [c["displayName"].stringValue].compactMap { $0 } + (c["otherNames"].stringValue?.split(separator: "\n").map(String.init) ?? [])
        }
        let keys = ["source", "xmltvId", "displayName", "otherNames"]
        var rows: [Row] = []
        var winners: [String: String] = [:]
        let shown = try context.fetchAll("Channel", keys: keys)
        for c in shown { if let id = c["xmltvId"].stringValue { winners[id] = c["source"].stringValue } }
        let sourceCounts = try programmeCounts("SourceProgramme")
        var shared = Set<[UInt8]>()   // ids as bytes (docs/design.md#identifiers-are-bytes)
        for c in try context.fetchAll("SourceChannel", keys: keys) {
            let id = c["xmltvId"].stringValue ?? "", source = c["source"].stringValue ?? ""
            shared.insert(Array(id.utf8))
            rows.append(Row(source: source, id: id, displayNames: names(c), programmes: sourceCounts[c.id.rowID] ?? 0, winner: winners[id],
                            priority: priorities[source] ?? 0))
        }
        let ownCounts = try programmeCounts("Programme")
        for c in shown {
            guard let id = c["xmltvId"].stringValue, !shared.contains(Array(id.utf8)), let source = c["source"].stringValue else { continue }
            rows.append(Row(source: source, id: id, displayNames: names(c), programmes: ownCounts[c.id.rowID] ?? 0, winner: source,
                            priority: priorities[source] ?? 0))
        }
        return rows.sorted { a, b in
            a.source != b.source ? Value.compare(.string(a.source), .string(b.source)) < 0 : Value.compare(.string(a.id), .string(b.id)) < 0
        }
    }

    struct Suggestion {
        var row: Row
        var canonical: String
        var canonicalSource: String
        var aliasLine: String
    }

    /// Channels of a source that look like (same normalised display name) a channel that another
    /// source wins under another id: one id is kept and the others become its aliases. The id
    /// kept is the one more sources use, then that of the source with more channels (a provider's
    /// `RTE2.ie`, not a grabber's made-up `rte2.grab`), then the higher-ranked source's.
    static func suggestions(_ rows: [Row]) -> [Suggestion] {
        let channelsPerSource = Dictionary(grouping: rows, by: \.source).mapValues(\.count)
        let sourcesPerID = Dictionary(grouping: rows, by: \.id).mapValues { Set($0.map(\.source)).count }
        var byName: [String: [Row]] = [:]
        for r in rows where r.programmes > 0 {
            for name in Set(r.displayNames.map(normalisedName)) where !name.isEmpty { byName[name, default: []].append(r) }
        }
        var seen = Set<String>()
        var result: [Suggestion] = []
        for name in byName.keys.sorted() {
            let group = byName[name]!
            let ids = Set(group.map(\.id))
            guard ids.count > 1 else { continue }
            let priorities = Dictionary(group.map { ($0.source, $0.priority) }, uniquingKeysWith: { a, _ in a })
            let keeper = group.filter { $0.winner == $0.source }.min { a, b in
                let (usersA, usersB) = (sourcesPerID[a.id] ?? 0, sourcesPerID[b.id] ?? 0)
                if usersA != usersB { return usersA > usersB }
                let (channelsA, channelsB) = (channelsPerSource[a.source] ?? 0, channelsPerSource[b.source] ?? 0)
                if channelsA != channelsB { return channelsA > channelsB }
                return GuideResolver.ranks(a.source, above: b.source, priorities: priorities)
            } ?? group[0]
            for r in group where r.id != keeper.id && r.source != keeper.source && seen.insert(r.source + "\t" + r.id).inserted {
                result.append(Suggestion(row: r, canonical: keeper.id, canonicalSource: keeper.source,
                                         aliasLine: aliasLine(canonical: keeper.id, alias: r.id)))
            }
        }
        return result.sorted { ($0.row.source, $0.row.id) < ($1.row.source, $1.row.id) }
    }

    /// The display name as compared by `--unmapped` (the rules `tvimport help channels` lists):
    /// a playlist's matching key (`ChannelNameKey`: case, accents, width, punctuation and
    /// bracketed notes ignored, "+1" kept as a word of its own), with "SD" dropped as well as
    /// "HD", "UHD", "FHD" and "4K": two sources' names of one channel, not a player's stream.
    public static func normalisedName(_ name: String) -> String {
        ChannelNameKey(name, ignoring: droppedLastWords).key
    }

    /// The last words `normalisedName` drops (made once: it runs for every display name).
    private static let droppedLastWords = ChannelNameKey.qualitySuffixes.union(["sd"])

    /// The line to add under "channels" in a config: `"CANONICAL": {"aliases": ["ALIAS"]}`, with
    /// the ids written as JSON strings (escaped).
    static func aliasLine(canonical: String, alias: String) -> String {
        var text = JSONText()
        text.append(.string(canonical))
        text.raw(": {\"aliases\": [")
        text.append(.string(alias))
        text.raw("]}")
        return text.string
    }

    private static func render(json: JSONValue) -> String {
        var text = JSONText()
        text.append(json, pretty: true)
        return text.string
    }
}
