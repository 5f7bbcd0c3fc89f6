import Foundation
import GRDB
import Testing
@testable import ObjectGraph

@Suite struct FetchTests {
    @Test func fetchFiltersAndSortsInSQL() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let arte = try context.insert("Channel", ["id": .string("arte")])
            for (title, start, channel) in [("News", 300, bbc), ("Film", 100, bbc), ("Opera", 200, arte), ("Late", 400, bbc)] {
                try context.insert("Programme", ["title": .string(title), "start": .date(Int64(start))], related: ["channel": channel])
            }
        }
        try store.read { (context: ObjectContext) throws in
            let bbc = try #require(try context.first("Channel", where: .compare("id", .equal, .string("bbc1"))))
            let early = try context.fetchAll("Programme",
                                             where: .and([.related("channel", bbc.id), .compare("start", .less, .date(400))]),
                                             orderBy: [SortKey("start", ascending: false)])
            #expect(early.map { $0["title"] } == [.string("News"), .string("Film")])
            #expect(early.allSatisfy { $0.related("channel") == bbc.id })
            let titles = try context.fetchAll("Programme", where: .isIn("title", [.string("Opera"), .string("Late")]),
                                              orderBy: [SortKey("title")], keys: ["title"])
            #expect(titles.map { $0["title"] } == [.string("Late"), .string("Opera")])
            #expect(titles.first?["start"] == .null)
            #expect(try context.fetchAll("Programme", orderBy: [SortKey("start")], limit: 2).map { $0["start"] } == [.date(100), .date(200)])
            #expect(try context.count("Programme", where: .not(.related("channel", bbc.id))) == 1)
            #expect(throws: ObjectGraphError.self) { try context.fetch("Programme", where: .compare("nope", .equal, .null)) }
        }
    }

    /// `IN` lists are padded to a power of two with their first value (one statement per
    /// power): every length, with `NOT` too, selects exactly the listed objects.
    /// `fetchMembers`: every member of the matching owners, owners in the order asked for (not
    /// row order), each owner's members together, the owner's row id last; no other owner's.
    @Test func membersComeInTheirOwnersOrder() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let arte = try context.insert("Channel", ["id": .string("arte")])
            // Inserted out of start order, so that row order and start order differ.
            for (title, start, channel, people) in [("Late", 400, bbc, ["Ann", "Bob"]), ("Film", 100, bbc, ["Cy"]), ("Opera", 200, arte, ["Di"]),
                                                    ("News", 300, bbc, []), ("Early", 50, bbc, ["Ed", "Flo", "Gus"])] {
                let p = try context.insert("Programme", ["title": .string(title), "start": .date(Int64(start))], related: ["channel": channel])
                for person in people { try context.insert("Credit", ["person": .string(person)], related: ["programme": p]) }
            }
        }
        try store.read { (context: ObjectContext) throws in
            let bbc = try #require(try context.first("Channel", where: .compare("id", .equal, .string("bbc1"))))
            let owners = try context.fetchAll("Programme", where: .related("channel", bbc.id), orderBy: [SortKey("start")], keys: ["title"])
            let cursor = try context.fetchMembers("credits", ofOwners: "Programme", where: .related("channel", bbc.id),
                                                  ownerOrder: [SortKey("start")], keys: ["person"])
            var seen: [(owner: Int64, person: String)] = []
            while try cursor.step() {
                seen.append((cursor.value(at: 1).integerValue ?? -1, String(decoding: try #require(cursor.text(at: 0)), as: UTF8.self)))
            }
            let title = Dictionary(uniqueKeysWithValues: owners.map { ($0.id.rowID, $0["title"].stringValue ?? "") })
            #expect(seen.map { title[$0.owner] ?? "?" } == ["Early", "Early", "Early", "Film", "Late", "Late"])
            #expect(Set(seen.filter { title[$0.owner] == "Early" }.map(\.person)) == ["Ed", "Flo", "Gus"])
            #expect(seen.map(\.person).filter { $0 == "Di" }.isEmpty)
            #expect(throws: ObjectGraphError.self) {
                try context.fetchMembers("channel", ofOwners: "Programme", where: .all, ownerOrder: [], keys: [])
            }
        }
    }

    /// `.union` is fetched as one query per term merged by SQL (`UNION`), the terms padded to a
    /// power of two: whatever the terms (overlapping, empty, repeated, 1 to 9 of them), it selects
    /// what `.or` selects, in the same order, each object once; sorted on a key it does not
    /// select, and counted, it is `.or` itself.
    @Test func aUnionSelectsWhatItsOrSelectsInTheSameOrder() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let arte = try context.insert("Channel", ["id": .string("arte")])
            for start in (0..<120).shuffled() {
                try context.insert("Programme", ["title": .string("p\(start % 7)"), "start": .date(Int64(start))],
                                   related: ["channel": start % 3 == 0 ? arte : bbc])
            }
        }
        var generator = SystemRandomNumberGenerator()
        try store.read { (context: ObjectContext) throws in
            let bbc = try #require(try context.first("Channel", where: .compare("id", .equal, .string("bbc1"))))
            for _ in 0..<60 {
                let terms: [ObjectPredicate] = (0..<Int.random(in: 1...9, using: &generator)).map { _ in
                    let low = Int64.random(in: -5...125, using: &generator), length = Int64.random(in: 0...30, using: &generator)
                    return .and([.related("channel", bbc.id), .compare("start", .greaterOrEqual, .date(low)),
                                 .compare("start", .less, .date(low + length))])
                }
                let sort = [SortKey("start"), SortKey("title", ascending: false)]
                for keys in [["start", "title"], nil] {
                    let expected = try context.fetchAll("Programme", where: .or(terms), orderBy: sort, keys: keys)
                    let union = try context.fetchAll("Programme", where: .union(terms), orderBy: sort, keys: keys)
                    #expect(union.map(\.id) == expected.map(\.id))
                    #expect(union.map(\.values) == expected.map(\.values))
                }
                let bySortKeyNotRead = try context.fetchAll("Programme", where: .union(terms), orderBy: [SortKey("title"), SortKey("start")], keys: ["start"])
                #expect(bySortKeyNotRead.map(\.id) == (try context.fetchAll("Programme", where: .or(terms), orderBy: [SortKey("title"), SortKey("start")], keys: ["start"]).map(\.id)))
                #expect(try context.count("Programme", where: .union(terms)) == (try context.count("Programme", where: .or(terms))))
            }
        }
    }

    @Test func inListsOfEveryLengthSelectExactlyTheirObjects() throws {
        let store = try Guide.store()
        let ids = try store.write { (context: ObjectContext) throws in
            try (0..<20).map { try context.insert("Channel", ["id": .string("c\($0)")]).rowID }
        }.result
        try store.read { (context: ObjectContext) throws in
            for length in 1...ids.count {
                let chosen = Array(ids.shuffled().prefix(length))
                let byRowID = try context.fetchAll("Channel", where: .rowIDs(chosen)).map(\.id.rowID)
                #expect(Set(byRowID) == Set(chosen) && byRowID.count == length)
                let names = chosen.map { Value.string("c\($0 - ids[0])") }
                #expect(try context.count("Channel", where: .isIn("id", names)) == length)
                #expect(try context.count("Channel", where: .not(.isIn("id", names))) == ids.count - length)
            }
        }
    }

    /// Lists of strings are bound as one JSON array too: texts JSON escapes (quotes, backslashes,
    /// controls, slashes, non-ASCII) select exactly their objects, past SQLite's limit of
    /// parameters too; a text with a NUL (which SQLite's JSON would cut) is bound value by value.
    @Test func stringListsOfAnyLengthSelectExactlyTheirObjects() throws {
        let store = try Guide.store()
        let odd = ["\"quoted\"", "back\\slash", "tab\tnew\nline\u{1}\u{1F}", "a/b", "Über Straße", "東京ニュース", "🎬 film", "", " ", "nul\u{0}byte"]
        let many = (0..<40_000).map { "c\($0)" }
        try store.write { (context: ObjectContext) throws in
            for id in odd + many { _ = try context.insert("Channel", ["id": .string(id)]) }
        }
        try store.read { (context: ObjectContext) throws in
            let total = odd.count + many.count, stored = Set(odd + many)
            // (A list with the NUL is bound value by value: at most SQLite's 32,766 of them.)
            for chosen in [odd, Array(odd.prefix(9)), [odd[9]], Array(many.shuffled().prefix(33_000)) + odd.prefix(9), ["not there", "\"quoted"]] {
                let listed = chosen.map(Value.string)
                let found = try context.fetchAll("Channel", where: .isIn("id", listed), keys: ["id"]).compactMap { $0["id"].stringValue }
                let expected = chosen.filter { stored.contains($0) }
                #expect(found.sorted() == expected.sorted(), "\(expected.count) listed")
                let others = try context.count("Channel", where: .not(.isIn("id", listed)))
                #expect(others == total - expected.count, "\(others) of \(total) others, \(expected.count) listed")
                // Counted as fetched: a NUL is part of the text there too.
                #expect(try context.count("Channel", where: .isIn("id", listed)) == expected.count)
            }
            #expect(try context.count("Channel", where: .compare("id", .equal, .string("nul"))) == 0)
            #expect(try context.count("Channel", where: .compare("id", .equal, .string(odd[9]))) == 1)
        }
    }

    /// Lists of integers (row ids, foreign keys, dates) are bound as one JSON array: any length,
    /// past SQLite's limit of parameters too, selects exactly the listed objects, with `NOT` and
    /// with a null in the list (which is bound value by value instead).
    @Test func integerListsOfAnyLengthSelectExactlyTheirObjects() throws {
        let store = try Guide.store()
        let channels = try store.write { (context: ObjectContext) throws in
            let channels = try (0..<3).map { try context.insert("Channel", ["id": .string("c\($0)")]) }
            for start in 0..<40_000 {
                try context.insert("Programme", ["start": .date(Int64(start))], related: ["channel": channels[start % 3]])
            }
            return channels
        }.result
        try store.read { (context: ObjectContext) throws in
            let all = try context.fetchAll("Programme", orderBy: [SortKey("start")], keys: ["start"])
            for length in [1, 2, 3, 17, 999, 33_000] {
                let chosen = Array(all.shuffled().prefix(length))
                let byRowID = try context.fetchAll("Programme", where: .rowIDs(chosen.map(\.id.rowID)), keys: [])
                #expect(Set(byRowID.map(\.id)) == Set(chosen.map(\.id)) && byRowID.count == length)
                let starts = chosen.map(\.values[0])
                #expect(try context.count("Programme", where: .isIn("start", starts)) == length)
                #expect(try context.count("Programme", where: .not(.isIn("start", starts))) == all.count - length)
                if length < 1000 { #expect(try context.count("Programme", where: .isIn("start", starts + [.null])) == length) }
            }
            #expect(try context.count("Programme", where: .isIn("channel", [.integer(channels[0].rowID), .integer(channels[2].rowID)])) == 26_667)
        }
    }

    @Test func canonicallyEquivalentIdentifiersAreDistinctObjectsInByteOrder() throws {
        let store = try Guide.store()
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        #expect(nfc == nfd)   // Swift says equal; the store must not.
        try store.write { (context: ObjectContext) throws in
            try context.insert("Channel", ["id": .string(nfc), "name": .string("composed")])
            try context.insert("Channel", ["id": .string(nfd), "name": .string("decomposed")])
        }
        try store.read { (context: ObjectContext) throws in
            #expect(try context.count("Channel") == 2)
            let sorted = try context.fetchAll("Channel", orderBy: [SortKey("id")])
            // "e" (0x65) sorts before "é" (0xC3 0xA9).
            #expect(sorted.map { $0["name"] } == [.string("decomposed"), .string("composed")])
            let one = try context.fetchAll("Channel", where: .compare("id", .equal, .string(nfc)))
            #expect(one.map { $0["name"] } == [.string("composed")])
            #expect(Array(one[0]["id"].stringValue!.utf8) == Array(nfc.utf8))
        }
        #expect(Value.string(nfc) != Value.string(nfd))
        #expect(Set([Value.string(nfc), Value.string(nfd)]).count == 2)
    }

    @Test func valueCompareAgreesWithSQLiteOrderBy() throws {
        let tricky = ["", "a", "A", "b", "B", "Z", "z", "aa", "a\u{1}", "a\u{1F}", "\t", "\u{7F}", " ", "0", "10", "9",
                      "caf\u{E9}", "cafe\u{301}", "\u{1F600}", "\u{1F1EB}\u{1F1F7}", "\u{FFFF}", "\u{FF21}", "\u{10000}",
                      "ß", "SS", "ẞ", "ǅ", "\u{2126}", "\u{3A9}", "i\u{307}", "İ", "日本", "\u{200B}x", "x\u{200D}"]
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            for (i, s) in tricky.enumerated() { try context.insert("Channel", ["id": .string("\(i)"), "name": .string(s)]) }
        }
        let fromSQL = try store.read { try $0.fetchAll("Channel", orderBy: [SortKey("name")]).map { $0["name"] } }
        let fromSwift = tricky.map(Value.string).sorted { Value.compare($0, $1) < 0 }
        #expect(fromSQL.count == tricky.count)
        #expect(fromSQL.map { Array($0.stringValue!.utf8) } == fromSwift.map { Array($0.stringValue!.utf8) })
        for (a, b) in zip(fromSQL, fromSQL.dropFirst()) { #expect(Value.compare(a, b) < 0) }
        // Mixed kinds: NULL < numbers < text < blobs, as in SQLite.
        let mixed: [Value] = [.data([0]), .string(""), .double(1.5), .integer(1), .null, .date(2), .bool(true)]
        let order = mixed.sorted { Value.compare($0, $1) < 0 }
        #expect(order.first == .null && order.last == .data([0]) && order[order.count - 2] == .string(""))
        #expect(Value.compare(.integer(1), .double(1.5)) < 0 && Value.compare(.double(1.5), .date(2)) < 0)
    }
}

