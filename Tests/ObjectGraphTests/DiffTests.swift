import Foundation
@testable import ObjectGraph
import Primitives
import Testing
import TestSupport

// MARK: - Fixtures

/// the design's (docs/design.md#model-driven-diff) Person/Address model as a module: a person owns addresses (cascade), an address
/// points back (nullify) and to a country (nullify, a root of its own).
enum People {
    static let module = ModelModule("People", entities: [
        EntityDescription("Person", identifier: ["firstName", "lastName"], attributes: [
            AttributeDescription("firstName", .string, optional: false),
            AttributeDescription("lastName", .string, optional: false),
            AttributeDescription("age", .integer),
            AttributeDescription("lastSeen", .date, userInfo: [UserInfoKey.diff: "exclude"]),
        ], relationships: [
            .toMany("addresses", "Address", inverse: "person", deleteRule: .cascade),
        ]),
        EntityDescription("Address", identifier: ["guid"], attributes: [
            AttributeDescription("guid", .string, optional: false),
            AttributeDescription("street", .string),
            AttributeDescription("city", .string),
            AttributeDescription("state", .string),
            AttributeDescription("postalCode", .string),
            AttributeDescription("movedIn", .date),
            AttributeDescription("rating", .double),
            AttributeDescription("verified", .bool, optional: false, default: .bool(false)),
        ], relationships: [
            .toOne("person", "Person", inverse: "addresses", deleteRule: .nullify),
            .toOne("country", "Country", inverse: "addresses", deleteRule: .nullify),
        ]),
        EntityDescription("Country", identifier: ["code"], attributes: [
            AttributeDescription("code", .string, optional: false),
            AttributeDescription("name", .string),
        ], relationships: [
            .toMany("addresses", "Address", inverse: "country", deleteRule: .nullify),
        ]),
    ])

    static let model: ObjectModel = try! ObjectModel(merging: [module])

    static func store() throws -> Store { try Store.inMemory(model: model) }
}

private func s(_ text: String) -> Value { .string(text) }
private func d(_ text: String) -> DiffValue { DiffValue(.string(text)) }

/// Fills a People store with a random graph: a seed always gives the same graph.
func randomPeople(_ store: Store, seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
    func chance(_ n: UInt64) -> Bool { rng.next() % n == 0 }
    try store.write { (c: ObjectContext) throws in
        var countries: [ObjectID] = []
        for code in ["DE", "FR", "GB", "IT"] where !chance(3) {
            countries.append(try c.insert("Country", ["code": s(code), "name": pick([.null, s("Alpha"), s("Beta")])]))
        }
        var persons: [ObjectID] = []
        for first in ["Ann", "Bob", "Cy"] {
            for last in ["Doe", "Roe", "Mc/Joe~,1", "Caf\u{E9}", "Cafe\u{301}"] where !chance(3) {
                persons.append(try c.insert("Person", ["firstName": s(first), "lastName": s(last),
                                                       "age": pick([.null, .integer(23), .integer(40)]),
                                                       "lastSeen": .date(Int64(rng.next() % 1000))]))
            }
        }
        guard !persons.isEmpty else { return }
        for g in 0..<10 where !chance(3) {
            var related = ["person": pick(persons)]
            if !countries.isEmpty && !chance(3) { related["country"] = pick(countries) }
            try c.insert("Address", [
                "guid": s("g\(g)"),
                "street": pick([.null, s("Somewhere"), s("Elsewhere")]),
                "city": pick([.null, s("Townsville"), s("Sometown"), s("caf\u{E9}"), s("cafe\u{301}")]),
                "state": pick([.null, s("CA")]),
                "postalCode": pick([s("54532"), s("222")]),
                "movedIn": pick([.null, .date(1_700_000_000), .date(1_800_000_000)]),
                "rating": pick([.null, .double(1.5), .double(2)]),
                "verified": .bool(chance(2)),
            ], related: related)
        }
    }
}

