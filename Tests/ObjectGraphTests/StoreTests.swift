import Foundation
import GRDB
import Testing
@testable import ObjectGraph

@Suite struct StoreTests {
    static let v1 = ModelModule("Listings", entities: [
        EntityDescription("Channel", identifier: ["id"], attributes: [
            AttributeDescription("id", .string, optional: false),
            AttributeDescription("name", .string),
        ]),
    ])
    /// A local module adds an attribute to Channel and a new entity.
    static let local = ModelModule("Local", entities: [
        .placeholder("Channel", attributes: [
            AttributeDescription("favourite", .bool, optional: false, default: .bool(false)),
            AttributeDescription("position", .integer, default: .integer(99)),
        ], relationships: [
            .toMany("notes", "Note", inverse: "channel", deleteRule: .cascade),
        ]),
        EntityDescription("Note", attributes: [AttributeDescription("text", .string)], relationships: [
            .toOne("channel", "Channel", inverse: "notes"),
        ]),
    ])

    @Test func anInMemoryStoreCreatesTheSchemaAndStoresObjects() throws {
        let store = try Guide.store()
        #expect(store.path == ":memory:")
        let id = try store.write { try $0.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC One")]) }.result
        #expect(try store.read { try $0.object(id)?["name"] } == .string("BBC One"))
    }

    @Test func aFileStoreUsesWALAndForeignKeys() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        let (journal, foreignKeys) = try store.withDatabase { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(journal?.lowercased() == "wal")
        #expect(foreignKeys == 1)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    /// A rollback-journal write (the first import into an empty store) runs in rollback mode
    /// only when its connection is the database's only one, and leaves the store in WAL mode; with
    /// a reader's connection open it uses the log. Either way its objects are stored.
    @Test func aRollbackJournalWriteRunsAloneAndLeavesTheLog() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        #expect(try store.holdsNoObjects())
        let alone = try store.write(journal: .rollback) { context in
            try context.insert("Channel", ["id": .string("a")])
            return (try String.fetchOne(context.db, sql: "PRAGMA journal_mode"), try Bool.fetchOne(context.db, sql: "PRAGMA foreign_keys"))
        }.result
        #expect(alone.0 == "delete")
        #expect(alone.1 == false)   // every row is the merge's own, parents first
        #expect(try store.withDatabase { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try store.withDatabase { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
        #expect(try !store.holdsNoObjects())

        let reader = try DatabaseQueue(path: file.path)
        #expect(try reader.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM Channel") } == 1)
        let beside = try store.write(journal: .rollback) { context in
            try context.insert("Channel", ["id": .string("b")])
            return (try String.fetchOne(context.db, sql: "PRAGMA journal_mode"), try Bool.fetchOne(context.db, sql: "PRAGMA foreign_keys"))
        }.result
        #expect(beside.0 == "wal")
        #expect(beside.1 == true)
        #expect(try reader.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM Channel") } == 2)
        #expect(try store.withDatabase { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }

    /// Emptying the store unchecked (the undo of a first import) clears every table, counts every
    /// row, and leaves foreign keys checked afterwards, after a commit as after a throw.
    @Test func anUncheckedEmptyingClearsEveryTableAndChecksForeignKeysAfter() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        try store.write { (context: ObjectContext) throws in
            for c in 0..<3 {
                let channel = try context.insert("Channel", ["id": .string("c\(c)")])
                for start in 0..<40 { try context.insert("Programme", ["start": .date(Int64(start))], related: ["channel": channel]) }
            }
        }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write(checkingForeignKeys: false) { context in
                _ = try context.deleteEveryObject()
                throw Refused()
            }
        }
        #expect(try store.withDatabase { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
        #expect(try !store.holdsNoObjects())
        let (deleted, checked) = try store.write(checkingForeignKeys: false) { context in
            (try context.deleteEveryObject(), try Bool.fetchOne(context.db, sql: "PRAGMA foreign_keys"))
        }.result
        #expect(deleted == 3 + 3 * 40)
        #expect(checked == false)
        #expect(try store.holdsNoObjects())
        #expect(try store.withDatabase { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
        #expect(try store.withDatabase { try Int.fetchOne($0, sql: "SELECT count(*) FROM pragma_foreign_key_check") } == 0)
    }