@Suite struct DeleteRuleTests {
    @Test func cascadeDeletesOwnedObjectsRecursively() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let arte = try context.insert("Channel", ["id": .string("arte")])
            let news = try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            try context.insert("Credit", ["person": .string("Anchor")], related: ["programme": news])
            let opera = try context.insert("Programme", ["title": .string("Opera")], related: ["channel": arte])
            try context.insert("Credit", ["person": .string("Tenor")], related: ["programme": opera])
            try context.delete(bbc)
            #expect(try context.count("Channel") == 1)
            #expect(try context.fetchAll("Programme").map { $0["title"] } == [.string("Opera")])
            #expect(try context.fetchAll("Credit").map { $0["person"] } == [.string("Tenor")])
        }
    }

    @Test func nullifyClearsTheReferencesToTheDeletedObject() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let drama = try context.insert("Genre", ["name": .string("Drama")])
            let p1 = try context.insert("Programme", ["title": .string("A")], related: ["genre": drama])
            let p2 = try context.insert("Programme", ["title": .string("B")], related: ["genre": drama])
            try context.delete(drama)
            #expect(try context.count("Genre") == 0)
            #expect(try context.object(p1)?.related("genre") == nil)
            #expect(try context.object(p2)?.related("genre") == nil)
            #expect(try context.count("Programme") == 2)
            // A to-one nullify: deleting a programme leaves its genre alone.
            let comedy = try context.insert("Genre", ["name": .string("Comedy")])
            try context.setRelated(p1, "genre", to: comedy)
            try context.delete(p1)
            #expect(try context.count("Genre") == 1)
        }
    }

    @Test func denyRefusesAndChangesNothing() throws {
        let store = try Guide.store()
        let lineup = try store.write { (context: ObjectContext) throws in
            let lineup = try context.insert("Lineup", ["name": .string("Freeview")])
            let bbc = try context.insert("Channel", ["id": .string("bbc1")], related: ["lineup": lineup])
            try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            return lineup
        }.result
        let error = #expect(throws: ObjectGraphError.self) { try store.write { try $0.delete(lineup) } }
        #expect(error == .deleteDenied(entity: "Lineup", relationship: "channels", count: 1))
        try store.read { (context: ObjectContext) throws in
            #expect(try context.count("Lineup") == 1)
            #expect(try context.count("Channel") == 1)
            #expect(try context.count("Programme") == 1)
            #expect(try context.first("Channel")?.related("lineup") == lineup)
        }
    }

    @Test func aDenyDeepInACascadeRefusesBeforeDeletingAnything() throws {
        let store = try Guide.store()
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            try context.insert("Programme", ["title": .string("Free")], related: ["channel": bbc])
            let news = try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            let anchor = try context.insert("Credit", ["person": .string("Anchor")], related: ["programme": news])
            try context.insert("Award", ["name": .string("BAFTA")], related: ["credit": anchor])
            // The caller catches the refusal and carries on in the same transaction.
            #expect(throws: ObjectGraphError.deleteDenied(entity: "Credit", relationship: "awards", count: 1)) {
                try context.delete(bbc)
            }
            #expect(try context.count("Channel") == 1)
            #expect(try context.count("Programme") == 2)
            #expect(try context.count("Credit") == 1)
        }
    }
}

