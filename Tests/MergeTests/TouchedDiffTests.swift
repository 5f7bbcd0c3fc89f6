import Foundation
import Listings
import Merge
import ObjectGraph
import Testing
import XMLTVImport
import TestSupport

/// A change file reads only the programmes an import wrote (`TouchedObjectsObserver`): it must
/// say exactly what the full diff of the two databases says.
@Suite struct TouchedDiffTests {
    @Test(arguments: [UInt64(3), 11, 99])
    func aDiffOfTheTouchedProgrammesEqualsTheFullDiff(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let h = try Harness()
        let titles = ["News", "Film", "Quiz", "Sport"]
        let people = [("actor", "Ann"), ("actor", "Bo"), ("director", "Cy"), ("presenter", "Di")]
        let genres: [(String, String?)] = [("Drama", "en"), ("Drame", "fr"), ("Sport", nil), ("Kids", nil)]
        var nonEmptyDiffs = 0
        for k in 0..<6 {
            // Five channels, of which one may drop out (deleted with its programmes); each with a
            // day of programmes that change a little from guide to guide.
            let channels = ["c0", "c1", "c2", "c3", "c4"].filter { $0 != "c4" || k % 3 != 2 }
            var programmes: [GP] = []
            for c in channels {
                for slot in 0..<12 where Int.random(in: 0..<10, using: &rng) > 0 {
                    let start = base + Int64(slot) * hour
                    var p = GP(channel: c, start: start, stop: start + hour, title: titles.randomElement(using: &rng)!)
                    if Bool.random(using: &rng) { p.desc = "About \(p.title) \(Int.random(in: 0..<3, using: &rng))" }
                    p.credits = people.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
                    p.categories = genres.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
                    programmes.append(p)
                }
            }
            let beforePath = h.dir.path + "/before-\(k).sqlite"
            let before = try h.store.copy(toPath: beforePath)
            let touched = TouchedObjectsObserver(entities: ["Programme"])
            h.store.addObserver(touched)
            let report = try h.run(channels: channels, programmes, force: true)

            let diff = try GraphDiff(model: h.store.model)
            var full: [ObjectDiff] = [], narrow: [ObjectDiff] = []
            try before.read { old in
                try h.store.read { new in
                    try diff.diff(from: old, to: new) { full.append($0) }
                    try diff.diff(from: old, to: new, comparing: { entity, id in
                        entity != "Channel" || report.touchedChannelIDs.contains(id.first?.value.stringValue ?? "")
                    }, touched: touched.touched) { narrow.append($0) }
                }
            }
            let same = narrow == full   // not inside #expect: it would print both documents whole
            #expect(same, "seed \(seed) guide \(k): \(ChangeDocument(model: "", changes: narrow).objectCount) nodes, full diff \(ChangeDocument(model: "", changes: full).objectCount)")
            if !full.isEmpty { nonEmptyDiffs += 1 }
            // Every programme the import wrote is in the set, and nothing else.
            let written = report.programmes.inserted + report.programmes.updated + report.programmes.deleted
            #expect(touched.touched["Programme"]?.count ?? 0 >= written)
        }
        #expect(nonEmptyDiffs >= 5, "the guides must really change")
    }
}

/// The change file is recorded from the store's own change stream while the merge runs
/// (`ChangeRecorder`): once squashed, it must say exactly what the full diff of the two databases
/// says, and a transaction that rolls back must leave nothing in it.
@Suite struct RecordedChangeTests {
    /// Roots and members in identifier order (the recorder writes them in the order the merge
    /// made them).
    /// A member's reference to its owner is left out of recorded files (the nesting says it;
    /// `apply` sets it from there): it is dropped from both sides here.
    static func normalised(_ nodes: [ObjectDiff], nested: Bool = false) -> [ObjectDiff] {
        nodes.map { node in
            var node = node
            for (name, r) in node.relationships {
                if nested && r.members.isEmpty { node.relationships[name] = nil; continue }
                node.relationships[name]?.members = normalised(r.members, nested: true)
            }
            return node
        }.sorted { ($0.entityName, $0.canonicalID, $0.change.rawValue) < ($1.entityName, $1.canonicalID, $1.change.rawValue) }
    }

