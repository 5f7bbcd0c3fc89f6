import Foundation
@testable import Job
import Listings
import ObjectGraph
import TestSupport
import Testing

/// Retention: `stop` has no index, so what ended is found channel by channel through the identity
/// index (`NightlyJob.ended`); it must be exactly what a plain `stop < cutoff` over every row finds.
@Suite struct RetentionTests {
    @Test func whatEndedChannelByChannelIsWhatEndedInTheWholeTable() throws {
        let box = try Sandbox()
        let store = try Store(path: box.path("tv.sqlite"), model: TVModel.model())
        let cutoff: Int64 = 1_800_000_000
        var generator = SplitMix64(seed: 36)
        try store.write { context in
            for (entity, channelEntity) in [("Programme", "Channel"), ("SourceProgramme", "SourceChannel")] {
                for c in 0..<7 {
                    var values: [String: Value] = ["xmltvId": .string("c\(c).test")]
                    if channelEntity == "SourceChannel" { values["source"] = .string(c % 2 == 0 ? "a" : "b") }
                    let channel = try context.insert(channelEntity, values)
                    // Starts an hour apart around the cutoff; stops before, at and after it, or none.
                    for p in 0..<40 {
                        let start = cutoff + Int64(p - 30) * 3600 + Int64.random(in: -600...600, using: &generator)
                        let stop: Value = Int.random(in: 0..<6, using: &generator) == 0
                            ? .null : .date(start + Int64.random(in: 0...20_000, using: &generator))
                        _ = try context.insert(entity, ["start": .date(start), "stop": stop, "source": .string("a")], related: ["channel": channel])
                    }
                    // One that ends exactly at the cutoff has not ended before it.
                    _ = try context.insert(entity, ["start": .date(cutoff - 60), "clumpIndex": .integer(1), "stop": .date(cutoff)], related: ["channel": channel])
                }
                // A channel with no programmes.
                var values: [String: Value] = ["xmltvId": .string("empty.test")]
                if channelEntity == "SourceChannel" { values["source"] = .string("a") }
                _ = try context.insert(channelEntity, values)
            }
        }
        try store.read { context in
            for (entity, channelEntity) in [("Programme", "Channel"), ("SourceProgramme", "SourceChannel")] {
                let found = try NightlyJob.ended(before: cutoff, in: context, entity: entity, channelEntity: channelEntity)
                let everyRow = try context.fetchAll(entity, where: .compare("stop", .less, .date(cutoff)), keys: ["channel"])
                #expect(Set(found.flatMap(\.1)) == Set(everyRow.map(\.id)), "\(entity)")
                #expect(found.flatMap(\.1).count == everyRow.count, "\(entity): each once")
                #expect(everyRow.count > 20, "\(entity): the data has programmes that ended")
                #expect(!found.contains { $0.0 == "empty.test" })
                // Each is listed under its own channel.
                var channelOf: [Int64: String] = [:]
                for c in try context.fetchAll(channelEntity, keys: ["xmltvId"]) { channelOf[c.id.rowID] = c["xmltvId"].stringValue }
                let rows = Dictionary(everyRow.map { ($0.id, $0.related("channel")?.rowID) }, uniquingKeysWith: { a, _ in a })
                for (channel, programmes) in found {
                    #expect(programmes.allSatisfy { rows[$0].flatMap { $0 }.flatMap { channelOf[$0] } == channel })
                }
            }
        }
    }
}