/// A JSON round trip, so that every applied document has been through the file format.
func roundTrip(_ document: ChangeDocument) throws -> ChangeDocument {
    try ChangeDocument(jsonData: try document.jsonData())
}

/// Every diff test, under one name: `swift test --filter DiffTests`.
@Suite struct DiffTests {}

// MARK: - The design's diff example (docs/design.md#model-driven-diff)

extension DiffTests {
    @Suite struct Seed {
        /// the design's (docs/design.md#model-driven-diff) sets: address 123 changes city, 567 is added; 999 is removed. The person's
        /// addresses point back to it (nullify): the walk does not follow that edge back.
        @Test func seedExampleAddressesMatchedByGuid() throws {
            let a = try People.store(), b = try People.store()
            try a.write { (c: ObjectContext) throws in
                let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "age": .integer(23)])
                try c.insert("Address", ["guid": s("123"), "street": s("Somewhere"), "city": s("Townsville"), "postalCode": s("54532")],
                             related: ["person": joe])
                try c.insert("Address", ["guid": s("999"), "street": s("Gone"), "city": s("Nowhere")], related: ["person": joe])
            }
            try b.write { (c: ObjectContext) throws in
                let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "age": .integer(23)])
                try c.insert("Address", ["guid": s("567"), "street": s("Elsewhere"), "city": s("Another Town"), "postalCode": s("222")],
                             related: ["person": joe])
                try c.insert("Address", ["guid": s("123"), "street": s("Somewhere"), "city": s("Sometown"), "postalCode": s("54532")],
                             related: ["person": joe])
            }
            let doc = try GraphDiff(model: People.model).diff(from: a, to: b)
            #expect(doc.model == a.fingerprint)
            try #require(doc.changes.count == 1)
            let joe = doc.changes[0]
            #expect(joe.entityName == "Person" && joe.id == [d("Joe"), d("McJoe")] && joe.change == .update)
            #expect(joe.attributes.isEmpty)
            #expect(Set(joe.relationships.keys) == ["addresses"])
            let members = try #require(joe.relationships["addresses"]).members
            #expect(members.map(\.entityName) == ["Address", "Address", "Address"])
            #expect(members.map(\.canonicalID) == ["123", "567", "999"])
            #expect(members.map(\.change) == [.update, .insert, .delete])

            // Changed: exactly the city, Townsville -> Sometown, as in the seed.
            #expect(members[0].attributes == ["city": AttributeChange(old: s("Townsville"), new: s("Sometown"))])
            #expect(members[0].relationships.isEmpty)
            // Added: every attribute against null, and the reference back to its person (not recursed).
            #expect(members[1].attributes["guid"] == AttributeChange(old: Value.null, new: s("567")))
            #expect(members[1].attributes["street"] == AttributeChange(old: Value.null, new: s("Elsewhere")))
            #expect(members[1].attributes["city"] == AttributeChange(old: Value.null, new: s("Another Town")))
            #expect(members[1].attributes["postalCode"] == AttributeChange(old: Value.null, new: s("222")))
            #expect(members[1].attributes["state"] == nil)   // null on both sides, as NSNull == NSNull in the seed
            #expect(Set(members[1].attributes.keys) == ["guid", "street", "city", "postalCode", "verified"])
            #expect(members[1].relationships == ["person": RelationshipDiff(added: [ObjectReference(entityName: "Person", id: [d("Joe"), d("McJoe")])])])
            // Deleted: every old value, new null.
            #expect(members[2].attributes["city"] == AttributeChange(old: s("Nowhere"), new: Value.null))
            #expect(members[2].relationships["person"]?.removed == [ObjectReference(entityName: "Person", id: [d("Joe"), d("McJoe")])])

            // Applying it to a copy of a gives b; the inverse gives a back.
            let c = try People.store()
            try c.write { (ctx: ObjectContext) throws in
                let joe = try ctx.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "age": .integer(23)])
                try ctx.insert("Address", ["guid": s("123"), "street": s("Somewhere"), "city": s("Townsville"), "postalCode": s("54532")],
                               related: ["person": joe])
                try ctx.insert("Address", ["guid": s("999"), "street": s("Gone"), "city": s("Nowhere")], related: ["person": joe])
            }
            let report = try doc.apply(to: c)
            #expect(report == ApplyReport(applied: 3, conflicts: []))
            #expect(try GraphDiff(model: People.model).diff(from: c, to: b).isEmpty)
            #expect(try doc.inverted().apply(to: c).conflicts.isEmpty)
            #expect(try GraphDiff(model: People.model).diff(from: c, to: a).isEmpty)
        }

        @Test func identicalStoresAndTheSameStoreDiffEmpty() throws {
            let a = try People.store(), b = try People.store()
            try randomPeople(a, seed: 7)
            try randomPeople(b, seed: 7)
            let diff = try GraphDiff(model: People.model)
            #expect(try diff.diff(from: a, to: b).isEmpty)
            #expect(try diff.diff(from: a, to: a).isEmpty)
            #expect(diff.rootEntityNames == ["Person", "Country"])
        }
    }
}