@Suite struct ToManyTests {
    @Test func addAndRemoveReportExactlyTheMembersThatChanged() throws {
        let store = try Guide.store()
        let recorder = RecordingObserver()
        store.addObserver(recorder)
        let (genre, programmes) = try store.write { (context: ObjectContext) throws in
            let genre = try context.insert("Genre", ["name": .string("Drama")])
            let programmes = try (0..<4).map { try context.insert("Programme", ["title": .string("P\($0)")]) }
            return (genre, programmes)
        }.result
        recorder.reset()
        try store.write { (context: ObjectContext) throws in
            try context.add([programmes[0], programmes[1], programmes[2]], to: "programmes", of: genre)
            try context.add([programmes[0]], to: "programmes", of: genre)   // already a member: no change
        }
        var changes = recorder.relationshipChanges
        #expect(changes.count == 1)
        #expect(changes.first?.owner == genre && changes.first?.relationship == "programmes")
        #expect(changes.first?.added == [programmes[0], programmes[1], programmes[2]])
        #expect(changes.first?.removed == [])

        recorder.reset()
        try store.write { (context: ObjectContext) throws in
            try context.remove([programmes[1], programmes[3]], from: "programmes", of: genre)   // 3 is no member
            #expect(try context.members(of: genre, "programmes") == [programmes[0], programmes[2]])
        }
        changes = recorder.relationshipChanges
        #expect(changes.count == 1)
        #expect(changes.first?.added == [] && changes.first?.removed == [programmes[1]])
        #expect(recorder.updated.map(\.id) == [programmes[1]])
        #expect(try store.read { try $0.count("Programme") } == 4)   // nullify: removed, not deleted
    }

