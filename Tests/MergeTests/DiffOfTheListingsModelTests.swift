import Foundation
import Listings
@testable import ObjectGraph
import Primitives
import Testing
import TestSupport

/// The generic diff, apply and undo on the real tvimport model (Channel → Programme → Credit,
/// Category; user modules).
private func s(_ text: String) -> Value { .string(text) }
private func d(_ text: String) -> DiffValue { DiffValue(.string(text)) }

private func roundTrip(_ document: ChangeDocument) throws -> ChangeDocument {
    try ChangeDocument(jsonData: try document.jsonData())
}

// MARK: - The real model

@Suite struct DiffOfTheListingsModel {
        static let model: ObjectModel = try! TVModel.model()
        static let t0 = UTCTime.seconds(year: 2026, month: 11, day: 22, hour: 20)

        struct Programme {
            var channel: String, start: Int64, title: String, credits: [(String, String)] = [], categories: [String] = []
            var contentHash: Int64 = 0
        }

        static func fill(_ store: Store, channels: [(String, String)], programmes: [Programme], programmeCount: Int64 = 0) throws {
            try store.write { (c: ObjectContext) throws in
                var ids: [String: ObjectID] = [:]
                for (xmltvId, name) in channels {
                    ids[xmltvId] = try c.insert("Channel", ["xmltvId": s(xmltvId), "displayName": s(name), "programmeCount": .integer(programmeCount)])
                }
                for p in programmes {
                    let id = try c.insert("Programme", ["start": .date(p.start), "stop": .date(p.start + 1800), "title": s(p.title),
                                                        "contentHash": .integer(p.contentHash)],
                                          related: ["channel": ids[p.channel]!])
                    for (i, (role, name)) in p.credits.enumerated() {
                        try c.insert("Credit", ["role": s(role), "name": s(name), "position": .integer(Int64(i))], related: ["programme": id])
                    }
                    for (i, name) in p.categories.enumerated() {
                        try c.insert("Category", ["name": s(name), "position": .integer(Int64(i))], related: ["programme": id])
                    }
                }
            }
        }

        static let before: ([(String, String)], [Programme]) = (
            [("arte.fr", "Arte"), ("bbc1.uk", "BBC One"), ("old.tv", "Old TV")],
            [Programme(channel: "bbc1.uk", start: t0, title: "News", credits: [("presenter", "Huw")], categories: ["News"]),
             Programme(channel: "bbc1.uk", start: t0 + 1800, title: "Film", credits: [("actor", "A"), ("director", "D")],
                       categories: ["Film", "Drama"]),
             Programme(channel: "arte.fr", start: t0, title: "Opéra"),
             Programme(channel: "old.tv", start: t0, title: "Gone", credits: [("actor", "X")])])
        static let after: ([(String, String)], [Programme]) = (
            [("arte.fr", "ARTE"), ("bbc1.uk", "BBC One"), ("new.tv", "New TV")],
            [Programme(channel: "bbc1.uk", start: t0, title: "News at Eight", credits: [("presenter", "Huw")], categories: ["News"],
                       contentHash: 99),
             Programme(channel: "bbc1.uk", start: t0 + 1800, title: "Film", credits: [("actor", "A"), ("actor", "B"), ("director", "D")],
                       categories: ["Film"]),
             Programme(channel: "arte.fr", start: t0, title: "Opéra"),
             Programme(channel: "new.tv", start: t0 + 3600, title: "Launch", categories: ["Special"])])

