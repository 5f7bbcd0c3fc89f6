import Foundation
@testable import ObjectGraph
import Primitives
import Testing
import TestSupport

/// `ChangeDocument(jsonData:)` (`ChangeDocumentReader`) reads every document as the `Decodable`
/// conformance (Foundation's `JSONDecoder`, `ChangeDocument.decoded`) does: random documents in
/// both layouts, recorded change files with compact rows, hand-written corner cases; and says
/// where a broken one is wrong.
@Suite struct ChangeDocumentReaderTests {
    private func expectAlike(_ text: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectAlike(Data(text.utf8), comment, sourceLocation: sourceLocation)
    }

    private func expectAlike(_ data: Data, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let decoded = try ChangeDocument.decoded(data)
        let read = try ChangeDocument(jsonData: data)
        // `==` on doubles says NaN differs from itself: compared as written instead.
        let alike = try read == decoded || read.jsonData() == decoded.jsonData()
        #expect(alike, comment, sourceLocation: sourceLocation)
    }

    // MARK: Random documents

    private struct Generator {
        var rng: SplitMix64
        mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
        mutating func chance(_ n: UInt64) -> Bool { rng.next() % n == 0 }

        mutating func value() -> DiffValue {
            DiffValue(pick([
                .null, .bool(true), .bool(false), .integer(0), .integer(-7), .integer(.max), .integer(.min),
                .string(""), .string("BBC One"), .string("quote \" back\\slash / tab\t nl\n \u{1} caf\u{E9} \u{1F4FA}"),
                .string("%,"), .double(1.5), .double(-0.25), .double(2), .double(1e300), .double(5e-324),
                .double(.infinity), .double(-.infinity), .date(1_796_083_200), .date(-62_167_219_201), .date(0),
                .data([]), .data([0, 255, 7]),
            ]))
        }

        mutating func reference() -> ObjectReference {
            ObjectReference(entityName: pick(["Channel", "Programme"]), id: (0..<Int(rng.next() % 3)).map { _ in value() })
        }

        mutating func node(depth: Int) -> ObjectDiff {
            var diff = ObjectDiff(entityName: pick(["Channel", "Programme", "Credit", "Ünïcode"]),
                                  id: (0..<Int(rng.next() % 4)).map { _ in value() },
                                  change: pick([.insert, .update, .delete]))
            for _ in 0..<Int(rng.next() % 4) {
                diff.attributes[pick(["title", "start", "desc", "a,b", ""])] = AttributeChange(old: value(), new: value())
            }
            for _ in 0..<Int(rng.next() % 3) {
                var relationship = RelationshipDiff()
                if depth < 3 { relationship.members = (0..<Int(rng.next() % 3)).map { _ in node(depth: depth + 1) } }
                if chance(2) { relationship.added = [reference()] }
                if chance(2) { relationship.removed = [reference(), reference()] }
                diff.relationships[pick(["programmes", "credits", "channel"])] = relationship
            }
            return diff
        }
    }

    /// Random documents, pretty and compact: both readers give the document written.
    @Test(arguments: 0..<40) func randomDocumentsReadAsWritten(seed: UInt64) throws {
        var generator = Generator(rng: SplitMix64(seed: seed))
        let document = ChangeDocument(model: "m\(seed)", excluded: seed % 2 == 0 ? [] : ["Programme.hash", "Channel.x"],
                                      changes: (0..<Int(seed % 7)).map { _ in generator.node(depth: 0) })
        for pretty in [true, false] {
            let data = try document.jsonData(pretty: pretty)
            try expectAlike(data, "seed \(seed)")
            let read = try ChangeDocument(jsonData: data)
            #expect(try read.jsonData(pretty: pretty) == data, "seed \(seed): read and written again, the same bytes")
        }
    }

    // MARK: Recorded change files (compact rows)