    @Test func movingAMemberRemovesItFromTheOldOwnerAndAddsItToTheNew() throws {
        let store = try Guide.store()
        let recorder = RecordingObserver()
        store.addObserver(recorder)
        let (bbc, arte, news) = try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let arte = try context.insert("Channel", ["id": .string("arte")])
            let news = try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            return (bbc, arte, news)
        }.result
        recorder.reset()
        try store.write { try $0.add([news], to: "programmes", of: arte) }
        let changes = recorder.relationshipChanges
        #expect(changes.count == 2)
        let old = changes.first { $0.owner == bbc }, new = changes.first { $0.owner == arte }
        #expect(old?.removed == [news] && old?.added == [])
        #expect(new?.added == [news] && new?.removed == [])
        #expect(recorder.updated.first?.oldValues == ["channel": .integer(bbc.rowID)])
        #expect(recorder.updated.first?.newValues == ["channel": .integer(arte.rowID)])
    }

    @Test func removingFromAnOwningRelationshipDeletesTheMember() throws {
        let store = try Guide.store()
        let recorder = RecordingObserver()
        store.addObserver(recorder)
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let news = try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            let late = try context.insert("Programme", ["title": .string("Late")], related: ["channel": bbc])
            try context.processPendingChanges()
            recorder.reset()
            try context.remove([news], from: "programmes", of: bbc)
            #expect(try context.object(news) == nil)
            #expect(try context.members(of: bbc, "programmes") == [late])
            try context.processPendingChanges()
            #expect(recorder.deleted.map(\.id) == [news])
            #expect(recorder.relationshipChanges.map(\.removed) == [[news]])
        }
    }
}

