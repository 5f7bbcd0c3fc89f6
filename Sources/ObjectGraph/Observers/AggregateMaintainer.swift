import Foundation

/// Keeps denormalised aggregates of a parent current from its children's changes (the parent
/// watching its children, docs/design.md#observers-the-parent-watching-its-children): the number of members of a to-many
/// relationship, and when a member last changed.
///
/// It works from the context's change batches, not from SQLite hooks, and writes inside the same
/// transaction, so the aggregate always equals what a query computes.
public final class AggregateMaintainer: ContextObserver, @unchecked Sendable {
    /// The entity that holds the aggregate.
    public let parentEntity: String
    /// The parent's to-many relationship whose members are counted.
    public let relationship: String
    /// The parent's integer attribute that holds the member count.
    public let countKey: String
    /// The parent's date attribute set when a member changes, if any.
    public let lastChangedKey: String?
    private let clock: @Sendable () -> Int64

    /// Keeps `countKey` (and `lastChangedKey`) of each `parentEntity` current.
    ///
    /// ```swift
    /// store.addObserver(AggregateMaintainer(parentEntity: "Artist", relationship: "songs",
    ///                                       countKey: "songCount", lastChangedKey: nil))
    /// ```
    ///
    /// - Parameters:
    ///   - parentEntity: the entity that holds the aggregate.
    ///   - relationship: the parent's to-many relationship whose members are counted.
    ///   - countKey: an integer attribute of the parent that holds the member count.
    ///   - lastChangedKey: a date attribute of the parent set to `clock()` whenever a member is
    ///     inserted, changed or deleted.
    ///   - clock: "now" in seconds since 1970 (tests set it).
    public init(parentEntity: String, relationship: String, countKey: String, lastChangedKey: String?,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.parentEntity = parentEntity
        self.relationship = relationship
        self.countKey = countKey
        self.lastChangedKey = lastChangedKey
        self.clock = clock
    }

    /// Member changes of the relationship, and updates of its members.
    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        membersOf(parentEntity, relationship, in: model)
    }

    /// Recomputes the aggregate of every parent whose members changed in the batch.
    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        guard let parent = context.model.entity(parentEntity), let r = parent.relationship(relationship),
              let inverse = r.inverse else { return }
        var delta: [Int64: Int] = [:]
        var touched = Set<Int64>()
        for change in changes.relationshipChanges where change.relationship == relationship
            && parent.descendants.contains(change.owner.entity) {
            delta[change.owner.rowID, default: 0] += change.added.count - change.removed.count
            touched.insert(change.owner.rowID)
        }
        for change in changes.updated where context.model.entity(change.id.entity)?.rootName == context.model.entity(r.destination)?.rootName {
            if let owner = change.foreignKeys[inverse] { touched.insert(owner) }
        }
        guard !touched.isEmpty else { return }
        let now = clock()
        for rowID in touched.sorted() {
            let id = ObjectID(entity: parentEntity, rowID: rowID)
            guard let current = try context.object(id, keys: [countKey]) else { continue }   // deleted parent
            var values: [String: Value] = [:]
            if let d = delta[rowID], d != 0 {
                values[countKey] = .integer((current[countKey].integerValue ?? 0) + Int64(d))
            }
            if let lastChangedKey { values[lastChangedKey] = .date(now) }
            if !values.isEmpty { try context.update(id, values) }
        }
    }
}

/// Collects the parents whose members changed in saved transactions: the exporter rewrites only
/// their feeds. Rolled-back (dry-run) transactions leave it untouched.
public final class DirtyOwnersObserver: ContextObserver, @unchecked Sendable {
    /// The entity that holds the aggregate.
    public let parentEntity: String
    /// The parent's to-many relationship whose members are counted.
    public let relationship: String
    private let lock = NSLock()
    private var pendingOwners = Set<Int64>()
    private var saved = Set<Int64>()

    /// Watches the members of `relationship` of `parentEntity`.
    public init(parentEntity: String, relationship: String) {
        self.parentEntity = parentEntity
        self.relationship = relationship
    }

    /// Row ids of the parents changed by saved transactions since the last `reset()`.
    public var dirtyOwners: Set<Int64> { lock.withLock { saved } }
    /// Forgets the owners recorded so far.
    public func reset() { lock.withLock { saved.removeAll() } }

    /// Member changes of the relationship, changes of its members and of the parents themselves.
    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        var observed = membersOf(parentEntity, relationship, in: model)
        observed.entities?.formUnion(model.entity(parentEntity)?.descendants ?? [])
        return observed
    }

    /// Records the parents whose members (or themselves) changed in the batch.
    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        guard let parent = context.model.entity(parentEntity), let r = parent.relationship(relationship),
              let inverse = r.inverse, let destination = context.model.entity(r.destination) else { return }
        var owners = Set<Int64>()
        for change in changes.relationshipChanges where change.relationship == relationship { owners.insert(change.owner.rowID) }
        for change in changes.all where context.model.entity(change.id.entity)?.rootName == destination.rootName {
            if let owner = change.foreignKeys[inverse] { owners.insert(owner) }
        }
        for change in changes.all where parent.descendants.contains(change.id.entity) { owners.insert(change.id.rowID) }
        lock.withLock { pendingOwners.formUnion(owners) }
    }

    public func contextDidRollBack() {
        lock.withLock { pendingOwners.removeAll() }
    }

    public func contextDidSave(_ summary: ChangeSummary) {
        lock.withLock {
            saved.formUnion(pendingOwners)
            pendingOwners.removeAll()
        }
    }
}

/// The relationship `parentEntity.relationship` and every entity its members can be (the
/// destination's whole hierarchy, since members are matched by root entity).
private func membersOf(_ parentEntity: String, _ relationship: String, in model: ObjectModel) -> ObservedChanges {
    guard let r = model.entity(parentEntity)?.relationship(relationship), let destination = model.entity(r.destination),
          let root = model.entity(destination.rootName) else { return .everything }
    return ObservedChanges(entities: Set(root.descendants), relationships: [parentEntity + "." + relationship])
}