// MARK: - Exclusions and references

extension DiffTests {
    @Suite struct Exclusions {
        private func pair(lastSeen: (Int64, Int64), postal: (String, String)) throws -> (Store, Store) {
            let a = try People.store(), b = try People.store()
            for (store, seen, code) in [(a, lastSeen.0, postal.0), (b, lastSeen.1, postal.1)] {
                try store.write { (c: ObjectContext) throws in
                    let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "lastSeen": .date(seen)])
                    try c.insert("Address", ["guid": s("123"), "postalCode": s(code)], related: ["person": joe])
                }
            }
            return (a, b)
        }

        @Test func metadataExclusionIsNeitherComparedNorOutput() throws {
            let (a, b) = try pair(lastSeen: (100, 200), postal: ("1", "1"))
            let diff = try GraphDiff(model: People.model)
            #expect(try diff.diff(from: a, to: b).isEmpty)
            #expect(!diff.includes("Person", "lastSeen") && diff.includes("Person", "age"))
            // An insert lists every attribute but the excluded one.
            let insert = try diff.diff(from: try People.store(), to: b)
            #expect(Set(insert.changes[0].attributes.keys) == ["firstName", "lastName"])   // age is null, lastSeen excluded
        }

        @Test func callerExclusionIsNeitherComparedNorOutput() throws {
            let (a, b) = try pair(lastSeen: (100, 100), postal: ("1", "2"))
            let plain = try GraphDiff(model: People.model).diff(from: a, to: b)
            #expect(plain.changes.first?.relationships["addresses"]?.members.first?.attributes
                    == ["postalCode": AttributeChange(old: s("1"), new: s("2"))])
            let excluding = try GraphDiff(model: People.model, excluding: ["Address.postalCode"])
            #expect(try excluding.diff(from: a, to: b).isEmpty)
            let insert = try excluding.diff(from: try People.store(), to: b)
            let address = try #require(insert.changes.first?.relationships["addresses"]?.members.first)
            #expect(address.attributes["postalCode"] == nil && address.attributes["guid"] != nil)
            #expect(insert.excluded == ["Address.postalCode"])
            // Applying an insert made without postal codes, then diffing the same way, is empty; the
            // excluded attribute keeps its default.
            let c = try People.store()
            #expect(try insert.apply(to: c).conflicts.isEmpty)
            #expect(try excluding.diff(from: c, to: b).isEmpty)
            #expect(try c.read { try $0.first("Address")?["postalCode"] } == .null)
            // An excluded owning relationship hides the whole subtree.
            #expect(try GraphDiff(model: People.model, excluding: ["Person.addresses"]).diff(from: a, to: b).isEmpty)
            #expect(throws: DiffError.unknownExclusion("Address.nope")) {
                try GraphDiff(model: People.model, excluding: ["Address.nope"])
            }
            #expect(throws: DiffError.identifierExcluded("Address.guid")) {
                try GraphDiff(model: People.model, excluding: ["Address.guid"])
            }
        }

        @Test func nullifyRelationshipIsAReferenceNotARecursion() throws {
            let a = try People.store(), b = try People.store()
            for (store, country) in [(a, "FR"), (b, "DE")] {
                try store.write { (c: ObjectContext) throws in
                    let fr = try c.insert("Country", ["code": s("FR"), "name": s("France")])
                    let de = try c.insert("Country", ["code": s("DE"), "name": s("Germany")])
                    let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe")])
                    try c.insert("Address", ["guid": s("123")], related: ["person": joe, "country": country == "FR" ? fr : de])
                }
            }
            let doc = try GraphDiff(model: People.model).diff(from: a, to: b)
            try #require(doc.changes.count == 1)   // the countries themselves did not change
            let address = try #require(doc.changes[0].relationships["addresses"]?.members.first)
            #expect(address.change == .update && address.attributes.isEmpty)
            #expect(address.relationships == ["country": RelationshipDiff(
                added: [ObjectReference(entityName: "Country", id: [d("DE")])],
                removed: [ObjectReference(entityName: "Country", id: [d("FR")])])])
            // The country's own to-many side is the same fact: not emitted twice.
            #expect(doc.changes.allSatisfy { $0.entityName != "Country" })
            // Excluding the reference removes it from comparison.
            #expect(try GraphDiff(model: People.model, excluding: ["Address.country"]).diff(from: a, to: b).isEmpty)
            // Applied, the reference is resolved by identifier in the other store.
            #expect(try doc.apply(to: a) == ApplyReport(applied: 1, conflicts: []))
            #expect(try GraphDiff(model: People.model).diff(from: a, to: b).isEmpty)
        }
    }
}

