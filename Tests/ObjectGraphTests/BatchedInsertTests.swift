import Foundation
import Testing
@testable import ObjectGraph

/// Inserted rows are written in multi-row batches, some time after `insert` returns. What a user
/// of the context sees must not change: every read and write after an insert sees the row, row ids
/// are never reused, parents are written before the children that refer to them, and a bad row
/// still fails its transaction as a whole.
@Suite struct BatchedInsertTests {
    @Test func theNextReadOrWriteInTheTransactionSeesEveryInsertedRow() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            #expect(try context.count("Channel") == 1)
            var programmes: [ObjectID] = []
            for start in 0..<5 {
                programmes.append(try context.insert("Programme", ["title": .string("P\(start)"), "start": .date(Int64(start))],
                                                     related: ["channel": bbc]))
            }
            #expect(try context.object(programmes[3])?["title"] == .string("P3"))
            #expect(try context.fetchAll("Programme", where: .related("channel", bbc), orderBy: [SortKey("start")]).map(\.id) == programmes)
            let credit = try context.insert("Credit", ["person": .string("Ann")], related: ["programme": programmes[0]])
            try context.update(credit, ["person": .string("Ann Lee")])
            #expect(try context.object(credit)?["person"] == .string("Ann Lee"))
            let doomed = try context.insert("Credit", ["person": .string("Bob")], related: ["programme": programmes[1]])
            try context.delete(doomed)
            #expect(try context.count("Credit") == 1)
        }
        try store.read { (context: ObjectContext) throws in
            #expect(try context.count("Programme") == 5)
            #expect(try context.fetchAll("Credit").map { $0["person"] } == [.string("Ann Lee")])
        }
    }

    @Test func rowIDsAreNeverReusedEvenAfterTheLastRowIsDeleted() throws {
        let store = try Guide.store()
        let deleted = try store.write { (context: ObjectContext) throws -> ObjectID in
            _ = try context.insert("Genre", ["name": .string("news")])
            let last = try context.insert("Genre", ["name": .string("film")])
            try context.delete(last)
            let next = try context.insert("Genre", ["name": .string("sport")])
            #expect(next.rowID > last.rowID)
            try context.delete(next)
            return next
        }.result
        let later = try store.write { try $0.insert("Genre", ["name": .string("kids")]) }.result
        #expect(later.rowID > deleted.rowID)
    }

    /// A credit of an existing programme is pending before a new programme is: the new
    /// programme's credits must still be written after it (foreign keys are checked at once).
    @Test func parentsAreWrittenBeforeChildrenWhateverTheOrderOfInsertion() throws {
        let store = try Guide.store()
        let existing = try store.write { (context: ObjectContext) throws -> ObjectID in
            let channel = try context.insert("Channel", ["id": .string("arte")])
            return try context.insert("Programme", ["title": .string("Opera")], related: ["channel": channel])
        }.result
        try store.write { (context: ObjectContext) throws in
            try context.insert("Credit", ["person": .string("Tenor")], related: ["programme": existing])
            let channel = try context.insert("Channel", ["id": .string("bbc1")])
            let film = try context.insert("Programme", ["title": .string("Film")], related: ["channel": channel])
            try context.insert("Credit", ["person": .string("Star")], related: ["programme": film])
        }
        try store.read { (context: ObjectContext) throws in
            let film = try #require(try context.first("Programme", where: .compare("title", .equal, .string("Film"))))
            #expect(try context.fetchAll("Credit", where: .related("programme", film.id)).map { $0["person"] } == [.string("Star")])
            #expect(try context.count("Credit") == 2)
        }
    }

    @Test func aTransactionOfManyRowsWritesThemAllInOrder() throws {
        let store = try Guide.store()
        let ids = try store.write { (context: ObjectContext) throws -> [ObjectID] in
            let channel = try context.insert("Channel", ["id": .string("c")])
            let programme = try context.insert("Programme", ["title": .string("Marathon")], related: ["channel": channel])
            return try (0..<10_000).map { i in
                try context.insert("Credit", ["person": .string("Person \(i)")], related: ["programme": programme])
            }
        }.result
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0.rowID < $1.rowID })
        try store.read { (context: ObjectContext) throws in
            let stored = try context.fetchAll("Credit", orderBy: [SortKey(Schema.rowIDColumn)])
            #expect(stored.map(\.id) == ids)
            #expect(stored.last?["person"] == .string("Person 9999"))
        }
    }

    /// A flush writes full statements, then the tail in powers of two: every tail length
    /// (1 to 130 rows, past two full statements of credits) writes each row once, in order.
    @Test func everyTailLengthOfAFlushWritesEachRowOnce() throws {
        let store = try Guide.store()
        let ids = try store.write { (context: ObjectContext) throws -> [ObjectID] in
            let channel = try context.insert("Channel", ["id": .string("c")])
            var ids: [ObjectID] = []
            for length in 1...130 {
                let programme = try context.insert("Programme", ["title": .string("P\(length)")], related: ["channel": channel])
                ids.append(programme)
                for i in 0..<length {
                    ids.append(try context.insert("Credit", ["person": .string("\(length).\(i)")], related: ["programme": programme]))
                }
                try context.processPendingChanges()
            }
            return ids
        }.result
        try store.read { (context: ObjectContext) throws in
            let programmes = try context.fetchAll("Programme", orderBy: [SortKey(Schema.rowIDColumn)])
            #expect(programmes.count == 130)
            for (n, programme) in programmes.enumerated() {
                let credits = try context.fetchAll("Credit", where: .related("programme", programme.id), orderBy: [SortKey(Schema.rowIDColumn)])
                #expect(credits.map { $0["person"] } == (0..<(n + 1)).map { .string("\(n + 1).\($0)") })
            }
            #expect(try context.count("Credit") == (1...130).reduce(0, +))
            #expect(try (context.fetchAll("Programme") + context.fetchAll("Credit")).map(\.id).sorted { $0.description < $1.description }
                    == ids.sorted { $0.description < $1.description })
        }
    }

    /// Nulls are not bound (each run leaves every parameter null): a row with nulls written by
    /// the statement that wrote values in the same places before must store nulls, not them.
    @Test func aNullWhereTheStatementsLastRowHadAValueIsStoredAsNull() throws {
        let store = try Guide.store()
        let (full, sparse) = try store.write { (context: ObjectContext) throws -> (ObjectID, ObjectID) in
            let channel = try context.insert("Channel", ["id": .string("c")])
            let genre = try context.insert("Genre", ["name": .string("news")])
            let full = try context.insert("Programme", ["title": .string("Full"), "start": .date(1_780_000_000)],
                                          related: ["channel": channel, "genre": genre])
            try context.processPendingChanges()   // one row: the one-row statement
            let sparse = try context.insert("Programme", [:])   // one row again, every value null
            return (full, sparse)
        }.result
        try store.read { (context: ObjectContext) throws in
            let written = try #require(try context.object(full))
            #expect(written["title"] == .string("Full") && written["start"] == .date(1_780_000_000) && written["genre"] != .null)
            let empty = try #require(try context.object(sparse))
            #expect(empty.values == [Value](repeating: .null, count: empty.values.count))
        }
    }

    @Test func aRowThatSQLiteRefusesFailsTheWholeTransaction() throws {
        let store = try Guide.store()
        #expect(throws: (any Error).self) {
            try store.write { (context: ObjectContext) throws in
                let channel = try context.insert("Channel", ["id": .string("c")])
                try context.insert("Programme", ["title": .string("Fine")], related: ["channel": channel])
                // No such channel: the foreign key fails when the row is written.
                try context.insert("Programme", ["title": .string("Orphan")], related: ["channel": ObjectID(entity: "Channel", rowID: 999)])
            }
        }
        try store.read { (context: ObjectContext) throws in
            #expect(try context.count("Channel") == 0)
            #expect(try context.count("Programme") == 0)
        }
    }
}
