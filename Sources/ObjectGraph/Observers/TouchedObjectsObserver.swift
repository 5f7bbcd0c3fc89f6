import Foundation

/// Collects the row ids of the objects of some entities that saved transactions inserted,
/// updated or deleted: a diff of the store before and after those transactions then walks only
/// these objects (see `GraphDiff.diff(from:to:comparing:touched:each:)`), not every object of
/// every changed parent. Rolled-back (dry-run) transactions leave it untouched.
///
/// Row ids are never reused (tables are `AUTOINCREMENT`), so one set names an object on both
/// sides of such a diff.
public final class TouchedObjectsObserver: ContextObserver, @unchecked Sendable {
    /// The entities whose objects are recorded.
    public let entities: Set<String>
    private let lock = NSLock()
    private var pending: [String: Set<Int64>] = [:]
    private var saved: [String: Set<Int64>] = [:]

    /// Records the objects of `entities` that change.
    public init(entities: Set<String>) { self.entities = entities }

    /// Row ids per entity name, touched by saved transactions.
    public var touched: [String: Set<Int64>] {
        lock.withLock { entities.reduce(into: [:]) { $0[$1] = saved[$1] ?? [] } }
    }

    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: entities, relationships: [])
    }

    /// Records the objects of the watched entities that the batch changed.
    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        lock.withLock {
            for list in [changes.inserted, changes.updated, changes.deleted] {
                for change in list where entities.contains(change.id.entity) {
                    pending[change.id.entity, default: []].insert(change.id.rowID)
                }
            }
        }
    }

    public func contextDidRollBack() {
        lock.withLock { pending.removeAll() }
    }

    public func contextDidSave(_ summary: ChangeSummary) {
        lock.withLock {
            for (entity, rows) in pending { saved[entity, default: []].formUnion(rows) }
            pending.removeAll()
        }
    }
}
