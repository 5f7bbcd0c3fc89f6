import Foundation
import Merge
import ObjectGraph
import TestSupport
import Testing

/// The getting-started article's example (Sources/ObjectGraph/ObjectGraph.docc/GettingStarted.md),
/// run: the article's code blocks are taken from this file, and a test checks that they still are.
@Suite struct GettingStartedTests {
    @Test func theExampleRuns() throws {
        // Two modules, each with a placeholder of the entity the other one defines.
        let artists = ModelModule("Artists", entities: [
            EntityDescription("Artist", identifier: ["name"], attributes: [
                AttributeDescription("name", .string, optional: false),
                AttributeDescription("country", .string),
            ], relationships: [
                .toMany("songs", "Song", inverse: "artist", deleteRule: .cascade),
            ]),
        ])
        let songs = ModelModule("Songs", entities: [
            EntityDescription("Song", attributes: [
                AttributeDescription("title", .string),
            ], relationships: [
                .toOne("artist", "Artist", inverse: "songs", deleteRule: .nullify),
            ]),
            .placeholder("Artist", attributes: [
                AttributeDescription("songCount", .integer, optional: false, default: .integer(0)),
            ], relationships: [
                .toMany("songs", "Song", inverse: "artist", deleteRule: .cascade),
            ]),
        ])
        let model = try ObjectModel(merging: [artists, songs])

        // A store on a SQLite file; an observer keeps each artist's song count current.
        let path = NSTemporaryDirectory() + "getting-started-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store(path: path, model: model)
        store.addObserver(AggregateMaintainer(parentEntity: "Artist", relationship: "songs",
                                              countKey: "songCount", lastChangedKey: nil))

        // Save through a context: one transaction, committed when the closure returns.
        let nina = try store.write { context in
            let artist = try context.insert("Artist", ["name": .string("Nina Simone")])
            _ = try context.insert("Song", ["title": .string("Sinnerman")], related: ["artist": artist])
            _ = try context.insert("Song", ["title": .string("Feeling Good")], related: ["artist": artist])
            return artist
        }.result
        #expect(try store.read { try $0.object(nina)?["songCount"] } == .integer(2))

        // Merge a feed sorted by identifier: Nina Simone is updated, Miles Davis created, and
        // anyone else in scope would be deleted.
        let feed = [
            IncomingObject(values: [.string("Miles Davis"), .string("US")]),
            IncomingObject(values: [.string("Nina Simone"), .string("US")]),
        ]
        let tally = try store.write { context in
            let layout = try MergeLayout(entity: try #require(model.entity("Artist")), keys: ["name", "country"])
            return try SortedMerge(context: context).merge(layout, incoming: feed, scope: .all, parent: nil)
        }.result
        #expect(tally.inserted == 1 && tally.updated == 1 && tally.deleted == 0)
        #expect(try store.read { try $0.object(nina)?["country"] } == .string("US"))
    }

    /// Every code block of the article appears, line for line, in `theExampleRuns`.
    @Test func theArticleShowsThisExample() throws {
        let article = try String(contentsOfFile: Repository.path("Sources/ObjectGraph/ObjectGraph.docc/GettingStarted.md"), encoding: .utf8)
        let source = try String(contentsOfFile: Repository.path("Tests/ObjectGraphTests/GettingStartedTests.swift"), encoding: .utf8)
        let sourceLines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 4)
        for block in blocks {
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = lines.first, let start = sourceLines.firstIndex(of: first) else {
                Issue.record("not in the example: \(block)")
                continue
            }
            #expect(Array(sourceLines[start..<min(start + lines.count, sourceLines.count)]) == lines, "differs from the example: \(block)")
        }
    }
}
