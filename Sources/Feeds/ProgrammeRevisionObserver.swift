import Foundation
import ObjectGraph

/// The feeds' revision rule for a programme (module `feeds`): `changedAt` moves when its exported
/// content changes, and `sequence` goes up by one when its time or title changes (RFC 5545's
/// SEQUENCE rule).
///
/// ```swift
/// let stamp = ProgrammeRevision.values(changed: ["title"], current: programme, now: now)
/// // ["changedAt": .date(now), "sequence": .integer(programme["sequence"] + 1)]
/// ```
///
/// The import writes these with its own update of each programme (`stamp(now:)`, which
/// `Sources/Job/ImportPipeline.swift` hands to the merge): one write per changed programme. Every
/// other writer (an edit, `apply`, `undo`) is stamped by `ProgrammeRevisionObserver`.
public enum ProgrammeRevision {
    /// Changes to these bump SEQUENCE.
    public static let sequenceKeys: Set<String> = ["start", "stop", "title"]
    /// Changes to these restamp DTSTAMP/LAST-MODIFIED: everything the exporter writes of a programme.
    public static let exportedKeys: Set<String> = ["start", "stop", "title", "subTitle", "desc", "season", "episode", "url", "categories"]
    /// What stamping reads and writes of a programme.
    public static let keys = ["changedAt", "sequence"]

    /// The stamps of a programme whose `changed` attributes (and to-many relationships) change:
    /// none when nothing exported changes.
    public static func values(changed: Set<String>, current: FetchedObject, now: Int64) -> [String: Value] {
        guard !changed.isDisjoint(with: exportedKeys) else { return [:] }
        var values: [String: Value] = ["changedAt": .date(now)]
        if !changed.isDisjoint(with: sequenceKeys) {
            values["sequence"] = .integer((current["sequence"].integerValue ?? 0) + 1)
        }
        return values
    }

    /// The rule as the merge's stamp for programmes, dated `now`.
    public static func stamp(now: Int64) -> UpdateStamp {
        UpdateStamp(keys: keys) { changed, current in values(changed: changed, current: current, now: now) }
    }
}

/// Stamps programmes changed by writers that do not stamp them themselves (`ProgrammeRevision`):
/// an update that already sets `changedAt` or `sequence` is left alone, and so are inserts, which the import
/// stamps through `ImportOptions.programmeInsertValues`. Register it on every store that imports:
/// `store.addObserver(ProgrammeRevisionObserver())`.
public final class ProgrammeRevisionObserver: ContextObserver, @unchecked Sendable {
    let clock: @Sendable () -> Int64
    /// What stamping reads of a programme: the stamps and its channel.
    static let stampKeys = ProgrammeRevision.keys + ["channel"]

    public init(clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) { self.clock = clock }

    /// Programme changes, and the categories of programmes (the rest of a programme's members,
    /// its credits, are not exported).
    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: ["Programme", "Category"], relationships: ["Programme.categories"])
    }

    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        let now = clock()
        var stamped = Set<Int64>()
        for change in changes.updated where change.id.entity == "Programme" {
            let keys = Set(change.changedKeys)
            // Stamped by its writer, in the same write. (A stamp can leave `changedAt` as it was,
            // when the last one was in the same second, but a moved SEQUENCE always shows.)
            if !keys.isDisjoint(with: ProgrammeRevision.keys) {
                stamped.insert(change.id.rowID)
                continue
            }
            guard !keys.isDisjoint(with: ProgrammeRevision.exportedKeys) else { continue }
            // One read serves both the new SEQUENCE and the update (which needs the foreign key).
            guard let current = try context.object(change.id, keys: Self.stampKeys) else { continue }
            try context.update(change.id, ProgrammeRevision.values(changed: keys, current: current, now: now), current: current)
            stamped.insert(change.id.rowID)
        }
        // A changed category list changes the feed too (the programme row itself may be unchanged).
        // Programmes inserted in this batch were stamped by their insert: no need to read them back.
        // (Sorted lists, walked together: a first import inserts every programme with its
        // categories, and two sets of them cost more in hashing than the rest of this.)
        // Changes read where they are (by index): a copy of each would retain its values.
        var owners: [Int64] = []
        for list in [changes.updated, changes.deleted] {
            for i in list.indices where list[i].id.entity == "Category" {
                if let p = list[i].foreignKeys["programme"] { owners.append(p) }
            }
        }
        let lists = changes.relationshipChanges
        for i in lists.indices where lists[i].owner.entity == "Programme" && lists[i].relationship == "categories" {
            owners.append(lists[i].owner.rowID)
        }
        guard !owners.isEmpty else { return }
        owners.sort()
        var inserted: [Int64] = []
        let insertedChanges = changes.inserted
        for i in insertedChanges.indices where insertedChanges[i].id.entity == "Programme" { inserted.append(insertedChanges[i].id.rowID) }
        inserted.sort()
        var next = 0   // in `inserted`
        var previous: Int64?
        for rowID in owners {
            guard rowID != previous else { continue }
            previous = rowID
            while next < inserted.count && inserted[next] < rowID { next += 1 }
            if next < inserted.count && inserted[next] == rowID { continue }
            if stamped.contains(rowID) { continue }
            let id = ObjectID(entity: "Programme", rowID: rowID)
            guard let current = try context.object(id, keys: ["changedAt"]) else { continue }  // deleted with its categories
            if current["changedAt"] != .date(now) { try context.update(id, ["changedAt": .date(now)]) }
        }
    }
}