@Suite struct NotificationTests {
    @Test func insertUpdateAndDeleteAreReportedWithExactlyTheirValues() throws {
        let store = try Guide.store()
        let recorder = RecordingObserver()
        store.addObserver(recorder)
        let (bbc, news) = try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1"), "name": .string("BBC")])
            let news = try context.insert("Programme", ["title": .string("News"), "start": .date(100)], related: ["channel": bbc])
            return (bbc, news)
        }.result
        #expect(recorder.saves == 1)
        let insert = try #require(recorder.inserted.first { $0.id == news })
        #expect(insert.kind == .insert)
        #expect(Set(insert.changedKeys) == ["title", "start", "channel", "genre"])
        #expect(insert.newValues == ["title": .string("News"), "start": .date(100), "channel": .integer(bbc.rowID), "genre": .null])
        #expect(insert.foreignKeys == ["channel": bbc.rowID])

        recorder.reset()
        try store.write { (context: ObjectContext) throws in
            let changed = try context.update(news, ["title": .string("Newsnight"), "start": .date(100)])
            #expect(changed == ["title"])
            #expect(try context.update(news, ["title": .string("Newsnight")]) == [])
        }
        #expect(recorder.updated.count == 1)
        let update = try #require(recorder.updated.first)
        #expect(update.changedKeys == ["title"])
        #expect(update.oldValues == ["title": .string("News")])
        #expect(update.newValues == ["title": .string("Newsnight")])
        #expect(update.foreignKeys == ["channel": bbc.rowID])
        #expect(recorder.relationshipChanges.isEmpty)