// MARK: - Documents

extension DiffTests {
    @Suite struct Documents {
        @Test func jsonRoundTripAndPatchPaths() throws {
            let a = try People.store(), b = try People.store()
            try a.write { (c: ObjectContext) throws in
                let p = try c.insert("Person", ["firstName": s("Jo/e"), "lastName": s("Mc~Joe,Jr"), "age": .integer(23)])
                try c.insert("Address", ["guid": s("a/b~c"), "city": s("Townsville"), "rating": .double(1.5)], related: ["person": p])
            }
            try b.write { (c: ObjectContext) throws in
                let p = try c.insert("Person", ["firstName": s("Jo/e"), "lastName": s("Mc~Joe,Jr"), "age": .null])
                try c.insert("Address", ["guid": s("a/b~c"), "city": s("Sometown"), "rating": .double(2),
                                         "movedIn": .date(1_700_000_000), "verified": .bool(true)], related: ["person": p])
                try c.insert("Person", ["firstName": s("New"), "lastName": s("One")])
            }
            let doc = try GraphDiff(model: People.model).diff(from: a, to: b)
            let json = String(decoding: try doc.jsonData(), as: UTF8.self)
            #expect(json.contains("\"date\" : \"2023-11-14T22:13:20Z\""))
            #expect(json.contains("\"double\" : 2"))
            #expect(try roundTrip(doc) == doc)
            #expect(try roundTrip(doc.inverted()) == doc.inverted())
            #expect(doc.inverted().inverted() == doc)

            let person = "/Person/" + escapeJSONPointerToken("Jo/e,Mc~Joe%2CJr")
            #expect(person == "/Person/Jo~1e,Mc~0Joe%2CJr")
            let ops = doc.jsonPatch()
            let address = person + "/addresses/a~1b~0c"
            #expect(ops.map(\.description) == [
                "remove \(person)/age",
                "replace \(address)/city",
                "add \(address)/movedIn",
                "replace \(address)/rating",
                "replace \(address)/verified",
                "add /Person/New,One",
            ])
            #expect(ops[1].value == .value(d("Sometown")))
            let patchJSON = try JSONEncoder().encode(ops)
            #expect(try JSONDecoder().decode([PatchOperation].self, from: patchJSON) == ops)
        }

        @Test func valuesSurviveJSONWithTheirTypes() throws {
            let values: [Value] = [.null, s(""), s("caf\u{E9}"), s("cafe\u{301}"), .integer(-3), .integer(Int64.max), .double(0.1),
                                   .double(3), .double(.nan), .bool(true), .bool(false), .date(0), .date(-86_400_000_000),
                                   .data([0, 255, 1])]
            let decoded = try JSONDecoder().decode([DiffValue].self, from: try JSONEncoder().encode(values.map(DiffValue.init)))
            #expect(decoded.map(\.value) == values)
            #expect(DiffValue(.integer(2)).coerced(to: .double) == .double(2))
            #expect(DiffValue(.integer(1)).coerced(to: .bool) == .bool(true))
            #expect(UTCTime.parseISO8601("2026-11-22T03:00:00Z") == UTCTime.seconds(year: 2026, month: 11, day: 22, hour: 3))
            #expect(UTCTime.parseISO8601("2026-13-22T03:00:00Z") == nil)
        }

        @Test func documentForAnotherModelIsRefused() throws {
            let doc = ChangeDocument(model: "0000000000000000", changes: [])
            #expect(throws: DiffError.self) { try doc.apply(to: try People.store()) }
        }
    }
}

