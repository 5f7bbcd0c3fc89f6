import Foundation
import Listings
import Merge
import ObjectGraph
import Testing
import XMLTVImport

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