    /// Change files as `ChangeRecorder` writes them, with compact rows nested three deep (a first
    /// import's inserts, then updates, moves and deletes): read alike.
    @Test(arguments: 0..<8) func recordedChangeFilesReadAlike(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try People.store()
        for (round, path) in ["first.json", "second.json"].enumerated() {
            let recorder = try ChangeRecorder(model: store.model, path: directory.path + "/" + path)
            store.addObserver(recorder)
            if round == 0 {
                try randomPeople(store, seed: seed)
            } else {
                try store.write { c in
                    var rng = SplitMix64(seed: seed &+ 100)
                    for address in try c.fetchAll("Address", keys: []) where rng.next() % 3 == 0 {
                        try c.update(address.id, ["city": .string("Moved \(rng.next() % 5)"), "rating": .double(0.5)])
                    }
                    if let person = try c.first("Person", keys: []), rng.next() % 2 == 0 { try c.delete(person.id) }
                }
            }
            try recorder.finish()
            let data = try Data(contentsOf: URL(fileURLWithPath: recorder.path))
            try expectAlike(data, "seed \(seed), \(path)")
        }
    }

    /// Read without the members of inserts (`undo` trusting the store), a document has the
    /// same roots with the same values, and counts every object it did not read: on recorded
    /// change files, and on random documents (nil where a member list holds more than inserts).
    @Test(arguments: 0..<8) func insertedMembersAreCountedWhereNotRead(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try People.store()
        let recorder = try ChangeRecorder(model: store.model, path: directory.path + "/first.json")
        store.addObserver(recorder)
        try randomPeople(store, seed: seed)
        try recorder.finish()
        var generator = Generator(rng: SplitMix64(seed: seed))
        let random = ChangeDocument(model: "m", changes: (0..<6).map { _ in generator.node(depth: 0) })
        try random.write(toFile: directory.path + "/random.json")
        for name in ["first.json", "random.json"] {
            let path = directory.path + "/" + name
            let whole = try ChangeDocument(contentsOfFile: path)
            guard let counted = try ChangeDocument(contentsOfFile: path, readingInsertedMembers: false) else {
                func onlyInserts(_ node: ObjectDiff) -> Bool {
                    node.relationships.values.allSatisfy { $0.members.allSatisfy { $0.change == .insert && onlyInserts($0) } }
                }
                func countable(_ node: ObjectDiff) -> Bool {
                    (node.change == .insert ? onlyInserts(node) : true) && node.relationships.values.allSatisfy { $0.members.allSatisfy(countable) }
                }
                #expect(!whole.changes.allSatisfy(countable), "seed \(seed), \(name): countable, yet not counted")
                continue
            }
            #expect(counted.changedObjectCount == whole.changedObjectCount, "seed \(seed), \(name)")
            #expect(counted.objectCount == whole.objectCount, "seed \(seed), \(name)")
            #expect(counted.changes.map(\.reference) == whole.changes.map(\.reference), "seed \(seed), \(name)")
            #expect(counted.changes.map(\.attributes) == whole.changes.map(\.attributes), "seed \(seed), \(name)")
            for (c, w) in zip(counted.changes, whole.changes) where c.change == .insert {
                #expect(c.relationships.values.allSatisfy { $0.members.isEmpty }, "seed \(seed): an insert's members are not read")
                #expect(c.unreadMembers == w.objectCount - 1)
            }
            if name == "first.json" { #expect(counted.changes.contains { $0.unreadMembers > 0 }, "seed \(seed): a first import has members") }
        }
    }

    /// A compact row ends at its last value, its relationships right after it: unless one of its
    /// relationships is named like a value's tag, when `{"date": ...}` would read as a value and
    /// every column is written first. Both read as written, by both readers.
    @Test(arguments: ["addresses", "date"]) func rowsEndAtTheirLastValueUnlessARelationshipIsNamedLikeATag(relationship: String) throws {
        let module = ModelModule("Tagged", entities: [
            EntityDescription("Person", identifier: ["firstName", "lastName"], attributes: [
                AttributeDescription("firstName", .string, optional: false),
                AttributeDescription("lastName", .string, optional: false),
                AttributeDescription("age", .integer),
                AttributeDescription("born", .date),
            ], relationships: [.toMany(relationship, "Address", inverse: "person", deleteRule: .cascade)]),
            EntityDescription("Address", identifier: ["person", "guid"], attributes: [
                AttributeDescription("guid", .string, optional: false),
                AttributeDescription("street", .string),
            ], relationships: [.toOne("person", "Person", inverse: relationship, deleteRule: .nullify, optional: false)]),
        ])
        let store = try Store.inMemory(model: try ObjectModel(merging: [module]))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rows-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try ChangeRecorder(model: store.model, path: path)
        store.addObserver(recorder)
        try store.write { c in
            let ann = try c.insert("Person", ["firstName": .string("Ann"), "lastName": .string("Doe")])
            try c.insert("Address", ["guid": .string("g1")], related: ["person": ann])
            let bob = try c.insert("Person", ["firstName": .string("Bob"), "lastName": .string("Roe"), "born": .date(1_796_083_200)])
            try c.insert("Address", ["guid": .string("g2"), "street": .string("Elm")], related: ["person": bob])
        }
        try recorder.finish()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: data, as: UTF8.self)
        if relationship == "date" {
            #expect(text.contains(#"["Ann","Doe",null,null,{"date":{"members":"#), "\(text)")
            #expect(text.contains(#"["Bob","Roe",null,{"date":1796083200},{"date":{"members":"#), "\(text)")
        } else {
            #expect(text.contains(#"["Ann","Doe",{"addresses":{"members":[{"change":"insert","entityName":"Address","rows":[["g1"]]}]}}]"#), "\(text)")
            #expect(text.contains(#"["Bob","Roe",null,{"date":1796083200},{"addresses":"#), "\(text)")
        }
        try expectAlike(data)
        let read = try ChangeDocument(jsonData: data)
        #expect(read.changes.map { $0.relationships[relationship]?.members.count } == [1, 1])
        #expect(read.changes.map { $0.attributes.keys.sorted() } == [["firstName", "lastName"], ["born", "firstName", "lastName"]])
        let counted = try #require(try ChangeDocument(contentsOfFile: path, readingInsertedMembers: false))
        #expect(counted.changes.map(\.unreadMembers) == [1, 1])
    }

