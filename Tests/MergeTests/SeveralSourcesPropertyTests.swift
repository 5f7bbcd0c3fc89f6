import Foundation
import Listings
import ObjectGraph
import TestSupport
import Testing
import XMLTVImport

/// The shown guide of several sources (docs/design.md#several-sources-one-guide) against a
/// reference written from the rules alone: random sets of 2 to 4 sources with random priorities,
/// channel ids spelled differently (mapped by aliases) and overlapping schedules, imported in
/// random orders, with random re-imports (identical, revised, new schedules, dropped channels) and priority
/// changes. After every import the stored `Channel`/`Programme` rows must equal the reference
/// computed from each source's last applied import; an identical re-import must report no change.
@Suite struct SeveralSourcesPropertyTests {
    /// Canonical channels and the ids sources use for them.
    static let spellings: [String: [String]] = ["c1.tv": ["c1.tv", "C1.HD"], "c2.tv": ["c2.tv", "ctwo"], "c3.tv": ["c3.tv"]]
    static let aliases: [String: String] = ["C1.HD": "c1.tv", "ctwo": "c2.tv"]
    static let span: Int64 = 6 * hour

    struct Slot: Hashable {
        var start: Int64
        var stop: Int64
        var title: String
        var desc: String?
    }

    /// One source's import: per canonical channel, the id it is spelled with and its schedule.
    struct SourceGuide {
        var channels: [String: (spelling: String, slots: [Slot])]

        var xml: String {
            let ordered = channels.keys.sorted()
            var programmes: [GP] = []
            for c in ordered {
                let (spelling, slots) = channels[c]!
                programmes += slots.map { GP(channel: spelling, start: $0.start, stop: $0.stop, title: $0.title, desc: $0.desc) }
            }
            return guideXML(channels: ordered.map { channels[$0]!.spelling }, programmes: programmes)
        }
    }

    /// A schedule over exactly [base, base + span) (so a re-import's window covers every earlier
    /// row: no history), in steps of 15 minutes, 15 to 90 minutes long, with a few gaps.
    static func schedule(_ g: inout SplitMix64, source: String, channel: String) -> [Slot] {
        var slots: [Slot] = []
        var t = base
        while t < base + span {
            let stop = min(base + span, t + Int64(g.int(1...6)) * 900)
            let n = g.int(0...99)
            slots.append(Slot(start: t, stop: stop, title: "\(source) \(channel) \(n)", desc: g.chance(0.5) ? "about \(source) \(n)" : nil))
            t = stop
            // Now and then a gap, where lower sources show through (never at the end: the last
            // programme ends at base + span).
            if t < base + span - 900, g.chance(0.2) { t = min(t + Int64(g.int(1...4)) * 900, base + span - 900) }
        }
        return slots
    }

    static func guide(_ g: inout SplitMix64, source: String, channels: [String]) -> SourceGuide {
        var result: [String: (String, [Slot])] = [:]
        for c in channels {
            let spelling = spellings[c]![g.int(0...(spellings[c]!.count - 1))]
            result[c] = (spelling, schedule(&g, source: source, channel: c))
        }
        return SourceGuide(channels: result)
    }

    /// A night's revision of a source's guide: on some channels one programme retitled, split,
    /// merged with the next or dropped (leaving a gap), the first start and last stop kept (so the
    /// window still covers every earlier row). The resolution of such a re-import looks only at
    /// the changed programmes' reach (`GuideResolver.reach(of:among:)`).
    static func revised(_ guide: SourceGuide, _ g: inout SplitMix64) -> SourceGuide {
        var result = guide
        for c in guide.channels.keys.sorted() where g.chance(0.6) {
            var slots = guide.channels[c]!.slots
            let i = g.int(0...(slots.count - 1))
            switch g.int(0...3) {
            case 0:
                slots[i].title += " revised"
                slots[i].desc = slots[i].desc == nil ? "revised" : nil
            case 1 where slots[i].stop - slots[i].start >= 1800:
                let middle = slots[i].start + (slots[i].stop - slots[i].start) / 1800 * 900
                var second = slots[i]
                second.start = middle
                second.title += " part 2"
                slots[i].stop = middle
                slots.insert(second, at: i + 1)
            case 2 where i > 0 && i < slots.count - 1:
                slots.remove(at: i)
            case 3 where i < slots.count - 1:
                slots[i].stop = slots[i + 1].stop
                slots.remove(at: i + 1)
            default:
                slots[i].title += " again"
            }
            result.channels[c]!.slots = slots
        }
        return result
    }

