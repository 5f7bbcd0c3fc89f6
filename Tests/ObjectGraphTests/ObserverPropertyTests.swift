import Testing
import TestSupport
@testable import ObjectGraph

/// Random inserts, moves, updates and deletes across several transactions: the aggregates the
/// observers maintain must always equal what a query computes.
@Suite struct ObserverPropertyTests {
    static let module = ModelModule("TV", entities: [
        EntityDescription("Channel", attributes: [
            AttributeDescription("name", .string),
            AttributeDescription("programmeCount", .integer, optional: false, default: .integer(0)),
            AttributeDescription("changedAt", .date),
        ], relationships: [
            .toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade),
        ]),
        EntityDescription("Programme", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("start", .date),
        ], relationships: [
            .toOne("channel", "Channel", inverse: "programmes"),
        ]),
    ])

    @Test(arguments: [1 as UInt64, 42, 2026])
    func programmeCountsAndDirtyChannelsMatchTheDatabase(seed: UInt64) throws {
        let store = try Store.inMemory(model: ObjectModel(merging: [Self.module]))
        store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes",
                                              countKey: "programmeCount", lastChangedKey: "changedAt", clock: { 1_000 }))
        let dirty = DirtyOwnersObserver(parentEntity: "Channel", relationship: "programmes")
        store.addObserver(dirty)
        var random = SplitMix64(seed: seed)
        var serial = 0

        for round in 0..<8 {
            var touched = Set<Int64>()
            try store.write { (context: ObjectContext) throws in
                func channels() throws -> [ObjectID] { try context.fetchAll("Channel", keys: []).map(\.id) }
                func programmes() throws -> [(id: ObjectID, channel: ObjectID)] {
                    try context.fetchAll("Programme", keys: ["channel"]).map { ($0.id, $0.related("channel")!) }
                }
                if try channels().count < 3 {
                    for _ in 0..<3 { touched.insert(try context.insert("Channel", ["name": .string("C\(round)")]).rowID) }
                }
                for _ in 0..<60 {
                    let allChannels = try channels()
                    let allProgrammes = try programmes()
                    serial += 1
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0..<45:
                        let channel = allChannels.randomElement(using: &random)!
                        try context.insert("Programme", ["title": .string("P\(serial)"), "start": .date(Int64(serial))],
                                           related: ["channel": channel])
                        touched.insert(channel.rowID)
                    case 45..<60 where !allProgrammes.isEmpty:
                        let p = allProgrammes.randomElement(using: &random)!
                        let to = allChannels.randomElement(using: &random)!
                        try context.add([p.id], to: "programmes", of: to)
                        if to != p.channel { touched.formUnion([p.channel.rowID, to.rowID]) }
                    case 60..<75 where !allProgrammes.isEmpty:
                        let p = allProgrammes.randomElement(using: &random)!
                        try context.update(p.id, ["title": .string("U\(serial)")])
                        touched.insert(p.channel.rowID)
                    case 75..<85 where !allProgrammes.isEmpty:
                        let p = allProgrammes.randomElement(using: &random)!
                        try context.delete(p.id)
                        touched.insert(p.channel.rowID)
                    case 85..<92 where !allProgrammes.isEmpty:
                        let p = allProgrammes.randomElement(using: &random)!
                        try context.remove([p.id], from: "programmes", of: p.channel)   // cascade: deletes it
                        touched.insert(p.channel.rowID)
                    case 92..<96 where allChannels.count > 1:
                        let c = allChannels.randomElement(using: &random)!
                        try context.delete(c)
                        touched.insert(c.rowID)
                    default:
                        touched.insert(try context.insert("Channel", ["name": .string("N\(serial)")]).rowID)
                    }
                    // Observers also run in the middle of a transaction.
                    if Bool.random(using: &random) { try context.processPendingChanges() }
                }
            }
            try store.read { (context: ObjectContext) throws in
                for channel in try context.fetchAll("Channel", keys: ["programmeCount"]) {
                    let counted = try context.count("Programme", where: .related("channel", channel.id))
                    #expect(channel["programmeCount"] == .integer(Int64(counted)), "seed \(seed), round \(round), \(channel.id)")
                }
            }
            #expect(dirty.dirtyOwners == touched, "seed \(seed), round \(round)")
            dirty.reset()
        }
    }
}