    @Test(arguments: [UInt64(5), 17, 123])
    func theRecordedStreamEqualsTheFullDiff(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let h = try Harness()
        let titles = ["News", "Film", "Quiz", "Sport"]
        let people = [("actor", "Ann"), ("actor", "Bo"), ("director", "Cy"), ("presenter", "Di")]
        let genres: [(String, String?)] = [("Drama", "en"), ("Drame", "fr"), ("Sport", nil), ("Kids", nil)]
        var nonEmpty = 0
        for k in 0..<6 {
            let channels = ["c0", "c1", "c2", "c3", "c4"].filter { $0 != "c4" || k % 3 != 2 }
            var programmes: [GP] = []
            for c in channels {
                for slot in 0..<12 where Int.random(in: 0..<10, using: &rng) > 0 {
                    let start = base + Int64(slot) * hour
                    var p = GP(channel: c, start: start, stop: start + hour, title: titles.randomElement(using: &rng)!)
                    if Bool.random(using: &rng) { p.desc = "About \(p.title) \(Int.random(in: 0..<3, using: &rng))" }
                    p.credits = people.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
                    p.categories = genres.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
                    programmes.append(p)
                }
            }
            let before = try h.store.copy(toPath: h.dir.path + "/before-\(k).sqlite")
            let recorder = try ChangeRecorder(model: h.store.model, path: h.dir.path + "/changes-\(k).json")
            h.store.addObserver(recorder)
            _ = try h.run(channels: channels, programmes, force: true)
            try recorder.finish()
            let recorded = try ChangeDocument(contentsOfFile: recorder.path).squashed()
            let full = try GraphDiff(model: h.store.model).diff(from: before, to: h.store)
            let same = Self.normalised(recorded.changes) == Self.normalised(full.changes)
            #expect(same, "seed \(seed) guide \(k): recorded \(recorded.objectCount) nodes, full diff \(full.objectCount)")
            if !full.isEmpty { nonEmpty += 1 }
            // Replayed on the copy, the recording rebuilds the store; its inverse, the copy again.
            #expect(try recorded.apply(to: before).conflicts.isEmpty)
            #expect(try GraphDiff(model: h.store.model).diff(from: before, to: h.store).isEmpty)
        }
        #expect(nonEmpty >= 5, "the guides must really change")
    }

    /// A first import is written as compact rows (`CompactRows`): no per-object identifier or
    /// attribute names, and read back as the full diff says it.
    @Test func aFirstImportIsWrittenAsCompactRows() throws {
        let h = try Harness()
        let before = try h.store.copy(toPath: h.dir.path + "/before.sqlite")
        let recorder = try ChangeRecorder(model: h.store.model, path: h.dir.path + "/changes.json")
        h.store.addObserver(recorder)
        var p = GP(channel: "c0", start: base, stop: base + hour, title: "Film")
        p.credits = [("actor", "Ann"), ("director", "Cy")]
        p.categories = [("Drama", "en")]
        _ = try h.run(channels: ["c0"], [p, GP(channel: "c0", start: base + hour, stop: base + 2 * hour, title: "News")], force: true)
        try recorder.finish()
        let text = try String(contentsOfFile: recorder.path, encoding: .utf8)
        #expect(text.contains("\"rows\":{\"Category\":{\"columns\":"))
        for entity in ["Programme", "Credit", "Category"] {
            #expect(text.contains("\"entityName\":\"\(entity)\",\"rows\":[["), "\(entity) inserts are rows")
            #expect(!text.contains("\"entityName\":\"\(entity)\",\"id\""), "nested inserts carry no identifier")
        }
        #expect(!text.contains("\"title\":{\"new\""), "inserts carry no {\"new\": ...} wrappers")
        let recorded = try ChangeDocument(contentsOfFile: recorder.path).squashed()
        let full = try GraphDiff(model: h.store.model).diff(from: before, to: h.store)
        #expect(Self.normalised(recorded.changes) == Self.normalised(full.changes))
        #expect(recorded.objectCount == 1 + 2 + 2 + 1)
    }

    @Test func aRolledBackTransactionLeavesNothingInTheFile() throws {
        let h = try Harness()
        let recorder = try ChangeRecorder(model: h.store.model, path: h.dir.path + "/changes.json")
        h.store.addObserver(recorder)
        _ = try h.run(channels: ["c0"], [GP(channel: "c0", start: base, stop: base + hour, title: "Kept")], force: true)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try h.store.write { context in
                let channel = try #require(try context.first("Channel", keys: []))
                try context.delete(channel.id)
                try context.processPendingChanges()   // written to the file, then cut again
                throw Abort()
            }
        }
        try recorder.finish()
        let document = try ChangeDocument(contentsOfFile: recorder.path).squashed()
        #expect(document.changes.count == 1)
        #expect(document.changes.first?.change == .insert)
    }
}
