import Foundation
import ObjectGraph
import Primitives

/// How the generated pages name and arrange objects, read from the model's metadata alone
/// (`UserInfoKey.display`, `UserInfoKey.details`): no entity is named here.
///
///     // Channel: display "customName|displayName|xmltvId"
///     ModelDisplay(model).text(of: channel, entity: channelEntity)   // "RTÉ2"
struct ModelDisplay: Sendable {
    let model: ObjectModel

    /// The entity's `userInfo[key]`, else its parent's (a subentity names itself like its parent).
    func info(_ key: String, of entity: Entity) -> String? {
        var current: Entity? = entity
        var steps = 0
        while let e = current, steps < 64 {
            if let value = e.userInfo[key] { return value }
            current = e.parent.flatMap(model.entity)
            steps += 1
        }
        return nil
    }

    /// The display parts: each a list of alternatives (attributes of the entity). Without a
    /// `display` key, the identifier's attributes.
    func parts(of entity: Entity) -> [[String]] {
        let declared = info(UserInfoKey.display, of: entity)?.split(separator: ",").map {
            $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { entity.attribute($0) != nil }
        }.filter { !$0.isEmpty }
        if let declared, !declared.isEmpty { return declared }
        return entity.identifier.filter { entity.attribute($0) != nil }.map { [$0] }
    }

    /// The attributes a display reads (to fetch no more than that).
    func keys(of entity: Entity) -> [String] {
        var keys: [String] = []
        for part in parts(of: entity) { for key in part where !keys.contains(key) { keys.append(key) } }
        return keys
    }

    /// How people name `object`: its display parts joined by " · " (dates in the server's
    /// zone), shortened; `#ROWID` when every part is empty.
    func text(of object: FetchedObject, entity: Entity) -> String {
        var shown: [String] = []
        for part in parts(of: entity) {
            for key in part {
                let value = object[key]
                if value.isNull { continue }
                if case .date(let seconds) = value {
                    shown.append(LocalTime.dayName(seconds) + " " + LocalTime.hourMinute(seconds))
                    break
                }
                let text = value.description
                if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { continue }
                shown.append(text)
                break
            }
        }
        return shown.isEmpty ? "#\(object.id.rowID)" : HTMLText.shortened(shown.joined(separator: " · "), to: 200)
    }

    /// Bookkeeping: the entity's `details` attributes and those kept out of diffs (derived:
    /// hashes, counters, sequence numbers).
    func isDetail(_ attribute: Attribute, of entity: Entity) -> Bool {
        if attribute.isExcludedFromDiff { return true }
        guard let listed = info(UserInfoKey.details, of: entity) else { return false }
        return listed.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == attribute.name }
    }

    /// The display text of the to-one targets of `objects` through `relationship`, by row id,
    /// in one fetch.
    func targets(of objects: [FetchedObject], through relationship: Relationship, context: ObjectContext) throws -> [Int64: String] {
        guard let destination = model.entity(relationship.destination) else { return [:] }
        let ids = Array(Set(objects.compactMap { $0.related(relationship.name)?.rowID }))
        guard !ids.isEmpty else { return [:] }
        var texts: [Int64: String] = [:]
        for target in try context.fetchAll(destination.name, where: .rowIDs(ids), keys: keys(of: destination)) {
            texts[target.id.rowID] = text(of: target, entity: model.entity(target.id.entity) ?? destination)
        }
        return texts
    }
}
