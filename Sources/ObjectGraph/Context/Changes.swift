/// Identifies a stored object: its entity and its row.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    public let entity: String
    public let rowID: Int64
    public init(entity: String, rowID: Int64) {
        self.entity = entity
        self.rowID = rowID
    }
    public var description: String { "\(entity)#\(rowID)" }
}

public enum ChangeKind: String, Sendable, Codable {
    case insert, update, delete
}

/// One object's change, as observers receive it.
///
/// Values are kept as the arrays the context already has (a row in `changedKeys` order), so that
/// recording a bulk insert costs no dictionary; the dictionaries are built only when asked for.
public struct ObjectChange: Sendable {
    public let kind: ChangeKind
    public let id: ObjectID
    /// Insert: every key set; update: the keys that changed; delete: every key.
    public let changedKeys: [String]
    private let old: [Value]
    private let new: [Value]
    /// The object's to-one foreign keys (after the change; before it, for a delete), so that an
    /// observer can find the parent of an updated child without a query.
    public let foreignKeys: [String: Int64]

    init(kind: ChangeKind, id: ObjectID, changedKeys: [String], old: [Value], new: [Value], foreignKeys: [String: Int64]) {
        self.kind = kind
        self.id = id
        self.changedKeys = changedKeys
        self.old = old
        self.new = new
        self.foreignKeys = foreignKeys
    }

    /// Update: old values of the changed keys; delete: every old value. To-one relationships
    /// appear as the related row id (`.integer`) or `.null`.
    public var oldValues: [String: Value] { Self.dictionary(changedKeys, old) }
    /// Insert: every value; update: new values of the changed keys.
    public var newValues: [String: Value] { Self.dictionary(changedKeys, new) }

    public func oldValue(_ key: String) -> Value? { changedKeys.firstIndex(of: key).flatMap { $0 < old.count ? old[$0] : nil } }
    public func newValue(_ key: String) -> Value? { changedKeys.firstIndex(of: key).flatMap { $0 < new.count ? new[$0] : nil } }

    private static func dictionary(_ keys: [String], _ values: [Value]) -> [String: Value] {
        var d: [String: Value] = [:]
        for (k, v) in zip(keys, values) { d[k] = v }
        return d
    }
}

/// Members added to and removed from one to-many relationship of one object (seed 002).
public struct RelationshipChange: Sendable {
    public let owner: ObjectID
    public let relationship: String
    public var added: [ObjectID]
    public var removed: [ObjectID]
}

/// The changes processed together: what an observer receives (seed 003).
public struct ChangeBatch: Sendable {
    public internal(set) var inserted: [ObjectChange] = []
    public internal(set) var updated: [ObjectChange] = []
    public internal(set) var deleted: [ObjectChange] = []
    public internal(set) var relationshipChanges: [RelationshipChange] = []

    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && relationshipChanges.isEmpty
    }
    /// All object changes, inserts then updates then deletes.
    public var all: [ObjectChange] { inserted + updated + deleted }
}

/// Counts per entity of one save.
public struct EntityCounts: Sendable, Hashable, Codable {
    public var inserted = 0
    public var updated = 0
    public var deleted = 0
    public init() {}
}

/// What a transaction changed, in numbers.
public struct ChangeSummary: Sendable {
    public var counts: [String: EntityCounts] = [:]
    public init() {}
    public subscript(entity: String) -> EntityCounts { counts[entity] ?? EntityCounts() }
    public var isEmpty: Bool { counts.values.allSatisfy { $0.inserted == 0 && $0.updated == 0 && $0.deleted == 0 } }
}

/// Receives a context's changes (seed 003): as they are processed, inside the transaction, where
/// it may make further changes (to keep aggregates current), and after a successful save.
public protocol ContextObserver: AnyObject, Sendable {
    /// Which changes this observer reads. A context records a change only when some observer
    /// wants it: a bulk import of children nobody watches (a programme's credits) then costs no
    /// bookkeeping at all (seed 002: fetch, and keep, no more than needed).
    func observedChanges(in model: ObjectModel) -> ObservedChanges
    func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws
    func contextDidSave(_ summary: ChangeSummary)
    /// The transaction was rolled back (a dry run, or an error): forget what it changed.
    func contextDidRollBack()
}

/// The part of a change batch an observer reads: object changes of some entities, member changes
/// of some to-many relationships. `nil` means all of them.
public struct ObservedChanges: Sendable {
    /// Entity names (a sub-entity's changes are recorded under its own name).
    public var entities: Set<String>?
    /// To-many relationships as "Owner.relationship", for example "Channel.programmes".
    public var relationships: Set<String>?

    public init(entities: Set<String>?, relationships: Set<String>?) {
        self.entities = entities
        self.relationships = relationships
    }

    public static let everything = ObservedChanges(entities: nil, relationships: nil)

    func wants(entity: String) -> Bool { entities?.contains(entity) ?? true }
    func wants(relationship: String, of owner: String) -> Bool { relationships?.contains("\(owner).\(relationship)") ?? true }
}

extension ContextObserver {
    public func observedChanges(in model: ObjectModel) -> ObservedChanges { .everything }
    public func contextDidSave(_ summary: ChangeSummary) {}
    public func contextDidRollBack() {}
}