    /// A new file gets 2 KiB pages; an existing one keeps its own. A snapshot in memory and a copy
    /// to another file hold the same objects whatever the page size.
    @Test func aNewFileHasSmallPagesAndItsSnapshotAndCopyHoldTheSameObjects() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        try store.write { (context: ObjectContext) throws in
            let channel = try context.insert("Channel", ["id": .string("c"), "name": .string("One")])
            for start in 0..<50 { try context.insert("Programme", ["start": .date(Int64(start))], related: ["channel": channel]) }
        }
        #expect(try store.withDatabase { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 2048)
        let snapshot = try store.snapshot()
        let copy = try store.copy(toPath: file.directory.appendingPathComponent("copy.sqlite").path)
        for other in [snapshot, copy] {
            #expect(try other.read { try $0.count("Programme") } == 50)
            #expect(try other.read { try $0.first("Channel")?["name"] } == .string("One"))
        }
        let reopened = try Store(path: file.path, model: Guide.model())
        #expect(try reopened.withDatabase { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 2048)
    }

    @Test func addingAModuleMigratesAnExistingFileWithoutLosingRows() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let v1 = try ObjectModel(merging: [Self.v1])
        let v2 = try ObjectModel(merging: [Self.v1, Self.local])
        do {
            let store = try Store(path: file.path, model: v1)
            try store.write { (context: ObjectContext) throws in
                try context.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC One")])
                try context.insert("Channel", ["id": .string("arte"), "name": .string("Arte")])
            }
        }
        let store = try Store(path: file.path, model: v2)
        #expect(store.fingerprint != Schema(model: v1).fingerprint)
        try store.read { (context: ObjectContext) throws in
            let channels = try context.fetchAll("Channel", orderBy: [SortKey("id")])
            #expect(channels.map { $0["id"] } == [.string("arte"), .string("bbc1")])
            #expect(channels.map { $0["favourite"] } == [.bool(false), .bool(false)])
            #expect(channels.map { $0["position"] } == [.integer(99), .integer(99)])
        }
        try store.write { (context: ObjectContext) throws in
            let arte = try #require(try context.first("Channel", where: .compare("id", .equal, .string("arte"))))
            try context.insert("Note", ["text": .string("culture")], related: ["channel": arte.id])
            #expect(try context.members(of: arte.id, "notes").count == 1)
        }
    }

    @Test func aDatabaseWithAnAttributeTheModelNoLongerHasIsRefused() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        _ = try Store(path: file.path, model: ObjectModel(merging: [Self.v1, Self.local]))
        let error = #expect(throws: ObjectGraphError.self) {
            try Store(path: file.path, model: ObjectModel(merging: [Self.v1]))
        }
        guard case let .incompatibleStore(path, reasons)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(path == file.path)
        #expect(reasons.contains { $0.contains("Channel.favourite") })
        #expect(reasons.contains { $0.contains("Channel.position") })
        #expect(reasons.contains { $0.contains("table Note") })
        #expect(error!.description.contains("Channel.favourite"))
    }

    @Test func aDatabaseWhoseColumnChangedTypeIsRefused() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        _ = try Store(path: file.path, model: ObjectModel(merging: [Self.v1]))
        var changed = Self.v1
        changed.entities[0].attributes[1] = AttributeDescription("name", .integer)
        let error = #expect(throws: ObjectGraphError.self) {
            try Store(path: file.path, model: ObjectModel(merging: [changed]))
        }
        guard case let .incompatibleStore(_, reasons)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(reasons.count == 1)
        #expect(reasons.first?.contains("Channel.name") == true)
        #expect(reasons.first?.contains("TEXT") == true && reasons.first?.contains("INTEGER") == true)
    }

    /// An attribute that loses its index loses it in the file too (it would cost every write),
    /// one that gains it gets it; a user's own index (named otherwise) and the rows stay.
    @Test func anIndexTheModelNoLongerDeclaresIsDroppedAndANewOneMade() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        func model(indexing name: Bool) throws -> ObjectModel {
            try ObjectModel(merging: [ModelModule("Listings", entities: [
                EntityDescription("Channel", identifier: ["id"], attributes: [
                    AttributeDescription("id", .string, optional: false),
                    AttributeDescription("name", .string, userInfo: name ? [UserInfoKey.index: "true"] : [:]),
                ]),
            ])])
        }
        func indexes(_ store: Store) throws -> [String] {
            try store.withDatabase { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Channel' AND name NOT LIKE 'sqlite%' ORDER BY name")
            }
        }
        do {
            let store = try Store(path: file.path, model: model(indexing: true))
            try store.write { try $0.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC One")]) }
            try store.withDatabase { try $0.execute(sql: "CREATE INDEX \"ByName\" ON \"Channel\" (\"name\", \"id\")") }
            #expect(try indexes(store) == ["ByName", "Channel_identity", "Channel_name"])
        }
        do {
            let store = try Store(path: file.path, model: model(indexing: false))
            #expect(try indexes(store) == ["ByName", "Channel_identity"])
            #expect(try store.read { try $0.count("Channel") } == 1)
        }
        let store = try Store(path: file.path, model: model(indexing: true))
        #expect(try indexes(store) == ["ByName", "Channel_identity", "Channel_name"])
        #expect(try store.read { try $0.first("Channel", where: .compare("name", .equal, .string("BBC One"))) } != nil)
    }

    /// An entity's covering index (`UserInfoKey.coveringIndex`) is made in a new file and in an
    /// old one that lacked it, made anew when its columns change, answers a query of its columns
    /// alone (SQLite reads no row of the table), and goes when the model no longer declares it;
    /// change documents of the model without it still apply (indexes alone differ).
    @Test func aCoveringIndexIsMadeUsedAndDroppedWithTheModel() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        func model(covering: String?) throws -> ObjectModel {
            try ObjectModel(merging: [ModelModule("Listings", entities: [
                EntityDescription("Slot", identifier: ["channel", "start"], attributes: [
                    AttributeDescription("channel", .integer, optional: false),
                    AttributeDescription("start", .integer, optional: false),
                    AttributeDescription("stop", .integer),
                    AttributeDescription("title", .string),
                ], userInfo: covering.map { [UserInfoKey.coveringIndex: $0] } ?? [:]),
            ])])
        }
        func indexes(_ store: Store) throws -> [String: String] {
            try store.withDatabase { db in
                Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Slot' AND name NOT LIKE 'sqlite%'").map { ($0["name"] as String, $0["sql"] as String) })
            }
        }
        func plan(_ store: Store, _ keys: [String]) throws -> String {
            try store.withDatabase { db in
                let select = "SELECT \(keys.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \"Slot\" WHERE \"channel\" = 1 ORDER BY \"start\""
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + select).map { $0["detail"] as String }.joined(separator: "; ")
            }
        }
        let without = try model(covering: nil)
        let empty = try Store.inMemory(model: without), one = try Store.inMemory(model: without)
        try one.write { try $0.insert("Slot", ["channel": .integer(1), "start": .integer(10), "stop": .integer(20), "title": .string("News")]) }
        let document = try GraphDiff(model: without).diff(from: empty, to: one)
        do {
            let store = try Store(path: file.path, model: without)
            #expect(try indexes(store).keys.sorted() == ["Slot_identity"])
        }
        do {
            let store = try Store(path: file.path, model: model(covering: "channel,start,noSuchColumn"))
            #expect(try indexes(store).keys.sorted() == ["Slot__channel_start", "Slot_identity"])
        }
        do {
            // Other columns: the index made for the first ones goes.
            let store = try Store(path: file.path, model: model(covering: "channel,start,stop,noSuchColumn"))
            let made = try indexes(store)
            #expect(made.keys.sorted() == ["Slot__channel_start_stop", "Slot_identity"])
            // Known columns only, in the order given.
            #expect(made["Slot__channel_start_stop"] == "CREATE INDEX \"Slot__channel_start_stop\" ON \"Slot\" (\"channel\", \"start\", \"stop\")")
            #expect(try plan(store, ["start", "stop"]).contains("USING COVERING INDEX Slot__channel_start_stop"))
            // A column outside it: the table is read, through whichever index.
            #expect(!(try plan(store, ["start", "title"]).contains("COVERING")))
            #expect(store.acceptedFingerprints.contains(document.model))
            let report = try store.write { context in try document.apply(in: context) }.result
            #expect(report.conflicts.isEmpty)
            #expect(try store.read { try $0.count("Slot") } == 1)
        }
        let store = try Store(path: file.path, model: without)
        #expect(try indexes(store).keys.sorted() == ["Slot_identity"])
        #expect(try store.read { try $0.count("Slot") } == 1)
    }

    /// A change document of the model a store had before a release that only dropped or added
    /// an index still applies (the last night's undo survives the upgrade); once a column is
    /// added, documents of the models before it are refused.
    @Test func aChangeOfAModelThatDifferedInIndexesAloneStillApplies() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        func model(indexing name: Bool, extra: Bool = false) throws -> ObjectModel {
            try ObjectModel(merging: [ModelModule("Listings", entities: [
                EntityDescription("Channel", identifier: ["id"], attributes: [
                    AttributeDescription("id", .string, optional: false),
                    AttributeDescription("name", .string, userInfo: name ? [UserInfoKey.index: "true"] : [:]),
                ] + (extra ? [AttributeDescription("position", .integer)] : [])),
            ])])
        }
        let indexed = try model(indexing: true)
        // A change made under the indexed model: BBC One inserted.
        let empty = try Store.inMemory(model: indexed), one = try Store.inMemory(model: indexed)
        try one.write { try $0.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC One")]) }
        let document = try GraphDiff(model: indexed).diff(from: empty, to: one)
        do {
            let store = try Store(path: file.path, model: indexed)
            #expect(store.acceptedFingerprints == [document.model])
        }
        do {
            let store = try Store(path: file.path, model: model(indexing: false))
            #expect(store.fingerprint != document.model)
            #expect(store.acceptedFingerprints == [store.fingerprint, document.model])
            #expect(try document.apply(to: store, dryRun: true).conflicts.isEmpty)
            let report = try store.write { context in try document.apply(in: context) }.result
            #expect(report.conflicts.isEmpty)
            #expect(try store.read { try $0.count("Channel") } == 1)
        }
        do {
            // Reopened with the same model: nothing forgotten.
            let store = try Store(path: file.path, model: model(indexing: false))
            #expect(store.acceptedFingerprints.contains(document.model))
        }
        let store = try Store(path: file.path, model: model(indexing: false, extra: true))
        #expect(store.acceptedFingerprints == [store.fingerprint])
        #expect(throws: DiffError.self) { try document.apply(to: store, dryRun: true) }
    }

    /// Another writer holding the database past the busy timeout is `StoreError.busy` (what the
    /// commands turn into exit 75, try again), for a write and a dry run; nothing is written, and
    /// once the other writer is done the same write goes through.
    @Test func aDatabaseAnotherWriterHoldsIsBusyNotBroken() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        // No waiting in a test: the busy timeout comes at once.
        try store.withDatabase { try $0.execute(sql: "PRAGMA busy_timeout = 0") }
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true   // its transaction spans two accesses
        let other = try DatabaseQueue(path: file.path, configuration: holding)
        try other.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        for attempt in ["write", "dry run"] {
            do {
                if attempt == "write" {
                    try store.write { try $0.insert("Channel", ["id": .string("bbc1")]) }
                } else {
                    try store.dryRun { try store.write(dryRun: true) { try $0.insert("Channel", ["id": .string("bbc1")]) } }
                }
                Issue.record("\(attempt): no error")
            } catch let error as StoreError {
                guard case .busy(let path, _) = error else { Issue.record("\(attempt): \(error)"); continue }
                #expect(path == file.path)
                #expect(error.description.contains("is busy") && error.description.contains("try again"))
            }
        }
        try other.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        #expect(try store.read { try $0.count("Channel") } == 0)
        try store.write { try $0.insert("Channel", ["id": .string("bbc1")]) }
        #expect(try store.read { try $0.count("Channel") } == 1)
    }

    @Test func reopeningWithTheSameModelChangesNothing() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let model = try Guide.model()
        func schemaState(_ store: Store) throws -> (Int, [String]) {
            try store.withDatabase { db in
                (try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? -1,
                 try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"))
            }
        }
        let before: (Int, [String])
        do {
            let store = try Store(path: file.path, model: model)
            try store.write { try $0.insert("Channel", ["id": .string("bbc1")]) }
            before = try schemaState(store)
        }
        let store = try Store(path: file.path, model: model)
        let after = try schemaState(store)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(try store.read { try $0.count("Channel") } == 1)
    }

    /// A dry run of several steps: each dry write sees the ones before it, a failing one leaves
    /// nothing of its own, a write that is not dry is refused, and the database is as it was after
    /// it (rows and write token); a write after it commits as usual.
    @Test func aDryRunOfSeveralWritesSeesEachAndLeavesNothing() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        let channel = try store.write { try $0.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC One")]) }.result
        let token = try store.writeToken()
        struct Refused: Error {}
        let seen = try store.dryRun { () throws -> [Value] in
            try store.write(dryRun: true) { try $0.update(channel, ["name": .string("BBC 1")]) }
            try store.write(dryRun: true) { try $0.insert("Channel", ["id": .string("itv")]) }
            #expect(throws: Refused.self) {
                try store.write(dryRun: true) { context in
                    try context.insert("Channel", ["id": .string("c4")])
                    throw Refused()
                }
            }
            #expect(throws: ObjectGraphError.self) { try store.write { try $0.insert("Channel", ["id": .string("five")]) } }
            return try store.read { context in
                try context.fetchAll("Channel", where: .all, orderBy: [SortKey("id")], keys: ["id", "name"]).flatMap { $0.values }
            }
        }
        #expect(seen == [.string("bbc1"), .string("BBC 1"), .string("itv"), .null], "\(seen)")
        #expect(try store.read { try $0.count("Channel", where: .all) } == 1)
        #expect(try store.read { try $0.object(channel)?["name"] } == .string("BBC One"))
        #expect(try store.writeToken() == token)
        try store.write { try $0.insert("Channel", ["id": .string("itv")]) }
        #expect(try store.read { try $0.count("Channel", where: .all) } == 2)
        #expect(try store.writeToken() != token)
    }

    /// The write token (`Store.writeToken`) tells `undo` whether anything wrote after a change:
    /// every transaction of the library that writes a row sets a new one, one that writes nothing
    /// leaves the database as it was, and any other writer (here GRDB on a connection of its own,
    /// as sqlite3 would) sets one through the triggers, rows of every table alike.
    @Test func theWriteTokenChangesWithEveryWriteByAnyWriter() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        let store = try Store(path: file.path, model: Guide.model())
        #expect(try store.writeToken() == nil)
        let channel = try store.write { try $0.insert("Channel", ["id": .string("bbc1")]) }.result
        let first = try #require(try store.writeToken())
        #expect(store.lastWriteToken == first)
        try store.write { _ in }
        try store.write(dryRun: true) { try $0.update(channel, ["name": .string("BBC One")]) }
        #expect(try store.writeToken() == first, "a transaction that wrote no row, or rolled back, keeps the token")
        try store.write { try $0.update(channel, ["name": .string("BBC One")]) }
        let second = try #require(try store.writeToken())
        #expect(second != first && store.lastWriteToken == second)

        let outside = try DatabaseQueue(path: file.path)
        for sql in ["UPDATE Channel SET name = 'BBC 1'", "INSERT INTO Genre (name) VALUES ('news')", "DELETE FROM Genre"] {
            let before = try store.writeToken()
            try outside.write { try $0.execute(sql: sql) }
            let after = try store.writeToken()
            #expect(after != before && after?.hasPrefix("outside ") == true, "\(sql): \(String(describing: after))")
            #expect(store.lastWriteToken == second, "the store's own last write is still its own")
        }
        let before = try store.writeToken()
        try store.withDatabase { try $0.execute(sql: "UPDATE Channel SET name = 'BBC One'") }
        #expect(try store.writeToken() != before, "raw writes through the store count too")
    }

    /// A database made before the write triggers gets them from the first writer that opens it;
    /// a reader opens it as it is.
    @Test func aDatabaseWithoutWriteTriggersGetsThem() throws {
        let file = try TemporaryDatabase()
        defer { file.cleanUp() }
        func triggers() throws -> Int {
            try DatabaseQueue(path: file.path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") ?? 0 }
        }
        _ = try Store(path: file.path, model: Guide.model())
        let all = try triggers()
        #expect(all == 3 * Schema(model: try Guide.model()).tables.count)
        try DatabaseQueue(path: file.path).write { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \(quote(name))")
            }
        }
        _ = try Store(path: file.path, model: Guide.model(), readOnly: true)
        #expect(try triggers() == 0)
        _ = try Store(path: file.path, model: Guide.model())
        #expect(try triggers() == all)
    }
}