        recorder.reset()
        try store.write { try $0.update(news, ["title": .string("Newsnight")]) }
        #expect(recorder.batches.allSatisfy { $0.isEmpty })

        recorder.reset()
        let summary = try store.write { try $0.delete(news) }.summary
        #expect(summary["Programme"].deleted == 1)
        let delete = try #require(recorder.deleted.first)
        #expect(delete.id == news && delete.kind == .delete)
        #expect(delete.oldValues == ["title": .string("Newsnight"), "start": .date(100), "channel": .integer(bbc.rowID), "genre": .null])
        #expect(recorder.relationshipChanges.map(\.owner) == [bbc])
        #expect(recorder.relationshipChanges.first?.removed == [news])
    }

    @Test func aDryRunLeavesTheDatabaseAndTheDirtyOwnersUnchanged() throws {
        let store = try Guide.store()
        let dirty = DirtyOwnersObserver(parentEntity: "Channel", relationship: "programmes")
        store.addObserver(dirty)
        let bbc = try store.write { try $0.insert("Channel", ["id": .string("bbc1")]) }.result
        dirty.reset()
        let (inserted, summary) = try store.write(dryRun: true) { context in
            try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            try context.update(bbc, ["name": .string("BBC One")])
            return try context.count("Programme")
        }
        #expect(inserted == 1 && summary["Programme"].inserted == 1)
        #expect(dirty.dirtyOwners.isEmpty)
        try store.read { (context: ObjectContext) throws in
            #expect(try context.count("Programme") == 0)
            #expect(try context.object(bbc)?["name"] == .null)
        }
        // A later saved transaction reports only its own owners.
        try store.write { try $0.update(bbc, ["name": .string("BBC")]) }
        #expect(dirty.dirtyOwners == [bbc.rowID])
    }

    @Test func aThrowingBodyRollsBack() throws {
        struct Boom: Error {}
        let store = try Guide.store()
        let recorder = RecordingObserver()
        let dirty = DirtyOwnersObserver(parentEntity: "Channel", relationship: "programmes")
        store.addObserver(recorder)
        store.addObserver(dirty)
        #expect(throws: Boom.self) {
            try store.write { (context: ObjectContext) throws in
                let bbc = try context.insert("Channel", ["id": .string("bbc1")])
                try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
                try context.processPendingChanges()
                throw Boom()
            }
        }
        #expect(recorder.rollbacks == 1 && recorder.saves == 0)
        #expect(dirty.dirtyOwners.isEmpty)
        #expect(try store.read { try $0.count("Channel") + $0.count("Programme") } == 0)
    }
}

