import Foundation
import Testing
@testable import ObjectGraph

@Suite struct SideTableTests {
    static let validators = SideTable(name: "_test_fetch", key: "source", columns: [
        AttributeDescription("url", .string, optional: false), AttributeDescription("etag", .string),
        AttributeDescription("fetched", .integer),
    ])

    func temporaryDatabase() -> String { NSTemporaryDirectory() + "sidetable-\(UUID().uuidString).sqlite" }

    @Test func rowsAreSavedUpdatedAndReadBack() throws {
        let path = temporaryDatabase()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store(path: path, model: ObjectModel(merging: [StoreTests.v1]))
        try store.create(Self.validators)
        #expect(try store.row(forKey: "uk", in: Self.validators) == nil)
        try store.save(["url": .string("https://a"), "etag": .string("\"1\""), "fetched": .integer(7)], forKey: "uk", in: Self.validators)
        try store.save(["url": .string("https://b")], forKey: "uk", in: Self.validators)
        let row = try #require(try store.row(forKey: "uk", in: Self.validators))
        #expect(row == ["url": .string("https://b"), "etag": .null, "fetched": .null])
        // Read without a model, as `status` does; the table stays out of the model's schema.
        #expect(try Store.row(forKey: "uk", in: Self.validators, ofDatabaseAt: path)?["url"] == .string("https://b"))
        _ = try Store(path: path, model: ObjectModel(merging: [StoreTests.v1]))
    }

    @Test func aMissingFileOrTableReadsAsNoRow() throws {
        let path = temporaryDatabase()
        #expect(try Store.row(forKey: "uk", in: Self.validators, ofDatabaseAt: path) == nil)
        #expect(!FileManager.default.fileExists(atPath: path), "reading must not create the database")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        _ = try Store(path: path, model: ObjectModel(merging: [StoreTests.v1]))
        #expect(try Store.row(forKey: "uk", in: Self.validators, ofDatabaseAt: path) == nil)
    }

    @Test func aNonOptionalColumnRefusesNull() throws {
        let store = try Store.inMemory(model: ObjectModel(merging: [StoreTests.v1]))
        try store.create(Self.validators)
        #expect(throws: (any Error).self) { try store.save([:], forKey: "uk", in: Self.validators) }
    }
}
