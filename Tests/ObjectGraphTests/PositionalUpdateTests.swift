import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// A merge updates objects by key position (`ObjectContext.update(_:of:_:current:)`), with a plan
/// per entity and inserts left waiting unless the update needs them written: the rows left, and
/// what observers hear (changes, member lists, counts), must be exactly what updating by key name
/// (`update(_:_:current:)`) gives.
@Suite struct PositionalUpdateTests {
    /// A random guide, then random updates mixed with inserts in one transaction; returns what the
    /// observer heard and every row left.
    func run(seed: UInt64, byPosition: Bool) throws -> (heard: [String], rows: String) {
        let store = try Store.inMemory(model: ObjectModel(merging: [SubtreeDeleteTests.module]))
        var random = SplitMix64(seed: seed)
        var channels: [ObjectID] = [], programmes: [ObjectID] = [], credits: [ObjectID] = []
        try store.write { context in
            for c in 0..<4 {
                let channel = try context.insert("Channel", ["xmltvId": .string("c\(c)")])
                channels.append(channel)
                for p in 0..<Int.random(in: 1..<6, using: &random) {
                    let programme = try context.insert("Programme", ["start": .date(Int64(1_000 * p)), "title": .string("p\(p)")],
                                                       related: ["channel": channel])
                    programmes.append(programme)
                    for n in 0..<Int.random(in: 0..<3, using: &random) {
                        credits.append(try context.insert("Credit", ["role": .string("actor"), "name": .string("n\(n)")], related: ["programme": programme]))
                    }
                }
            }
        }
        let watcher = SubtreeDeleteTests.Watcher()
        store.addObserver(watcher)
        store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes",
                                              countKey: "programmeCount", lastChangedKey: nil, clock: { 1_000 }))
        try store.write { context in
            let programme = try #require(context.model.entity("Programme")), credit = try #require(context.model.entity("Credit"))
            func update(_ id: ObjectID, _ entity: Entity, _ changes: [(String, Value)], current: FetchedObject) throws {
                if byPosition {
                    try context.update(id, of: entity, changes.map { (entity.rowIndex(of: $0.0)!, $0.1) }, current: current)
                } else {
                    try context.update(id, Dictionary(uniqueKeysWithValues: changes), current: current)
                }
            }
            // Reading writes the waiting inserts: each step reads what it updates first, then
            // inserts (left waiting, as a merge's inserts are when it updates the objects it read
            // before), then updates.
            func insertWaiting(_ step: Int) throws -> (programme: ObjectID, row: [Value]) {
                start += 1
                var row = programme.defaultRow
                row[programme.rowIndex(of: "start")!] = .date(start)
                row[programme.rowIndex(of: "title")!] = .string("new\(step)")
                row[programme.rowIndex(of: "channel")!] = .integer(channels.randomElement(using: &random)!.rowID)
                let id = try context.insert(into: programme, row: row)
                programmes.append(id)
                credits.append(try context.insert("Credit", ["role": .string("guest"), "name": .string("g\(step)")], related: ["programme": id]))
                return (id, row)
            }
            var start = Int64(100_000)
            for step in 0..<40 {
                switch Int.random(in: 0..<6, using: &random) {
                case 0:   // a programme still waiting to be written, updated (its row as inserted is what it is)
                    let (id, row) = try insertWaiting(step)
                    let current = FetchedObject(id: id, layout: FetchLayout(entity: programme, keys: programme.rowKeys), values: row)
                    try update(id, programme, [("title", .string("renamed\(step)"))], current: current)
                case 1:   // title and start, sometimes unchanged, keys in either order, every key read or not
                    let id = programmes.randomElement(using: &random)!
                    let current = try #require(try context.object(id, keys: Bool.random(using: &random) ? nil : ["start", "title", "channel"]))
                    _ = try insertWaiting(step)
                    start += 1
                    var changes: [(String, Value)] = [("title", .string(Bool.random(using: &random) ? "t\(step)" : "p0")), ("start", .date(start))]
                    if Bool.random(using: &random) { changes.reverse() }
                    try update(id, programme, changes, current: current)
                case 2:   // a programme moved to another channel (member lists of both), at a start of its own there
                    let id = programmes.randomElement(using: &random)!
                    let current = try #require(try context.object(id))
                    start += 1
                    try update(id, programme, [("channel", .integer(channels.randomElement(using: &random)!.rowID)), ("start", .date(start))], current: current)
                case 3, 4:   // a credit moved to a programme still waiting to be written
                    guard let id = credits.randomElement(using: &random) else { continue }
                    let current = try #require(try context.object(id))
                    let (target, _) = try insertWaiting(step)
                    try update(id, credit, [("programme", .integer(target.rowID)), ("name", .string("moved\(step)"))], current: current)
                default:  // read without the foreign key: the general path
                    let id = programmes.randomElement(using: &random)!
                    let current = try #require(try context.object(id, keys: ["title"]))
                    try update(id, programme, [("title", .string("short\(step)"))], current: current)
                }
                if step % 13 == 12 { try context.processPendingChanges() }
            }
        }
        let rows = try store.read { context in
            try ["Channel", "Programme", "Credit"].map { entity in
                try context.fetchAll(entity, orderBy: [SortKey("_pk")]).map { "\($0.id) \($0.values)" }.joined(separator: "\n")
            }.joined(separator: "\n")
        }
        return (watcher.lines, rows)
    }

    @Test(arguments: [1 as UInt64, 7, 33, 2026, 51])
    func updatesByPositionAreUpdatesByName(seed: UInt64) throws {
        let byPosition = try run(seed: seed, byPosition: true)
        let byName = try run(seed: seed, byPosition: false)
        #expect(byPosition.heard.count > 20, "the updates were heard")
        #expect(byPosition.heard.contains { $0.hasPrefix("saved ") && $0.contains("updated") })
        #expect(byPosition.heard == byName.heard)
        #expect(byPosition.rows == byName.rows)
    }

    /// A value of the wrong type, or null where one is required, is refused as by name.
    @Test func wrongValuesAreRefused() throws {
        let store = try Store.inMemory(model: ObjectModel(merging: [SubtreeDeleteTests.module]))
        try store.write { context in
            let channel = try context.insert("Channel", ["xmltvId": .string("c")])
            let programme = try context.insert("Programme", ["start": .date(1), "title": .string("p")], related: ["channel": channel])
            let entity = try #require(context.model.entity("Programme"))
            let current = try #require(try context.object(programme))
            let start = try #require(entity.rowIndex(of: "start"))
            #expect(throws: ObjectGraphError.self) { try context.update(programme, of: entity, [(start, .string("soon"))], current: current) }
            #expect(throws: ObjectGraphError.self) { try context.update(programme, of: entity, [(start, .null)], current: current) }
            #expect(try context.object(programme)?["start"] == .date(1))
        }
    }
}