// MARK: - Apply: conflicts

extension DiffTests {
    @Suite struct Apply {
        private func fill(_ store: Store, age: Int64, city123: String, city999: String?, extra567: Bool) throws {
            try store.write { (c: ObjectContext) throws in
                let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "age": .integer(age)])
                try c.insert("Address", ["guid": s("123"), "city": s(city123)], related: ["person": joe])
                if let city999 { try c.insert("Address", ["guid": s("999"), "city": s(city999)], related: ["person": joe]) }
                if extra567 { try c.insert("Address", ["guid": s("567"), "city": s("Here first")], related: ["person": joe]) }
            }
        }

        @Test func conflictsAreReportedAndLeaveObjectsUntouched() throws {
            let a = try People.store(), b = try People.store()
            try fill(a, age: 23, city123: "Townsville", city999: "Nowhere", extra567: false)
            try b.write { (c: ObjectContext) throws in
                let joe = try c.insert("Person", ["firstName": s("Joe"), "lastName": s("McJoe"), "age": .integer(24)])
                try c.insert("Address", ["guid": s("123"), "city": s("Sometown")], related: ["person": joe])
                try c.insert("Address", ["guid": s("567"), "city": s("Another Town")], related: ["person": joe])
            }
            let doc = try roundTrip(try GraphDiff(model: People.model).diff(from: a, to: b))

            // The target moved on: Joe is 30 now, 999 changed city, 567 already exists.
            let target = try People.store()
            try fill(target, age: 30, city123: "Townsville", city999: "Elsewhere", extra567: true)
            let report = try doc.apply(to: target)
            #expect(report.applied == 1)   // only 123's city
            #expect(report.conflicts.map(\.description).sorted() == [
                "delete Address[999]: city is 'Elsewhere', the diff expected 'Nowhere'",
                "insert Address[567]: the object already exists",
                "update Person[Joe,McJoe]: age is '30', the diff expected '23'",
            ])
            #expect(report.conflicts.first { $0.entityName == "Person" }?.key == "age")
            try target.read { (c: ObjectContext) throws in
                #expect(try c.first("Person")?["age"] == .integer(30))
                let cities = try c.fetchAll("Address", orderBy: [SortKey("guid")]).map { $0["city"] }
                #expect(cities == [s("Sometown"), s("Here first"), s("Elsewhere")])
            }

            // A dry run changes nothing and reports the same.
            let fresh = try People.store()
            try fill(fresh, age: 23, city123: "Townsville", city999: "Nowhere", extra567: false)
            #expect(try doc.apply(to: fresh, dryRun: true) == ApplyReport(applied: 4, conflicts: []))
            #expect(try GraphDiff(model: People.model).diff(from: fresh, to: a).isEmpty)
        }

        @Test func deleteOfAnObjectWhoseSubtreeGrewIsAConflict() throws {
            let a = try People.store(), b = try People.store()
            try fill(a, age: 23, city123: "Townsville", city999: nil, extra567: false)
            let doc = try GraphDiff(model: People.model).diff(from: a, to: b)   // delete Joe and 123
            let target = try People.store()
            try fill(target, age: 23, city123: "Townsville", city999: "Nowhere", extra567: false)
            let report = try doc.apply(to: target)
            #expect(report.applied == 0)
            #expect(report.conflicts.map(\.description) == ["delete Person[Joe,McJoe]: addresses has 2 members, the diff expected 1"])
            #expect(try target.read { try $0.count("Address") } == 2)
        }

        /// Random graphs: apply(diff(a, b), copy of a) == b, and the inverse gives a back.
        @Test(arguments: 0..<100) func randomGraphsRoundTrip(seed: Int) throws {
            let diff = try GraphDiff(model: People.model)
            let a = try People.store(), b = try People.store(), c = try People.store()
            try randomPeople(a, seed: UInt64(seed) * 2 + 1)
            try randomPeople(b, seed: UInt64(seed) * 2 + 2)
            try randomPeople(c, seed: UInt64(seed) * 2 + 1)
            let doc = try roundTrip(try diff.diff(from: a, to: b))
            let forward = try doc.apply(to: c)
            #expect(forward.conflicts.isEmpty, "\(forward.conflicts)")
            #expect(forward.applied == doc.changedObjectCount)
            #expect(try diff.diff(from: c, to: b).isEmpty)
            let back = try roundTrip(doc.inverted()).apply(to: c)
            #expect(back.conflicts.isEmpty, "\(back.conflicts)")
            #expect(try diff.diff(from: c, to: a).isEmpty)
            // Applied to an unrelated graph, a document never fails: what does not fit conflicts,
            // and an object whose change conflicted is left as it was.
            let d = try People.store()
            try randomPeople(d, seed: UInt64(seed) &* 7919 &+ 13)
            let dBefore = try d.snapshot()
            let elsewhere = try doc.apply(to: d)
            #expect(elsewhere.applied + elsewhere.conflicts.count > 0 || doc.isEmpty)
            // Keyed by values, not by Swift strings: "Café" in NFC and NFD are two people here.
            var touched: [[DiffValue]: ObjectDiff] = [:]
            func key(_ kind: ChangeKind, _ entity: String, _ id: [DiffValue]) -> [DiffValue] {
                [DiffValue(.string(kind.rawValue)), DiffValue(.string(entity))] + id
            }
            func flatten(_ node: ObjectDiff) {
                touched[key(node.change, node.entityName, node.id)] = node
                node.relationships.values.forEach { $0.members.forEach(flatten) }
            }
            try diff.diff(from: dBefore, to: d).changes.forEach(flatten)
            for conflict in elsewhere.conflicts where conflict.change != .insert {
                #expect(touched[key(.delete, conflict.entityName, conflict.id)] == nil, "\(conflict)")
                #expect(touched[key(.update, conflict.entityName, conflict.id)]?.attributes.isEmpty ?? true, "\(conflict)")
            }
            // Applying twice conflicts instead of doing anything twice.
            let again = try doc.inverted().apply(to: c)
            #expect(again.applied == 0 || doc.isEmpty)
            #expect(try diff.diff(from: c, to: a).isEmpty)
        }
    }
}

