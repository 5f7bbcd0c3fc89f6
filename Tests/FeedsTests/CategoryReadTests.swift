@testable import Feeds
import Foundation
import Listings
import ObjectGraph
import Testing

/// `FeedExporter.categories(of:)` reads a range of programme row ids when they are neighbours and
/// looks each up otherwise: both give every programme's categories in their order, and none of a
/// programme not asked for.
@Suite struct CategoryReadTests {
    @Test func neighbouringAndScatteredRowIDsReadAlike() throws {
        let store = try Store.inMemory(model: TVModel.model())
        var programmes: [Int64] = []
        var expected: [Int64: [String]] = [:]
        try store.write { c in
            let channel = try c.insert("Channel", ["xmltvId": .string("one.tv")])
            for i in 0..<60 {
                let p = try c.insert("Programme", ["start": .date(1_900_000_000 + Int64(i) * 3600), "title": .string("P\(i)")],
                                     related: ["channel": channel])
                programmes.append(p.rowID)
                // Names against their positions, so that the order read is the positions'.
                let names = ["Zed \(i)", "Mid", "Alpha"].prefix(i % 4)
                for (position, name) in names.enumerated() {
                    try c.insert("Category", ["name": .string(name), "position": .integer(Int64(position))], related: ["programme": p])
                }
                if !names.isEmpty { expected[p.rowID] = Array(names) }
            }
        }
        func read(_ ids: [Int64]) throws -> [Int64: [String]] {
            try store.read { c in try FeedExporter.categories(of: ids, in: c) }
        }
        let dense = Array(programmes[10..<30]), scattered = [programmes[1], programmes[29], programmes[58]]
        #expect(programmes.last! - programmes.first! < 2 * Int64(programmes.count), "every programme: neighbours")
        #expect(scattered.max()! - scattered.min()! >= 2 * Int64(scattered.count), "three far apart: looked up one by one")
        // Neighbours with a gap: the range read holds the gap's categories, which are not asked for.
        let gapped = dense.filter { $0 != programmes[15] && $0 != programmes[17] }
        for ids in [programmes, dense, gapped, scattered, [programmes[7]], []] {
            #expect(try read(ids) == expected.filter { ids.contains($0.key) }, "\(ids)")
        }
    }
}

