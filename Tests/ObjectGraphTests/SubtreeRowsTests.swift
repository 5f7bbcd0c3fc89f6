import Foundation
@testable import ObjectGraph
import Primitives
import Testing
import TestSupport

/// Deletes checked against subtrees read in bulk (`SubtreeRows`) report what the check object by
/// object reports: the same objects applied, the same conflicts with the same words, on random
/// guides changed at random after the diff was made.
@Suite struct SubtreeRowsTests {
    /// A guide in small: channels own programmes, programmes own categories; members are
    /// identified through their owner, as in the listings model (Sources/Listings/TVModel.swift).
    static let module = ModelModule("Guide", entities: [
        EntityDescription("Channel", identifier: ["xmltvId"], attributes: [
            AttributeDescription("xmltvId", .string, optional: false),
            AttributeDescription("name", .string),
        ], relationships: [.toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade)]),
        EntityDescription("Programme", identifier: ["channel", "start"], attributes: [
            AttributeDescription("start", .date, optional: false),
            AttributeDescription("title", .string),
            AttributeDescription("rating", .double),
        ], relationships: [
            .toOne("channel", "Channel", inverse: "programmes", deleteRule: .nullify, optional: false),
            .toMany("categories", "Category", inverse: "programme", deleteRule: .cascade),
        ]),
        EntityDescription("Category", identifier: ["programme", "name"], attributes: [
            AttributeDescription("name", .string, optional: false),
            AttributeDescription("position", .integer),
        ], relationships: [.toOne("programme", "Programme", inverse: "categories", deleteRule: .nullify, optional: false)]),
    ])

    private func filled(seed: UInt64) throws -> Store {
        let store = try Store.inMemory(model: try ObjectModel(merging: [Self.module]))
        var rng = SplitMix64(seed: seed)
        try store.write { c in
            for ch in 0..<3 {
                let channel = try c.insert("Channel", ["xmltvId": .string("c\(ch)"), "name": rng.next() % 3 == 0 ? .null : .string("C \(ch)")])
                for p in 0..<Int(rng.next() % 6) {
                    let programme = try c.insert("Programme", ["start": .date(Int64(p) * 1800), "title": .string(["News", "café", "cafe\u{301}"][Int(rng.next() % 3)]),
                                                               "rating": rng.next() % 2 == 0 ? .null : .double(1.5)],
                                                 related: ["channel": channel])
                    for n in 0..<Int(rng.next() % 4) {
                        try c.insert("Category", ["name": .string(["Movie", "News", "Caf\u{E9}"][n]), "position": .integer(Int64(n))], related: ["programme": programme])
                    }
                }
            }
        }
        return store
    }

    /// A random change after the diff: a value changed, a member added or deleted, nothing.
    private func disturb(_ store: Store, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &+ 1000)
        try store.write { c in
            switch rng.next() % 6 {
            case 0:
                if let p = try c.fetchAll("Programme", keys: []).randomElement(using: &rng) { try c.update(p.id, ["title": .string("Changed")]) }
            case 1:
                if let k = try c.fetchAll("Category", keys: []).randomElement(using: &rng) { try c.update(k.id, ["position": .integer(9)]) }
            case 2:
                if let p = try c.fetchAll("Programme", keys: []).randomElement(using: &rng) {
                    try c.insert("Category", ["name": .string("Extra")], related: ["programme": p.id])
                }
            case 3:
                if let k = try c.fetchAll("Category", keys: []).randomElement(using: &rng) { try c.delete(k.id) }
            case 4:
                if let p = try c.fetchAll("Programme", keys: []).randomElement(using: &rng) { try c.delete(p.id) }
            default:
                break
            }
        }
    }

    @Test(arguments: 0..<40) func bulkChecksReportWhatObjectByObjectChecksReport(seed: UInt64) throws {
        let store = try filled(seed: seed)
        let empty = try Store.inMemory(model: store.model)
        // Undoing the guide's first import: every channel deleted with its subtree.
        let undo = try GraphDiff(model: store.model).diff(from: empty, to: store).inverted()
        try disturb(store, seed: seed)
        func report(bulk: Bool) throws -> ApplyReport {
            try store.write(dryRun: true) { context in try undo.apply(in: context, readingSubtreesInBulk: bulk) }.result
        }
        let bulk = try report(bulk: true), byObject = try report(bulk: false)
        #expect(bulk == byObject, "seed \(seed)")
        #expect(bulk.applied == undo.changedObjectCount || !bulk.conflicts.isEmpty, "seed \(seed)")
    }

    /// On a store as the diff left it, every expected member of every level is found in the
    /// rows read in bulk (none is left to a query of its own).
    @Test(arguments: 0..<10) func everyMemberIsFoundInTheRowsReadInBulk(seed: UInt64) throws {
        let store = try filled(seed: seed)
        let empty = try Store.inMemory(model: store.model)
        let undo = try GraphDiff(model: store.model).diff(from: empty, to: store).inverted()
        try store.write(dryRun: true) { context in
            let applier = Applier(context: context, schema: try DiffSchema(model: context.model, excluding: []))
            for node in undo.changes {
                let id = try #require(try applier.resolve(node.reference))
                try applier.readSubtree(of: node, at: id)
                var expected = 0
                func count(_ node: ObjectDiff) { for r in node.relationships.values { expected += r.members.count; r.members.forEach(count) } }
                count(node)
                let found = applier.subtreeRows.expectedMembers.values.reduce(0) { $0 + $1.compactMap { $0 }.count }
                #expect(found == expected, "seed \(seed), \(node.reference)")
                applier.subtreeRows = SubtreeRows()
            }
        }
    }

    /// On a store as the change left it, applying the inverse with `storeIsAsExpected` (nothing
    /// wrote since, so objects are found and not compared: `undo`'s fast path) reports and leaves
    /// what the full check does: for a first import, and for a change of values and members.
    @Test(arguments: 0..<20) func theInverseOfAnUntouchedChangeAppliesAlikeWithoutTheCheck(seed: UInt64) throws {
        let store = try filled(seed: seed)
        let before = seed % 2 == 0 ? try Store.inMemory(model: store.model) : try filled(seed: seed)
        try disturb(store, seed: seed)
        let undo = try GraphDiff(model: store.model).diff(from: before, to: store).inverted()
        func run(trusted: Bool) throws -> (ApplyReport, [String]) {
            try store.write(dryRun: true) { context in
                let report = try undo.apply(in: context, storeIsAsExpected: trusted)
                let rows = try ["Channel", "Programme", "Category"].flatMap { entity in
                    try context.fetchAll(entity, orderBy: [SortKey("_pk")]).map { "\($0.id) \($0.values)" }
                }
                return (report, rows)
            }.result
        }
        let trusted = try run(trusted: true), checked = try run(trusted: false)
        #expect(checked.0.conflicts.isEmpty, "seed \(seed): \(checked.0.conflicts)")
        #expect(trusted.0 == checked.0, "seed \(seed)")
        #expect(trusted.1 == checked.1, "seed \(seed)")
    }
}