    /// The contract's rules, written plainly: what each canonical channel shows.
    static func reference(_ applied: [String: SourceGuide], priorities: [String: Int]) -> (channels: [String], programmes: [String]) {
        let ranked = applied.keys.sorted { a, b in
            let pa = priorities[a] ?? 0, pb = priorities[b] ?? 0
            return pa != pb ? pa > pb : Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
        }
        var channels: [String] = [], programmes: [String] = []
        let ids = Set(applied.values.flatMap(\.channels.keys))
        for c in ids.sorted() {
            let having = ranked.filter { applied[$0]!.channels[c] != nil }
            channels.append("\(c) \(applied[having[0]]!.channels[c]!.spelling) name")
            var shown: [(source: Int, slot: Slot)] = []
            for (rank, source) in having.enumerated() {
                for p in applied[source]!.channels[c]!.slots
                where !shown.contains(where: { $0.source < rank && $0.slot.start < p.stop && p.start < $0.slot.stop }) {
                    shown.append((rank, p))
                }
            }
            for (rank, p) in shown {
                var desc = p.desc
                if desc == nil {
                    for lower in having.dropFirst(rank + 1) {
                        if let same = applied[lower]!.channels[c]!.slots.first(where: { $0.start == p.start && $0.stop == p.stop }), let d = same.desc {
                            desc = d
                            break
                        }
                    }
                }
                programmes.append("\(c) \(p.start) \(p.stop) \(p.title) \(desc ?? "-") \(having[rank])")
            }
        }
        return (channels.sorted(), programmes.sorted())
    }

    static func shown(_ store: Store) throws -> (channels: [String], programmes: [String]) {
        try store.read { context in
            var ids: [Int64: String] = [:]
            var channels: [String] = []
            for c in try context.fetchAll("Channel", keys: ["xmltvId", "displayName"]) {
                ids[c.id.rowID] = c["xmltvId"].stringValue
                channels.append("\(c["xmltvId"].stringValue ?? "?") \(c["displayName"].stringValue ?? "-")")
            }
            let programmes = try context.fetchAll("Programme", keys: ["channel", "start", "stop", "title", "desc", "source"]).map { p in
                "\(ids[p["channel"].integerValue ?? 0] ?? "?") \(p["start"].integerValue ?? 0) \(p["stop"].integerValue ?? 0) "
                    + "\(p["title"].stringValue ?? "-") \(p["desc"].stringValue ?? "-") \(p["source"].stringValue ?? "-")"
            }
            return (channels.sorted(), programmes.sorted())
        }
    }

    @Test(arguments: 0..<40)
    func theShownGuideFollowsTheRulesWhateverTheOrder(seed: Int) throws {
        var g = SplitMix64(state: UInt64(seed) &* 7919 &+ 1)
        let h = try Harness()
        let names = ["a", "b", "c", "d"].prefix(g.int(2...4)).map { $0 }
        var priorities: [String: Int] = [:]
        var channelsOf: [String: [String]] = [:]
        for s in names {
            priorities[s] = g.int(0...2)
            channelsOf[s] = Self.spellings.keys.sorted().filter { _ in g.chance(0.7) }
            if channelsOf[s]!.isEmpty { channelsOf[s] = ["c1.tv"] }
        }
        var applied: [String: SourceGuide] = [:]
        var last: [String: String] = [:]
        for step in 0..<g.int(4...10) {
            let source = names[g.int(0...(names.count - 1))]
            var options = h.options(source, force: true)
            options.reader.channelAliases = Self.aliases
            let xml: String
            let identical = last[source] != nil && g.chance(0.3)
            if identical {
                xml = last[source]!
            } else if let previous = applied[source], g.chance(0.4) {
                let guide = Self.revised(previous, &g)
                applied[source] = guide
                xml = guide.xml
            } else {
                if applied[source] != nil, g.chance(0.3), channelsOf[source]!.count > 1 { channelsOf[source]!.removeLast() }
                let guide = Self.guide(&g, source: source, channels: channelsOf[source]!)
                applied[source] = guide
                xml = guide.xml
            }
            if g.chance(0.15) {
                priorities[source] = g.int(0...2)
                options.resolveAllChannels = true
            }
            options.priorities = priorities
            let r = try importGuide(into: h.store, files: [h.dir.write(xml)], options: options, dryRun: false)
            last[source] = xml
            if identical && !options.resolveAllChannels {
                #expect(!r.changedAnything, "seed \(seed) step \(step): an identical re-import of \(source) changed something")
            }
            let expected = Self.reference(applied, priorities: priorities)
            let actual = try Self.shown(h.store)
            #expect(actual.channels == expected.channels, "seed \(seed) step \(step) (\(source))")
            #expect(actual.programmes == expected.programmes, "seed \(seed) step \(step) (\(source)): \(Set(actual.programmes).symmetricDifference(expected.programmes).sorted().prefix(6))")
        }
    }
}