        @Test func tvGuideDiffApplyAndUndo() throws {
            let a = try Store.inMemory(model: Self.model), b = try Store.inMemory(model: Self.model)
            try Self.fill(a, channels: Self.before.0, programmes: Self.before.1)
            try Self.fill(b, channels: Self.after.0, programmes: Self.after.1, programmeCount: 7)   // excluded aggregate
            let diff = try GraphDiff(model: Self.model)
            #expect(diff.rootEntityNames == ["Channel", "SourceChannel"])
            let doc = try roundTrip(try diff.diff(from: a, to: b))

            #expect(doc.changes.map { "\($0.change.rawValue) \($0.canonicalID)" } == [
                "update arte.fr", "update bbc1.uk", "insert new.tv", "delete old.tv",
            ])
            #expect(doc.changes[0].attributes == ["displayName": AttributeChange(old: s("Arte"), new: s("ARTE"))])
            let bbc = doc.changes[1].relationships["programmes"]!.members
            // A programme's identifier renders its channel through the channel's own identifier.
            #expect(bbc.map(\.id) == [[d("bbc1.uk"), DiffValue(.date(Self.t0)), DiffValue(.integer(0))],
                                      [d("bbc1.uk"), DiffValue(.date(Self.t0 + 1800)), DiffValue(.integer(0))]])
            #expect(bbc[0].attributes == ["title": AttributeChange(old: s("News"), new: s("News at Eight"))])   // contentHash excluded
            let film = bbc[1].relationships
            #expect(film["credits"]?.members.map { "\($0.change.rawValue) \($0.canonicalID)" }
                    == ["insert bbc1.uk,2026-11-22T20:30:00Z,0,actor,B", "update bbc1.uk,2026-11-22T20:30:00Z,0,director,D"])
            #expect(film["categories"]?.members.map { "\($0.change.rawValue) \($0.canonicalID)" }
                    == ["delete bbc1.uk,2026-11-22T20:30:00Z,0,Drama,"])
            #expect(doc.counts["Channel"] == { var c = EntityCounts(); c.inserted = 1; c.updated = 1; c.deleted = 1; return c }())
            #expect(doc.counts["Credit"].inserted == 1 && doc.counts["Credit"].updated == 1 && doc.counts["Credit"].deleted == 1)
            #expect(doc.changes[2].objectCount == 3)   // channel, programme, category
            #expect(doc.changes[3].objectCount == 3)   // channel, programme, credit

            // Apply to a copy of a: nothing left to diff; undo: back to a.
            let c = try Store.inMemory(model: Self.model)
            try Self.fill(c, channels: Self.before.0, programmes: Self.before.1)
            let report = try doc.apply(to: c)
            #expect(report.conflicts.isEmpty)
            #expect(report.applied == doc.changedObjectCount)
            #expect(try diff.diff(from: c, to: b).isEmpty)
            #expect(try c.read { try $0.count("Programme") } == 4)
            #expect(try doc.inverted().apply(to: c).conflicts.isEmpty)
            #expect(try diff.diff(from: c, to: a).isEmpty)
            #expect(try diff.diff(from: a, to: c).isEmpty)
        }

        @Test func tvGuideOnDiskStores() throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tvimport-diff-\(UInt64.random(in: 0...UInt64.max))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let a = try Store(path: dir.appendingPathComponent("a.sqlite").path, model: Self.model)
            let b = try Store(path: dir.appendingPathComponent("b.sqlite").path, model: Self.model)
            try Self.fill(a, channels: Self.before.0, programmes: Self.before.1)
            try Self.fill(b, channels: Self.after.0, programmes: Self.after.1)
            let diff = try GraphDiff(model: Self.model)
            let file = dir.appendingPathComponent("changes.json")
            try diff.diff(from: a, to: b).jsonData().write(to: file)
            let doc = try ChangeDocument(contentsOfFile: file.path)
            try doc.write(toFile: file.path)
            #expect(try ChangeDocument(contentsOfFile: file.path) == doc)
            #expect(try doc.apply(to: a).conflicts.isEmpty)
            #expect(try diff.diff(from: a, to: b).isEmpty)
        }
            /// What the nightly job does: snapshot before the run, diff after it into a change file;
        /// `undo` applies the file inverted. Observers (the aggregate) run during apply as during
        /// an import, and the excluded keys they maintain never conflict.
        @Test func nightlyChangeFileAndUndoWithObservers() throws {
            let store = try Store.inMemory(model: Self.model)
            store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes",
                                                  countKey: "programmeCount", lastChangedKey: "programmesChangedAt",
                                                  clock: { 42 }))
            try Self.fill(store, channels: Self.before.0, programmes: Self.before.1)
            let before = try store.snapshot()
            let diff = try GraphDiff(model: Self.model)
            #expect(try diff.diff(from: before, to: store).isEmpty)

            // "The run": the after-state, written through the same store.
            let target = try Store.inMemory(model: Self.model)
            try Self.fill(target, channels: Self.after.0, programmes: Self.after.1)
            let run = try diff.diff(from: store, to: target)
            #expect(try run.apply(to: store).conflicts.isEmpty)

            let changeFile = try diff.diff(from: before, to: store).jsonData()
            let doc = try ChangeDocument(jsonData: changeFile)
            #expect(doc == run)
            let counts = try store.read { c in try c.fetchAll("Channel", orderBy: [SortKey("xmltvId")]).map { $0["programmeCount"] } }
            #expect(counts == [.integer(1), .integer(2), .integer(1)])

            // undo
            let undo = try doc.inverted().apply(to: store)
            #expect(undo.conflicts.isEmpty && undo.applied == doc.changedObjectCount)
            #expect(try diff.diff(from: before, to: store).isEmpty)
            let restored = try store.read { c in try c.fetchAll("Channel", orderBy: [SortKey("xmltvId")]).map { $0["programmeCount"] } }
            #expect(restored == [.integer(1), .integer(2), .integer(1)])
            // A second undo finds nothing as expected and changes nothing.
            #expect(try doc.inverted().apply(to: store).applied == 0)
            #expect(try diff.diff(from: before, to: store).isEmpty)
        }

        /// Undo after a user edit: a programme the run inserted got a note since; undoing the
        /// run must not delete the note with it. That channel is a conflict, the rest is undone.
        @Test func undoKeepsWhatAUserChangedSince() throws {
            let store = try Store.inMemory(model: Self.model)
            try Self.fill(store, channels: Self.before.0, programmes: Self.before.1)
            let before = try store.snapshot()
            let target = try Store.inMemory(model: Self.model)
            try Self.fill(target, channels: Self.after.0, programmes: Self.after.1)
            let diff = try GraphDiff(model: Self.model)
            #expect(try diff.diff(from: store, to: target).apply(to: store).conflicts.isEmpty)
            let changeFile = try diff.diff(from: before, to: store)
            try store.write { (c: ObjectContext) throws in
                let launch = try #require(try c.first("Programme", where: .compare("title", .equal, s("Launch"))))
                try c.update(launch.id, ["note": s("record this")])
            }
            let undo = try changeFile.inverted().apply(to: store)
            #expect(undo.conflicts.map(\.description) == [
                "delete Channel[new.tv]: Programme[new.tv,2026-11-22T21:00:00Z,0]: note is 'record this', the diff expected 'null'",
            ])
            let left = try diff.diff(from: before, to: store)
            #expect(left.changes.map { "\($0.change.rawValue) \($0.canonicalID)" } == ["insert new.tv"])
            #expect(try store.read { try $0.first("Programme", where: .compare("title", .equal, s("Launch")))?["note"] } == s("record this"))
        }

        /// A user module: reminders are roots identified through the programme they refer to
        /// (nullify). Deleting a channel nullifies its programmes' reminders, which must not stop
        /// the reminders' own deletes from finding them.
        @Test(arguments: [false, true]) func userModuleRootsIdentifiedThroughAReference(userModuleFirst: Bool) throws {
            let reminders = ModelModule("reminders", entities: [
                EntityDescription("Reminder", identifier: ["programme"], attributes: [
                    AttributeDescription("minutesBefore", .integer),
                ], relationships: [
                    .toOne("programme", "Programme", inverse: "reminders", deleteRule: .nullify),
                ]),
                .placeholder("Programme", relationships: [
                    .toMany("reminders", "Reminder", inverse: "programme", deleteRule: .nullify),
                ]),
            ])
            // Merged first, the user module's Reminder becomes the first root: its inserts refer to
            // programmes that are inserted after it.
            let model = userModuleFirst ? try ObjectModel(merging: [reminders] + TVModel.builtInModules)
                                        : try TVModel.model(userModules: [reminders])
            func remind(_ store: Store, _ titles: [String: Int]) throws {
                try store.write { (c: ObjectContext) throws in
                    for (title, minutes) in titles {
                        let p = try #require(try c.first("Programme", where: .compare("title", .equal, s(title))))
                        try c.insert("Reminder", ["minutesBefore": .integer(Int64(minutes))], related: ["programme": p.id])
                    }
                }
            }
            let a = try Store.inMemory(model: model), b = try Store.inMemory(model: model), c = try Store.inMemory(model: model)
            for (store, guide, titles) in [(a, Self.before, ["Gone": 5, "Film": 10]), (b, Self.after, ["Launch": 15, "Film": 20]),
                                           (c, Self.before, ["Gone": 5, "Film": 10])] {
                try Self.fill(store, channels: guide.0, programmes: guide.1)
                try remind(store, titles)
            }
            let diff = try GraphDiff(model: model)
            #expect(diff.rootEntityNames == (userModuleFirst ? ["Reminder", "Channel", "SourceChannel"] : ["Channel", "SourceChannel", "Reminder"]))
            let doc = try roundTrip(try diff.diff(from: a, to: b))
            #expect(doc.changes.filter { $0.entityName == "Reminder" }.map { "\($0.change.rawValue) \($0.canonicalID)" } == [
                "update bbc1.uk,2026-11-22T20:30:00Z,0", "insert new.tv,2026-11-22T21:00:00Z,0", "delete old.tv,2026-11-22T20:00:00Z,0",
            ])
            let report = try doc.apply(to: c)
            #expect(report.conflicts.isEmpty, "\(report.conflicts)")
            #expect(try diff.diff(from: c, to: b).isEmpty)
            let back = try doc.inverted().apply(to: c)
            #expect(back.conflicts.isEmpty, "\(back.conflicts)")
            #expect(try diff.diff(from: c, to: a).isEmpty)
        }

        /// A guide of some size, randomly edited: diff, apply, undo; and the time it takes.
        @Test func randomGuideRoundTrip() throws {
            var rng = SplitMix64(state: 2026)
            func guide(_ edit: Bool) -> ([(String, String)], [Programme]) {
                var r = SplitMix64(state: 99)   // the same base guide on both sides; edits draw from rng
                var channels: [(String, String)] = []
                var programmes: [Programme] = []
                for c in 0..<20 {
                    let dropChannel = edit && rng.next() % 10 == 0
                    if !dropChannel { channels.append(("ch\(c).tv", edit && rng.next() % 5 == 0 ? "Renamed \(c)" : "Channel \(c)")) }
                    for p in 0..<60 {
                        var credits: [(String, String)] = []
                        for k in 0..<Int(r.next() % 4) { credits.append((["actor", "director", "presenter"][k % 3], "Person \(k)")) }
                        let categories = r.next() % 2 == 0 ? ["News"] : ["Film", "Drama"]
                        if dropChannel || (edit && rng.next() % 20 == 0) { continue }   // programme dropped
                        let start = Self.t0 + Int64(p * 1800) + (edit && rng.next() % 25 == 0 ? 900 : 0)
                        if edit && rng.next() % 10 == 0 { credits.append(("guest", "Extra")) }
                        if edit && !credits.isEmpty && rng.next() % 10 == 0 { credits.removeLast() }
                        let title = edit && rng.next() % 8 == 0 ? "Edited \(p)" : "Title \(p)"
                        programmes.append(Programme(channel: "ch\(c).tv", start: start, title: title, credits: credits,
                                                    categories: categories))
                    }
                }
                if edit { channels.append(("new.tv", "New")); programmes.append(Programme(channel: "new.tv", start: Self.t0, title: "Hello")) }
                return (channels, programmes)
            }
            let base = guide(false), edited = guide(true)
            let a = try Store.inMemory(model: Self.model), b = try Store.inMemory(model: Self.model)
            try Self.fill(a, channels: base.0, programmes: base.1)
            try Self.fill(b, channels: edited.0, programmes: edited.1)
            let diff = try GraphDiff(model: Self.model)
            let clock = ContinuousClock()
            var doc = ChangeDocument(model: "", changes: [])
            let took = try clock.measure { doc = try diff.diff(from: a, to: b) }
            var sameIsEmpty = false
            let same = try clock.measure { sameIsEmpty = try diff.diff(from: a, to: a.snapshot()).isEmpty }
            #expect(sameIsEmpty)
            doc = try roundTrip(doc)
            #expect(doc.changedObjectCount > 50)
            let c = try a.snapshot()
            let report = try doc.apply(to: c)
            #expect(report.conflicts.isEmpty && report.applied == doc.changedObjectCount)
            #expect(try diff.diff(from: c, to: b).isEmpty)
            #expect(try doc.inverted().apply(to: c).conflicts.isEmpty)
            #expect(try diff.diff(from: c, to: a).isEmpty)
            print("random guide: \(base.1.count) programmes, \(doc.changedObjectCount) changes, diff in \(took), identical stores in \(same)")
        }
}
