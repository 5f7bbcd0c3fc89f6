import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// Deleting an owned subtree in bulk (`ObjectContext.deleteSubtree`) must leave the same rows and
/// tell observers exactly what deleting it object by object tells them, in the same order: the
/// aggregates of parents and the change files are kept from that stream (issue 33).
@Suite struct SubtreeDeleteTests {
    /// The guide's shape: channels own programmes (identified under their channel), which own
    /// credits and categories; reviews are owned through a key that leads no identifier (its own
    /// index); channels belong to a group that a deletion nullifies.
    static let module = ModelModule("TV", entities: [
        EntityDescription("Group", attributes: [AttributeDescription("name", .string)], relationships: [
            .toMany("channels", "Channel", inverse: "group", deleteRule: .nullify),
        ]),
        EntityDescription("Channel", identifier: ["xmltvId"], attributes: [
            AttributeDescription("xmltvId", .string, optional: false),
            AttributeDescription("programmeCount", .integer, optional: false, default: .integer(0)),
        ], relationships: [
            .toOne("group", "Group", inverse: "channels", deleteRule: .nullify),
            .toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade),
        ]),
        EntityDescription("Programme", identifier: ["channel", "start"], attributes: [
            AttributeDescription("start", .date, optional: false),
            AttributeDescription("title", .string),
        ], relationships: [
            .toOne("channel", "Channel", inverse: "programmes", deleteRule: .nullify, optional: false),
            .toMany("credits", "Credit", inverse: "programme", deleteRule: .cascade),
            .toMany("categories", "Category", inverse: "programme", deleteRule: .cascade),
            .toMany("reviews", "Review", inverse: "programme", deleteRule: .cascade),
        ]),
        EntityDescription("Credit", identifier: ["programme", "role", "name"], attributes: [
            AttributeDescription("role", .string, optional: false),
            AttributeDescription("name", .string, optional: false),
        ], relationships: [
            .toOne("programme", "Programme", inverse: "credits", deleteRule: .nullify, optional: false),
        ]),
        EntityDescription("Category", identifier: ["programme", "name"], attributes: [
            AttributeDescription("name", .string, optional: false),
        ], relationships: [
            .toOne("programme", "Programme", inverse: "categories", deleteRule: .nullify, optional: false),
        ]),
        EntityDescription("Review", identifier: ["author", "programme"], attributes: [
            AttributeDescription("author", .string, optional: false),
            AttributeDescription("stars", .integer),
        ], relationships: [
            .toOne("programme", "Programme", inverse: "reviews", deleteRule: .nullify, optional: false),
        ]),
    ])

    /// Watches what the import's observers watch (a channel's programmes, programmes and
    /// categories), and credits' member lists too: every kind of entry the stream has.
    final class Watcher: ContextObserver, @unchecked Sendable {
        var lines: [String] = []
        func observedChanges(in model: ObjectModel) -> ObservedChanges {
            ObservedChanges(entities: ["Channel", "Programme", "Category"], relationships: ["Channel.programmes", "Programme.credits", "Group.channels"])
        }
        func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
            for c in changes.all {
                lines.append("\(c.kind) \(c.id) \(c.changedKeys) old \(c.old) new \(c.new) keys \(c.foreignKeys.dictionary.sorted { $0.key < $1.key })")
            }
            for r in changes.relationshipChanges { lines.append("members \(r.owner).\(r.relationship) +\(r.added) -\(r.removed)") }
            lines.append("end of batch")
        }
        func contextDidSave(_ summary: ChangeSummary) {
            lines.append("saved " + summary.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        func contextDidRollBack() { lines.append("rolled back") }
    }

    /// A random guide (the same for a seed), then deletes of random channels and programmes in
    /// one transaction; returns what the observer heard and every row left.
    /// How the second transaction deletes: object by object, a subtree at a time (`delete`), or
    /// every object's rows at once, its deletion told in turn (`deleteRows(of:)` and
    /// `completeDeletion`, what a merge does), with inserts and updates between the deletions.
    enum Deleting { case objectByObject, bySubtree, prepared }

    func run(seed: UInt64, inBulk: Bool) throws -> (heard: [String], rows: String) {
        try run(seed: seed, inBulk ? .bySubtree : .objectByObject)
    }

    func run(seed: UInt64, _ deleting: Deleting) throws -> (heard: [String], rows: String) {
        let inBulk = deleting != .objectByObject
        let store = try Store.inMemory(model: ObjectModel(merging: [Self.module]))
        store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes",
                                              countKey: "programmeCount", lastChangedKey: nil, clock: { 1_000 }))
        var random = SplitMix64(seed: seed)
        var channels: [ObjectID] = [], programmes: [ObjectID] = []
        try store.write { context in
            let group = try context.insert("Group", ["name": .string("all")])
            for c in 0..<12 {
                let channel = try context.insert("Channel", ["xmltvId": .string("c\(c)")], related: c % 3 == 0 ? ["group": group] : [:])
                channels.append(channel)
                // Inserted out of start order, so that the identifier's index order is not row id order.
                for p in (0..<Int.random(in: 0..<9, using: &random)).shuffled(using: &random) {
                    let programme = try context.insert("Programme", ["start": .date(Int64(1_000 * p)), "title": .string("p\(p)")],
                                                       related: ["channel": channel])
                    programmes.append(programme)
                    for n in (0..<Int.random(in: 0..<4, using: &random)).shuffled(using: &random) {
                        try context.insert("Credit", ["role": .string(n % 2 == 0 ? "actor" : "director"), "name": .string("n\(n)")],
                                           related: ["programme": programme])
                    }
                    for n in (0..<Int.random(in: 0..<3, using: &random)).shuffled(using: &random) {
                        try context.insert("Category", ["name": .string("k\(n)")], related: ["programme": programme])
                    }
                    for n in (0..<Int.random(in: 0..<3, using: &random)).shuffled(using: &random) {
                        try context.insert("Review", ["author": .string("a\(n)"), "stars": n == 1 ? .null : .integer(Int64(n))],
                                           related: ["programme": programme])
                    }
                }
            }
        }
        let watcher = Watcher()
        store.addObserver(watcher)
        try store.write { context in
            context.deletesSubtreesInBulk = inBulk
            // Deleted in turn, each after an insert and an update (what a merge's walk does).
            func deleteInTurn(_ ids: [ObjectID], _ between: (Int) throws -> Void) throws {
                let prepared = deleting == .prepared ? try context.deleteRows(of: ids) : nil
                for (k, id) in ids.enumerated() {
                    try between(k)
                    if let prepared { try context.completeDeletion(of: id, prepared) } else { try context.delete(id) }
                }
            }
            let gone = try programmes.shuffled(using: &random).prefix(5).filter { try context.object($0, keys: []) != nil }
            let kept = programmes.filter { !gone.contains($0) }
            try deleteInTurn(gone) { k in
                let channel = channels[(k * 5) % channels.count]
                let programme = try context.insert("Programme", ["start": .date(Int64(100_000 + k)), "title": .string("new\(k)")],
                                                   related: ["channel": channel])
                try context.insert("Credit", ["role": .string("actor"), "name": .string("m\(k)")], related: ["programme": programme])
                if let other = kept.dropFirst(k).first {
                    try context.update(other, ["title": .string("changed\(k)")])
                    // A credit moved to the programme just inserted (still waiting to be written).
                    if let credit = try context.members(of: other, "credits").first { try context.update(credit, ["programme": .integer(programme.rowID)]) }
                }
            }
            try context.processPendingChanges()
            try deleteInTurn(Array(channels.shuffled(using: &random).prefix(7))) { k in
                try context.insert("Channel", ["xmltvId": .string("added\(k)")])
            }
        }
        let rows = try store.read { context in
            try ["Group", "Channel", "Programme", "Credit", "Category", "Review"].map { entity in
                try context.fetchAll(entity, orderBy: [SortKey("_pk")]).map { "\($0.id) \($0.values)" }.joined(separator: "\n")
            }.joined(separator: "\n")
        }
        return (watcher.lines, rows)
    }

    @Test(arguments: [1 as UInt64, 7, 33, 2026])
    func bulkDeletesTellObserversWhatObjectByObjectDeletesTell(seed: UInt64) throws {
        let bulk = try run(seed: seed, inBulk: true)
        let oneByOne = try run(seed: seed, inBulk: false)
        #expect(bulk.heard.count > 20, "the deletes were heard")
        #expect(bulk.heard == oneByOne.heard)
        #expect(bulk.rows == oneByOne.rows)
    }

    /// A merge's deletions: the rows of all at once, each deletion told in the walk's order
    /// among inserts and updates, exactly as deleting each in turn tells it.
    @Test(arguments: [1 as UInt64, 7, 33, 2026])
    func preparedDeletionsTellObserversWhatDeletesInTurnTell(seed: UInt64) throws {
        let prepared = try run(seed: seed, .prepared)
        let oneByOne = try run(seed: seed, .objectByObject)
        #expect(prepared.heard.count > 20, "the deletes were heard")
        #expect(prepared.heard == oneByOne.heard)
        #expect(prepared.rows == oneByOne.rows)
    }

    /// A cascade that meets a deny rule is refused before anything is deleted, in bulk or not.
    @Test func aDenyRuleStillRefusesTheWholeCascade() throws {
        let store = try Guide.store()
        try store.write { context in
            let channel = try context.insert("Channel", ["id": .string("c")])
            let programme = try context.insert("Programme", ["title": .string("p")], related: ["channel": channel])
            let credit = try context.insert("Credit", ["person": .string("x")], related: ["programme": programme])
            try context.insert("Award", ["name": .string("a")], related: ["credit": credit])
            #expect(throws: ObjectGraphError.self) { try context.delete(channel) }
            #expect(try context.count("Credit") == 1)
        }
    }
}
