import Foundation
import Listings
import Merge
import ObjectGraph
import TestSupport
import Testing
import XMLTV
import XMLTVImport

@Suite struct MergePropertyTests {

    // 11
    @Test(arguments: [UInt64(1), 7, 42, 2024])
    func randomGuidesMatchTheReference(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let h = try Harness()
        let pool = ["c0", "c1", "c2", "c3", "c4", "c5"]
        let titles = ["News", "Film", "Quiz", "Sport", "Weather", "Drama"]
        // Reference: channel -> start -> title (clump always 0).
        var reference: [String: [Int64: String]] = [:]
        for k in 0..<8 {
            let count = Int.random(in: 3...5, using: &rng)
            let declared = Array(pool.shuffled(using: &rng).prefix(count))
            var programmes: [GP] = []
            var withProgrammes: [String: [Int64: String]] = [:]
            var stops: [String: Int64] = [:]
            for c in declared {
                if Int.random(in: 0..<100, using: &rng) < 15 { continue }    // declared, no programmes
                let first = k * 3 + Int.random(in: 0...3, using: &rng)       // the grid drifts: history builds up
                // Non-overlapping programmes of 1-2 hours on an hourly grid, with random gaps.
                var map: [Int64: String] = [:]
                var slot = first
                let last = first + Int.random(in: 4...12, using: &rng)
                while slot < last {
                    let length = Int.random(in: 1...2, using: &rng)
                    if map.isEmpty || Bool.random(using: &rng) {
                        let title = titles.randomElement(using: &rng)!
                        let start = base + Int64(slot) * hour
                        programmes.append(GP(channel: c, start: start, stop: start + Int64(length) * hour, title: title))
                        map[start] = title
                        stops[c, default: 0] = max(stops[c, default: 0], start + Int64(length) * hour)
                    }
                    slot += length
                }
                withProgrammes[c] = map
            }
            programmes.shuffle(using: &rng)
            programmes.sort { $0.channel < $1.channel }   // grouped, by channel; order inside shuffled

            // Reference update.
            for c in Array(reference.keys) where !declared.contains(c) && withProgrammes[c] == nil {
                reference[c] = nil
            }
            for c in declared where reference[c] == nil { reference[c] = [:] }
            for (c, map) in withProgrammes {
                let lo = map.keys.min()!, hi = stops[c]!
                var stored = reference[c] ?? [:]
                stored = stored.filter { $0.key < lo || $0.key >= hi }
                for (s, t) in map { stored[s] = t }
                reference[c] = stored
            }

            let xml = guideXML(channels: declared, programmes: programmes)
            let r = try h.run(xml, force: true, now: testNow)
            var expected = Set<Harness.Key>()
            for (c, map) in reference { for (s, t) in map { expected.insert(.init(channel: c, start: s, clump: 0, title: t)) } }
            let actual = try h.programmeKeys()
            #expect(actual == expected, "seed \(seed) guide \(k): missing \(expected.subtracting(actual)), extra \(actual.subtracting(expected))")
            #expect(Set(try h.channelIDs().values) == Set(reference.keys), "seed \(seed) guide \(k)")
            #expect(r.programmesRead == withProgrammes.values.map(\.count).reduce(0, +))

            let before = try h.checksum()
            let again = try h.run(xml, force: true, now: testNow)
            #expect(again.programmes.inserted == 0 && again.programmes.updated == 0 && again.programmes.deleted == 0,
                    "seed \(seed) guide \(k): \(again.programmes)")
            #expect(again.channels.inserted == 0 && again.channels.updated == 0 && again.channels.deleted == 0)
            #expect(try h.checksum() == before)
        }
    }
}

@Suite struct MergeFixtureTests {
    static let fixtures: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("../shared/fixtures/xmltv").standardizedFileURL.path
    }()

    // 12a
    @Test(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"))
    func freeviewPair() throws {
        let dir = Self.fixtures
        let f1 = dir + "/freeview_ie_2025-10-25T1606.xml", f2 = dir + "/freeview_ie_2025-10-26T0027.xml"
        let store = try Store.inMemory(model: TVModel.model())
        let options = ImportOptions(source: "freeview", force: true)
        _ = try importGuide(into: store, files: [f1], options: options, dryRun: false)
        let r = try importGuide(into: store, files: [f2], options: options, dryRun: false)
        print("freeview second import: programmes \(r.programmes), keptAsHistory \(r.keptAsHistory), channels \(r.channels)")
        #expect(r.programmes.inserted == 202)
        #expect(r.programmes.updated == 16)
        #expect(r.programmes.deleted == 17)
        #expect(r.keptAsHistory == 75)
    }

    // 12b
    @Test(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"))
    func everyFixtureImportsOrFailsCleanly() throws {
        let dir = Self.fixtures
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        for name in names.sorted() where name.hasSuffix(".xml") || name.hasSuffix(".xml.gz") {
            let store = try Store.inMemory(model: TVModel.model())
            do {
                let r = try importGuide(into: store, files: [dir + "/" + name], options: ImportOptions(source: "fx", force: true),
                                        dryRun: false)
                let stored = try store.read { try $0.count("Programme") }
                #expect(stored == r.programmes.inserted, "\(name)")
                print("fixture \(name): ok, \(r.programmes.inserted) programmes, \(r.channels.inserted) channels, \(r.warnings.count) warnings")
            } catch let error as ImportError {
                print("fixture \(name): refused cleanly: \(error)")
            } catch {
                Issue.record("fixture \(name): not an ImportError: \(type(of: error)) \(error)")
            }
        }
    }
}
