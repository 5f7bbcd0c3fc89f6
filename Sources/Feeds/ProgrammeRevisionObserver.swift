import Foundation
import ObjectGraph

/// Stamps programmes for the feeds (module `feeds`): `changedAt` when their exported content
/// changes (inserts are stamped by the import itself through `ImportOptions.programmeInsertValues`,
/// without a second write), and `sequence` + 1 when their time or title changes (RFC 5545's
/// SEQUENCE rule). Register it on every store that imports: `store.addObserver(ProgrammeRevisionObserver())`.
public final class ProgrammeRevisionObserver: ContextObserver, @unchecked Sendable {
    /// Changes to these bump SEQUENCE.
    public static let sequenceKeys: Set<String> = ["start", "stop", "title"]
    /// Changes to these restamp DTSTAMP/LAST-MODIFIED: everything the exporter writes of a programme.
    public static let exportedKeys: Set<String> = ["start", "stop", "title", "subTitle", "desc", "season", "episode", "url", "categories"]
    let clock: @Sendable () -> Int64
    /// What stamping reads of a programme: the stamps and its channel.
    static let stampKeys = ["changedAt", "sequence", "channel"]

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
            guard !keys.isDisjoint(with: Self.exportedKeys) else { continue }
            var values: [String: Value] = ["changedAt": .date(now)]
            // One read serves both the new SEQUENCE and the update (which needs the foreign key).
            guard let current = try context.object(change.id, keys: Self.stampKeys) else { continue }
            if !keys.isDisjoint(with: Self.sequenceKeys) {
                values["sequence"] = .integer((current["sequence"].integerValue ?? 0) + 1)
            }
            try context.update(change.id, values, current: current)
            stamped.insert(change.id.rowID)
        }
        // A changed category list changes the feed too (the programme row itself may be unchanged).
        // Programmes inserted in this batch were stamped by their insert: no need to read them back.
        var owners = Set<Int64>()
        for list in [changes.updated, changes.deleted] {
            for change in list where change.id.entity == "Category" {
                if let p = change.foreignKeys["programme"] { owners.insert(p) }
            }
        }
        for change in changes.relationshipChanges where change.owner.entity == "Programme" && change.relationship == "categories" {
            owners.insert(change.owner.rowID)
        }
        for change in changes.inserted where change.id.entity == "Programme" { stamped.insert(change.id.rowID) }
        for rowID in owners.subtracting(stamped).sorted() {
            let id = ObjectID(entity: "Programme", rowID: rowID)
            guard let current = try context.object(id, keys: ["changedAt"]) else { continue }  // deleted with its categories
            if current["changedAt"] != .date(now) { try context.update(id, ["changedAt": .date(now)]) }
        }
    }
}