    // MARK: Corner cases

    @Test func cornerCasesReadAlike() throws {
        let head = #"{"model":"m","changes":["#
        let node = #"{"change":"update","entityName":"E","id":[%@],"attributes":{"a":{"old":null,"new":%@}}}"#
        // Values: numbers in every form, tags, escapes.
        for value in ["0", "-0", "1.0", "-0.0", "1e2", "1E+2", "2.5e-3", "9223372036854775807", "-9223372036854775808",
                      "9223372036854775808", "1.5", "123456789012345678901234567890", "true", "false", "null",
                      #""\u00e9\ud83d\udcfa\/\b\f\n\r\t\"\\""#, #"{"double":1}"#, #"{"double":1.25}"#, #"{"double":"nan"}"#,
                      #"{"double":"-inf"}"#, #"{"date":"2026-11-22T03:00:00Z"}"#, #"{"date":1796083200}"#, #"{"date":12.0}"#,
                      #"{"data":"AAEC"}"#, #"{"data":""}"#, #"{"double":2,"date":3}"#, #"{"date":4,"data":"AA=="}"#, #"{"x":1,"date":5}"#] {
            let text = head + node.replacingOccurrences(of: "%@", with: value) + "]}"
            try expectAlike(text, "\(value)")
        }
        // Keys in any order, unknown keys, absent and null optional members, white space.
        try expectAlike(#" { "changes" : [ ] , "model" : "m" , "x" : [1, {"y": null}] } "#)
        try expectAlike(#"{"excluded":null,"rows":null,"model":"m","changes":[{"id":["k"],"entityName":"E","change":"delete","attributes":null,"relationships":null,"z":0}]}"#)
        try expectAlike(#"{"model":"m","changes":[{"change":"update","entityName":"E","id":[1],"relationships":{"r":{"members":null,"added":null,"removed":[{"entityName":"F","id":[2],"q":3}]}}}]}"#)
        try expectAlike(#"{"model":"m","excluded":["B.b","A.a"],"changes":[{"change":"insert","entityName":"E","id":[],"attributes":{"k":{"new":"v"}}}]}"#)
        // Compact rows: short rows, a row's relationships, rows described after the changes, a
        // node's rows before its entity and kind, the owner's identifier filled in.
        let rows = #""rows":{"E":{"columns":["k","v"],"id":["k"]},"M":{"columns":["n"],"id":["owner","n"]}}"#
        let changes = #""changes":[{"rows":[["a"],["b",null],["c",2,{"ms":{"members":[{"change":"insert","entityName":"M","rows":[["x"],[]]}]}},"ignored"]],"change":"insert","entityName":"E"},{"change":"delete","entityName":"E","rows":[["d",{"double":0.5}]]}]"#
        try expectAlike("{\"model\":\"m\",\(rows),\(changes)}")
        try expectAlike("{\"model\":\"m\",\(changes),\(rows)}")
        // Relationships before the last column: after a tagged value, after nothing.
        let early = #""changes":[{"change":"insert","entityName":"E","rows":[["e",{"date":5}],["f",{"ms":{"members":[{"change":"insert","entityName":"M","rows":[["y"]]}]}}],[{"ms":{"members":[]}}]]}]"#
        try expectAlike("{\"model\":\"m\",\(rows),\(early)}")
    }

    @Test func documentsBothRefuseAreRefused() throws {
        for text in [#"{"changes":[]}"#, #"{"model":"m"}"#, #"{"model":"m","changes":null}"#, #"{"model":1,"changes":[]}"#,
                     #"{"model":"m","changes":[{"change":"insert","entityName":"E"}]}"#,
                     #"{"model":"m","changes":[{"change":"move","entityName":"E","id":[]}]}"#,
                     #"{"model":"m","changes":[{"change":"update","entityName":"E","id":[[1]]}]}"#,
                     #"{"model":"m","changes":[{"change":"update","entityName":"E","id":[{"double":"x"}]}]}"#,
                     #"{"model":"m","changes":[{"change":"update","entityName":"E","rows":[]}]}"#,
                     #"{"model":"m","changes":[{"change":"insert","entityName":"E","rows":[["a"]]}]}"#,
                     #"{"model":"m","changes":[]} x"#, #"{"model":"m","changes":[}"#, #"{"model":"m\u12"}"#, "{\"model\":\"a\u{1}\"}",
                     #"{"model":"m","changes":[{"change":"update","entityName":"E","id":[01]}]}"#,
                     #"{"model":"m","rows":{"E":{"columns":["k","v"],"id":["k"]}},"changes":[{"change":"insert","entityName":"E","rows":[["g",{"date":1,"x":{"members":[]}}]]}]}"#] {
            #expect(throws: (any Error).self, "\(text)") { try ChangeDocument.decoded(Data(text.utf8)) }
            #expect(throws: (any Error).self, "\(text)") { try ChangeDocument(jsonData: Data(text.utf8)) }
        }
    }

    /// A broken change file's error names the file, the line and the column.
    @Test func errorsNameTheFileAndWhere() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{\n  \"model\": \"m\",\n  \"changes\": [\n    {\"change\": \"insert\", \"entityName\": 7}\n  ]\n}\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        do {
            _ = try ChangeDocument(contentsOfFile: path)
            Issue.record("a broken change file was read")
        } catch let error as JSONReadError {
            #expect(error.file == path)
            #expect(error.line == 4 && error.column == 40, "\(error)")
            #expect(error.description == "\(path), line 4, column 40: expected entityName (a string)")
        }
    }
}