// MARK: - Other shapes: owned to-one, sub-entities, identifiers through references

/// A shelf owns items (a parent entity with two sub-entities) and one label (an owned
/// one-to-one); an item may point to a publisher, whose identifier is part of nothing.
enum Shelves {
    static let module = ModelModule("Shelves", entities: [
        EntityDescription("Shelf", identifier: ["name"], attributes: [
            AttributeDescription("name", .string, optional: false),
        ], relationships: [
            .toMany("items", "Item", inverse: "shelf", deleteRule: .cascade),
            .toOne("label", "Label", inverse: "shelf", deleteRule: .cascade),
        ]),
        EntityDescription("Label", identifier: ["shelf"], attributes: [
            AttributeDescription("text", .string),
        ], relationships: [
            .toOne("shelf", "Shelf", inverse: "label", deleteRule: .nullify),
        ]),
        EntityDescription("Item", identifier: ["code"], attributes: [
            AttributeDescription("code", .string, optional: false),
            AttributeDescription("title", .string),
        ], relationships: [
            .toOne("shelf", "Shelf", inverse: "items", deleteRule: .nullify),
            .toOne("publisher", "Publisher", inverse: "items", deleteRule: .nullify),
        ]),
        EntityDescription("Book", parent: "Item", attributes: [AttributeDescription("pages", .integer)]),
        EntityDescription("Film", parent: "Item", attributes: [AttributeDescription("minutes", .integer)]),
        EntityDescription("Publisher", identifier: ["name"], attributes: [
            AttributeDescription("name", .string, optional: false),
        ], relationships: [
            .toMany("items", "Item", inverse: "publisher", deleteRule: .deny),
        ]),
    ])
    static let model: ObjectModel = try! ObjectModel(merging: [module])
}