/// An observer that reads only programmes and the channels' programme lists.
final class ProgrammeOnlyObserver: ContextObserver, @unchecked Sendable {
    var batches: [ChangeBatch] = []
    func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: ["Programme"], relationships: ["Channel.programmes"])
    }
    func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws { batches.append(changes) }
}

@Suite struct ObservedChangesTests {
    /// A bulk import of credits nobody watches costs no bookkeeping, but an observer that reads
    /// everything still gets every change: the context records what any observer wants.
    @Test func aContextRecordsOnlyWhatItsObserversRead() throws {
        let store = try Guide.store()
        let narrow = ProgrammeOnlyObserver()
        store.addObserver(narrow)
        try store.write { (context: ObjectContext) throws in
            let bbc = try context.insert("Channel", ["id": .string("bbc1")])
            let news = try context.insert("Programme", ["title": .string("News")], related: ["channel": bbc])
            try context.insert("Credit", ["person": .string("Anchor")], related: ["programme": news])
            try context.update(bbc, ["name": .string("BBC One")])
        }
        let batches = narrow.batches
        #expect(batches.flatMap(\.inserted).map(\.id.entity) == ["Programme"])
        #expect(batches.flatMap(\.updated).isEmpty)
        #expect(batches.flatMap(\.relationshipChanges).map { "\($0.owner.entity).\($0.relationship)" } == ["Channel.programmes"])

        let everything = RecordingObserver()
        store.addObserver(everything)
        try store.write { (context: ObjectContext) throws in
            let news = try #require(try context.first("Programme", keys: []))
            try context.insert("Credit", ["person": .string("Weather")], related: ["programme": news.id])
        }
        #expect(everything.inserted.map(\.id.entity) == ["Credit"])
        #expect(everything.relationshipChanges.map { "\($0.owner.entity).\($0.relationship)" } == ["Programme.credits"])
        // Observers share one batch: the narrow one may see more than it asked for, never less.
        #expect(narrow.batches.last?.inserted.map(\.id.entity) == ["Credit"])
    }
}

@Suite struct ObjectIDTests {
    /// An id hashes its row alone (Sources/ObjectGraph/Context/Changes.swift): ids of two tables
    /// that share a row id land in one bucket and must still be two keys.
    @Test func idsOfTwoTablesWithOneRowIDAreTwoKeys() {
        let channel = ObjectID(entity: "Channel", rowID: 7), programme = ObjectID(entity: "Programme", rowID: 7)
        #expect(channel.hashValue == programme.hashValue)
        #expect(channel != programme)
        var names = [channel: "channel"]
        names[programme] = "programme"
        #expect(names.count == 2)
        #expect(names[channel] == "channel" && names[programme] == "programme")
        #expect(Set([channel, programme, ObjectID(entity: "Channel", rowID: 7)]).count == 2)
    }
}
