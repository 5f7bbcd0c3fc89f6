/// Identifies a stored object: its entity and its row.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The entity's name (the concrete entity, not its root).
    public let entity: String
    /// The object's row in its entity's table.
    public let rowID: Int64
    /// An object id from its entity name and row.
    public init(entity: String, rowID: Int64) {
        self.entity = entity
        self.rowID = rowID
    }
    public var description: String { "\(entity)#\(rowID)" }

    /// Hashes the row id alone: the entity's name, a string, costs more to hash than the rest of
    /// a lookup, and observers look objects up by id for every change. Ids of different tables
    /// that share a row id meet in one bucket, where `==` tells them apart.
    public func hash(into hasher: inout Hasher) { hasher.combine(rowID) }

    /// Whether the object is of the entity named `name`. Lengths first: observers pick their
    /// entity's changes out of batches of tens of thousands of others', and a name of another
    /// length is told apart without comparing strings (entity names are identifiers: no two
    /// spellings of one name differ in length).
    @inlinable public func isOf(_ name: String) -> Bool {
        entity.utf8.count == name.utf8.count && entity == name
    }
}

/// What happened to an object.
public enum ChangeKind: String, Sendable, Codable {
    /// The object was created.
    case insert
    /// Some of its values or relationships changed.
    case update
    /// The object was deleted.
    case delete
}

/// An object's to-one foreign keys by relationship name: the row id each refers to.
///
/// ```swift
/// if let channel = change.foreignKeys["channel"] { touched.insert(channel) }
/// ```
///
/// An object has one or two, and a merge records one change per object it writes: the first is
/// kept inline (no table to allocate and hash per change), the rest in a list.
public struct ForeignKeys: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var first: (name: String, rowID: Int64)?
    private var rest: [(name: String, rowID: Int64)] = []

    init() {}

    /// `["channel": 12]`.
    public init(dictionaryLiteral elements: (String, Int64)...) {
        for (name, rowID) in elements { append(name, rowID) }
    }

    /// Every foreign key, by name.
    public var dictionary: [String: Int64] {
        var all = Dictionary(uniqueKeysWithValues: rest.map { ($0.name, $0.rowID) })
        if let first { all[first.name] = first.rowID }
        return all
    }

    /// The same keys referring to the same rows, in any order.
    public static func == (a: ForeignKeys, b: ForeignKeys) -> Bool { a.dictionary == b.dictionary }

    /// The row id `name` refers to, or nil when it refers to none.
    public subscript(name: String) -> Int64? {
        if let first, first.name == name { return first.rowID }
        return rest.first { $0.name == name }?.rowID
    }

    /// Adds a foreign key (each name once).
    mutating func append(_ name: String, _ rowID: Int64) {
        if first == nil { first = (name, rowID) } else { rest.append((name, rowID)) }
    }
}

/// One object's change, as observers receive it.
///
/// Values are kept as the arrays the context already has (a row in `changedKeys` order), so that
/// recording a bulk insert costs no dictionary; the dictionaries are built only when asked for.
public struct ObjectChange: Sendable {
    /// Inserted, updated or deleted.
    public let kind: ChangeKind
    /// The object that changed.
    public let id: ObjectID
    /// Insert: every key set; update: the keys that changed; delete: every key.
    public let changedKeys: [String]
    let old: [Value]
    let new: [Value]
    /// The object's to-one foreign keys (after the change; before it, for a delete), so that an
    /// observer can find the parent of an updated child without a query.
    public let foreignKeys: ForeignKeys

