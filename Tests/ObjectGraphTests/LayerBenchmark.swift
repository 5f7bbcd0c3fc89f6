import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// The object layer against raw GRDB on the same data: a bulk insert in one transaction, then a
/// sorted scan. Skipped unless TVIMPORT_BENCH=1 (see scripts/bench-objectgraph).
@Suite struct LayerBenchmark {
    static let rows = Int(ProcessInfo.processInfo.environment["TVIMPORT_BENCH_ROWS"] ?? "") ?? 500_000
    static let channels = 1_000

    static let module = ModelModule("Bench", entities: [
        EntityDescription("Channel", attributes: [AttributeDescription("name", .string)], relationships: [
            .toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade),
        ]),
        EntityDescription("Programme", attributes: [
            AttributeDescription("title", .string), AttributeDescription("subTitle", .string),
            AttributeDescription("summary", .string), AttributeDescription("category", .string),
            AttributeDescription("episode", .string), AttributeDescription("language", .string),
            AttributeDescription("rating", .string),
            AttributeDescription("start", .date), AttributeDescription("stop", .date),
            AttributeDescription("year", .integer), AttributeDescription("season", .integer),
            AttributeDescription("episodeNumber", .integer), AttributeDescription("duration", .integer),
            AttributeDescription("isNew", .bool), AttributeDescription("isPremiere", .bool),
        ], relationships: [
            .toOne("channel", "Channel", inverse: "programmes"),
        ]),
    ])

    /// Row i in `Programme.rowKeys` order (15 attributes, then the channel's row id).
    static func row(_ i: Int) -> [Value] {
        let start = Int64(1_790_000_000 + (i / channels) * 1800)
        return [.string("Title \(i % 9973)"), .string("Episode \(i % 311)"),
                .string("A programme about the number \(i), told in a few words."), .string("Drama"),
                .string("\(i % 7).\(i % 13)."), .string("en"), .string("PG"),
                .date(start), .date(start + 1800),
                .integer(Int64(1990 + i % 35)), .integer(Int64(i % 12)), .integer(Int64(i % 24)), .integer(1800),
                .bool(i % 3 == 0), .bool(i % 17 == 0),
                .integer(Int64(1 + (i * 7919) % channels))]
    }

    static func freshStore() throws -> (Store, TemporaryDatabase) {
        let file = try TemporaryDatabase()
        let store = try Store(path: file.path, model: ObjectModel(merging: [module]))
        try store.withDatabase { db in
            try db.inTransaction {
                for c in 1...channels { try db.execute(sql: "INSERT INTO Channel (_pk, name) VALUES (?, ?)", arguments: [c, "C\(c)"]) }
                return .commit
            }
        }
        return (store, file)
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["TVIMPORT_BENCH"] == "1", "opt-in benchmark: set TVIMPORT_BENCH=1"))
    func layerAgainstRawGRDB() throws {
        let entity = try ObjectModel(merging: [Self.module]).requireEntity("Programme")
        let keys = entity.rowKeys
        let rows = (0..<Self.rows).map(Self.row)   // built up front: neither side pays for it

        // Raw GRDB.
        let (rawStore, rawFile) = try Self.freshStore()
        defer { rawFile.cleanUp() }
        let insertSQL = "INSERT INTO Programme (\(keys.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(keys.map { _ in "?" }.joined(separator: ", ")))"
        let rawInsert = try Self.seconds {
            try rawStore.withDatabase { db in
                try db.inTransaction {
                    let statement = try db.cachedStatement(sql: insertSQL)
                    for row in rows {
                        statement.setUncheckedArguments(StatementArguments(row.map(\.databaseValue)))
                        try statement.execute()
                    }
                    return .commit
                }
            }
        }
        var rawSum = 0
        let selectSQL = "SELECT _pk, \(keys.map { "\"\($0)\"" }.joined(separator: ", ")) FROM Programme ORDER BY channel, start"
        let rawScan = try Self.seconds {
            try rawStore.withDatabase { db in
                let cursor = try Row.fetchCursor(db, sql: selectSQL)
                while let row = try cursor.next() {
                    let id: Int64 = row[0]
                    rawSum &+= Int(id)
                    for i in 1...7 { rawSum &+= (row[i] as String?)?.utf8.count ?? 0 }
                    for i in 8...13 { rawSum &+= Int((row[i] as Int64?) ?? 0) }
                    for i in 14...15 { rawSum &+= (row[i] as Bool?) == true ? 1 : 0 }
                    rawSum &+= Int((row[16] as Int64?) ?? 0)
                }
            }
        }

        // The object layer.
        let (store, file) = try Self.freshStore()
        defer { file.cleanUp() }
        let layerInsert = try Self.seconds {
            try store.write(recordChanges: false) { (context: ObjectContext) throws in
                for row in rows { try context.insert(into: entity, row: row) }
            }
        }
        var layerSum = 0
        let layerScan = try Self.seconds {
            try store.read { (context: ObjectContext) throws in
                let cursor = try context.fetch("Programme", orderBy: [SortKey("channel"), SortKey("start")])
                while let object = try cursor.next() {
                    layerSum &+= Int(object.id.rowID)
                    for value in object.values {
                        switch value {
                        case .string(let s): layerSum &+= s.utf8.count
                        case .integer(let i), .date(let i): layerSum &+= Int(i)
                        case .bool(let b): layerSum &+= b ? 1 : 0
                        default: break
                        }
                    }
                }
            }
        }
        #expect(layerSum == rawSum)
        #expect(try store.read { try $0.count("Programme") } == Self.rows)

        func line(_ name: String, _ layer: Double, _ raw: Double) -> String {
            String(format: "BENCH %@: layer %.2f s, raw GRDB %.2f s, ratio %.2f", name, layer, raw, layer / raw)
        }
        print("BENCH rows: \(Self.rows), channels: \(Self.channels)")
        print(line("insert", layerInsert, rawInsert))
        print(line("scan", layerScan, rawScan))
    }
}