extension DiffTests {
    @Suite struct Shapes {
        func fill(_ store: Store, label: String?, items: [(String, String, String?)], publishers: [String]) throws {
            try store.write { (c: ObjectContext) throws in
                var pubs: [String: ObjectID] = [:]
                for p in publishers { pubs[p] = try c.insert("Publisher", ["name": s(p)]) }
                let shelf = try c.insert("Shelf", ["name": s("top")])
                if let label { try c.insert("Label", ["text": s(label)], related: ["shelf": shelf]) }
                for (entity, code, publisher) in items {
                    var related = ["shelf": shelf]
                    if let publisher { related["publisher"] = pubs[publisher]! }
                    try c.insert(entity, ["code": s(code), "title": s(code.uppercased())], related: related)
                }
            }
        }

        @Test func ownedToOneSubEntitiesAndDeny() throws {
            let diff = try GraphDiff(model: Shelves.model)
            #expect(diff.rootEntityNames == ["Shelf", "Publisher"])
            let a = try Store.inMemory(model: Shelves.model), b = try Store.inMemory(model: Shelves.model)
            try fill(a, label: "old", items: [("Book", "x", "P"), ("Film", "y", nil), ("Book", "z", nil)], publishers: ["P"])
            try fill(b, label: "new", items: [("Film", "x", "Q"), ("Film", "y", "P"), ("Book", "w", nil)], publishers: ["P", "Q"])
            let doc = try roundTrip(try diff.diff(from: a, to: b))
            let shelf = try #require(doc.changes.first)
            // The label is identified through its shelf: [shelf's name].
            #expect(shelf.relationships["label"]?.members.map(\.id) == [[d("top")]])
            #expect(shelf.relationships["label"]?.members.first?.attributes == ["text": AttributeChange(old: s("old"), new: s("new"))])
            // x turned from a Book into a Film: a delete and an insert under one identifier.
            #expect(shelf.relationships["items"]?.members.map { "\($0.change.rawValue) \($0.entityName) \($0.canonicalID)" } == [
                "insert Book w", "delete Book x", "insert Film x", "update Film y", "delete Book z",
            ])
            #expect(doc.changes.map(\.entityName) == ["Shelf", "Publisher"])

            let c = try Store.inMemory(model: Shelves.model)
            try fill(c, label: "old", items: [("Book", "x", "P"), ("Film", "y", nil), ("Book", "z", nil)], publishers: ["P"])
            let report = try doc.apply(to: c)
            #expect(report.conflicts.isEmpty, "\(report.conflicts)")
            #expect(try diff.diff(from: c, to: b).isEmpty)
            #expect(try doc.inverted().apply(to: c).conflicts.isEmpty)
            #expect(try diff.diff(from: c, to: a).isEmpty)