    init(kind: ChangeKind, id: ObjectID, changedKeys: [String], old: [Value], new: [Value], foreignKeys: ForeignKeys) {
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

    /// The value of `key` before the change, if the change recorded it.
    public func oldValue(_ key: String) -> Value? { changedKeys.firstIndex(of: key).flatMap { $0 < old.count ? old[$0] : nil } }
    /// The value of `key` after the change, if the change recorded it.
    public func newValue(_ key: String) -> Value? { changedKeys.firstIndex(of: key).flatMap { $0 < new.count ? new[$0] : nil } }

    private static func dictionary(_ keys: [String], _ values: [Value]) -> [String: Value] {
        var d: [String: Value] = [:]
        for (k, v) in zip(keys, values) { d[k] = v }
        return d
    }
}

/// Members added to and removed from one to-many relationship of one object (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed).
public struct RelationshipChange: Sendable {
    /// The object whose relationship changed.
    public let owner: ObjectID
    /// The to-many relationship's name.
    public let relationship: String
    /// Members added.
    public var added: [ObjectID]
    /// Members removed.
    public var removed: [ObjectID]
}

/// The changes processed together: what an observer receives (docs/design.md#observers-the-parent-watching-its-children).
public struct ChangeBatch: Sendable {
    /// Objects inserted, in the order they were.
    public internal(set) var inserted: [ObjectChange] = []
    /// Objects updated, with the keys that changed.
    public internal(set) var updated: [ObjectChange] = []
    /// Objects deleted, with their last values.
    public internal(set) var deleted: [ObjectChange] = []
    /// Members added to and removed from to-many relationships.
    public internal(set) var relationshipChanges: [RelationshipChange] = []

    /// True when the batch holds no change.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && relationshipChanges.isEmpty
    }
    /// All object changes, inserts then updates then deletes.
    public var all: [ObjectChange] { inserted + updated + deleted }
}

/// Counts per entity of one save.
public struct EntityCounts: Sendable, Hashable, Codable {
    /// Objects inserted.
    public var inserted = 0
    /// Objects updated.
    public var updated = 0
    /// Objects deleted.
    public var deleted = 0
    /// No change yet.
    public init() {}
}

/// What a transaction changed, in numbers.
public struct ChangeSummary: Sendable {
    /// Counts per entity name.
    public var counts: [String: EntityCounts] = [:]
    /// No change yet.
    public init() {}
    /// The counts of one entity (zero when it did not change).
    public subscript(entity: String) -> EntityCounts { counts[entity] ?? EntityCounts() }
    /// True when the batch holds no change.
    public var isEmpty: Bool { counts.values.allSatisfy { $0.inserted == 0 && $0.updated == 0 && $0.deleted == 0 } }
}

/// Receives a context's changes (docs/design.md#observers-the-parent-watching-its-children): as they are processed, inside the transaction, where
/// it may make further changes (to keep aggregates current), and after a successful save.
public protocol ContextObserver: AnyObject, Sendable {
    /// Which changes this observer reads. A context records a change only when some observer
    /// wants it: a bulk import of children nobody watches (a programme's credits) then costs no
    /// bookkeeping at all (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed: fetch, and keep, no more than needed).
    func observedChanges(in model: ObjectModel) -> ObservedChanges
    /// Called inside the transaction with each batch of processed changes (those
    /// `observedChanges(in:)` asked for); it may change further objects, which come back in a
    /// later batch, and throws to roll the transaction back.
    ///
    /// ```swift
    /// func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
    ///     inserted += changes.inserted.filter { $0.id.entity == "Programme" }.count
    /// }
    /// ```
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

    /// The entities and to-many relationships to report; nil for all of them.
    public init(entities: Set<String>?, relationships: Set<String>?) {
        self.entities = entities
        self.relationships = relationships
    }

    /// Every change of every entity and relationship.
    public static let everything = ObservedChanges(entities: nil, relationships: nil)

    func wants(entity: String) -> Bool { entities?.contains(entity) ?? true }
    func wants(relationship: String, of owner: String) -> Bool { relationships?.contains("\(owner).\(relationship)") ?? true }
}

extension ContextObserver {
    /// By default an observer sees everything.
    public func observedChanges(in model: ObjectModel) -> ObservedChanges { .everything }
    /// By default nothing happens after a commit.
    public func contextDidSave(_ summary: ChangeSummary) {}
    /// By default nothing happens after a rollback.
    public func contextDidRollBack() {}
}