            // Deleting a publisher that items still use is denied: a conflict, nothing deleted.
            let keep = try Store.inMemory(model: Shelves.model)
            try fill(keep, label: "old", items: [("Book", "x", "P"), ("Film", "y", nil), ("Book", "z", nil)], publishers: ["P"])
            let deletePublisher = try diff.diff(from: keep, to: try Store.inMemory(model: Shelves.model))
            let publisherOnly = ChangeDocument(model: deletePublisher.model,
                                               changes: deletePublisher.changes.filter { $0.entityName == "Publisher" })
            let denied = try publisherOnly.apply(to: keep)
            #expect(denied.applied == 0 && denied.conflicts.count == 1)
            #expect(denied.conflicts.first?.reason.contains("denies deletion") == true)
            #expect(try keep.read { try $0.count("Publisher") } == 1)
        }
    }
}

// MARK: - Change files written without JSONEncoder

extension DiffTests {
    /// `JSONText` writes exactly the bytes of `JSONEncoder` with `[.sortedKeys,
    /// .withoutEscapingSlashes]`: change files read back through Codable, and old files diff well.
    @Suite struct JSONTextEncoding {
        static func encoder() -> JSONEncoder {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return encoder
        }

        @Test(arguments: 0..<40) func changesAndPatchesOfRandomGraphs(seed: Int) throws {
            let a = try People.store(), b = try People.store()
            try randomPeople(a, seed: UInt64(seed) * 2 + 1)
            try randomPeople(b, seed: UInt64(seed) * 2 + 2)
            let doc = try GraphDiff(model: People.model).diff(from: a, to: b)
            let encoder = Self.encoder()
            for change in doc.changes + doc.inverted().changes {
                var text = JSONText()
                text.append(change)
                #expect(text.string == String(decoding: try encoder.encode(change), as: UTF8.self))
            }
            for op in doc.jsonPatch() + doc.inverted().jsonPatch() {
                var text = JSONText()
                text.append(op)
                #expect(text.string == String(decoding: try encoder.encode(op), as: UTF8.self))
            }
            // Whole documents (`tvimport diff`), compact and pretty, with and without exclusions.
            for document in [doc, ChangeDocument(model: doc.model, excluded: ["Person.b", "Person/a"], changes: doc.changes)] {
                #expect(try document.jsonData(pretty: false) == encoder.encode(document))
                let pretty = JSONEncoder()
                pretty.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                #expect(String(decoding: try document.jsonData(), as: UTF8.self) == String(decoding: try pretty.encode(document), as: UTF8.self))
            }
        }

        @Test func everyKindOfValue() throws {
            let control = String(String.UnicodeScalarView((0..<32).map { Unicode.Scalar(UInt8($0)) }))
            let values: [Value] = [.null, s(""), s("a\"b\\c/d"), s(control), s("caf\u{E9} \u{2028} 🎬"), .integer(Int64.min),
                                   .integer(Int64.max), .double(0.1), .double(3), .double(-0.0), .double(1e20), .double(1e-5),
                                   .double(5e-324), .double(.nan), .double(.infinity), .double(-.infinity), .bool(true),
                                   .bool(false), .date(0), .date(-86_400_000_000), .date(Int64.max), .data([0, 255, 1])]
            let change = ObjectDiff(entityName: "Thing", id: values.map(DiffValue.init), change: .update,
                                    attributes: Dictionary(uniqueKeysWithValues: values.enumerated().map {
                                        ("k\($0.offset)", AttributeChange(old: .null, new: $0.element))
                                    }),
                                    relationships: ["r": RelationshipDiff(added: [ObjectReference(entityName: "E", id: [d("x")])])])
            var text = JSONText()
            text.append(change)
            #expect(text.string == String(decoding: try Self.encoder().encode(change), as: UTF8.self))
            // And it reads back (NaN is never equal to itself: compare the text of what was read).
            var again = JSONText()
            again.append(try JSONDecoder().decode(ObjectDiff.self, from: Data(text.bytes)))
            #expect(again.string == text.string)
        }
    }
}
