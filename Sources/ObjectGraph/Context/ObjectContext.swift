import Foundation
import GRDB
import GRDBSQLite
import Primitives

/// A stored object as fetched: its id and the values of the keys asked for.
public struct FetchedObject: Sendable {
    /// The object's id.
    public let id: ObjectID
    /// Which keys `values` holds, in which order.
    public let layout: FetchLayout
    /// The fetched values, in `layout.keys` order.
    public let values: [Value]

    /// The value of an attribute, or of a to-one relationship as `.integer(rowID)`; `.null` if the
    /// key was not fetched.
    public subscript(key: String) -> Value {
        guard let i = layout.index[key] else { return .null }
        return values[i]
    }

    /// The related object of a to-one relationship that was fetched.
    public func related(_ key: String) -> ObjectID? {
        guard let rowID = self[key].integerValue, let r = layout.entity.relationship(key) else { return nil }
        return ObjectID(entity: r.destination, rowID: rowID)
    }
}

/// The shape of fetched rows: which keys, in which order. Shared by every row of one fetch.
public final class FetchLayout: Sendable {
    /// The entity fetched.
    public let entity: Entity
    /// The keys fetched, in the order of each row's values.
    public let keys: [String]
    let index: [String: Int]
    let types: [AttributeType?]

    init(entity: Entity, keys: [String]) {
        self.entity = entity
        self.keys = keys
        var index: [String: Int] = [:]
        for (i, k) in keys.enumerated() { index[k] = i }
        self.index = index
        types = keys.map { entity.attribute($0)?.type }
    }
}

/// A forward-only stream of fetched objects, straight from a SQLite cursor: memory does not grow
/// with the number of rows. Rows are read with SQLite's own column functions: a merge reads every
/// stored object of a guide, and GRDB's `Row` costs several times SQLite's work per row.
public final class ObjectCursor {
    private let statement: Statement   // keeps the prepared statement alive
    private let handle: OpaquePointer
    private let connection: OpaquePointer?
    private let layout: FetchLayout
    private let entityColumn: Bool
    private var done = false

    init(statement: Statement, arguments: [Value], layout: FetchLayout, entityColumn: Bool, db: Database) {
        self.statement = statement
        handle = statement.sqliteStatement
        connection = db.sqliteConnection
        self.layout = layout
        self.entityColumn = entityColumn
        RawStatement.rebind(handle, to: arguments)
    }

    deinit {
        if !done { sqlite3_reset(handle) }
    }

    /// The next object, or nil after the last one.
    public func next() throws -> FetchedObject? {
        try step() ? current() : nil
    }

    /// Moves to the next row; false at the end. Until the next step, the row can be read value
    /// by value (`value(at:)`) or whole (`current()`): a merge reads most rows' identifier and
    /// hash only, and builds no object for them.
    public func step() throws -> Bool {
        if done { return false }
        let code = sqlite3_step(handle)
        guard code == SQLITE_ROW else {
            done = true
            sqlite3_reset(handle)
            if code == SQLITE_DONE { return false }
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: connection.map { String(cString: sqlite3_errmsg($0)) }, sql: statement.sql)
        }
        return true
    }

    /// The row id of the current row.
    public var rowID: Int64 { sqlite3_column_int64(handle, 0) }

    /// The value of the `index`th key of the current row.
    public func value(at index: Int) -> Value {
        Value(column: Int32(index) + (entityColumn ? 2 : 1), of: handle, type: layout.types[index])
    }

    /// The UTF-8 bytes of the `index`th key of the current row when it holds text, else nil; valid
    /// until the cursor moves. For writers that copy text straight into their output: a `Value`
    /// would allocate a string for each.
    public func text(at index: Int) -> UnsafeBufferPointer<UInt8>? {
        // One call into the statement, then the value's own accessors: each `sqlite3_column_*`
        // call checks the statement and its connection again, and a writer reads millions.
        let value = sqlite3_column_value(handle, Int32(index) + (entityColumn ? 2 : 1))
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        // Text first, then its length (SQLite's order: the length is of the form asked for).
        let start = sqlite3_value_text(value)
        return UnsafeBufferPointer(start: start, count: Int(sqlite3_value_bytes(value)))
    }

    /// The `index`th key of the current row as an integer: `value(at:).integerValue`, without
    /// building a `Value` for the integers that integers, dates and flags are stored as (a
    /// flag's as stored: non-zero is true).
    public func integer(at index: Int) -> Int64? {
        let value = sqlite3_column_value(handle, Int32(index) + (entityColumn ? 2 : 1))
        guard sqlite3_value_type(value) == SQLITE_INTEGER else { return self.value(at: index).integerValue }
        return sqlite3_value_int64(value)
    }

    /// The current row as an object.
    public func current() -> FetchedObject {
        let rowID = sqlite3_column_int64(handle, 0)
        let entityName = entityColumn ? String(cString: sqlite3_column_text(handle, 1)) : layout.entity.name
        var values: [Value] = []
        values.reserveCapacity(layout.keys.count)
        for i in layout.keys.indices { values.append(value(at: i)) }
        return FetchedObject(id: ObjectID(entity: entityName, rowID: rowID), layout: layout, values: values)
    }

    /// Calls `body` with each remaining object.
    public func forEach(_ body: (FetchedObject) throws -> Void) throws {
        while let object = try next() { try body(object) }
    }
}

/// Where objects are fetched, created, changed and deleted, inside one transaction of a `Store`.
///
/// Changes are written through to SQLite at once (so a guide of any size never has to fit in
/// memory) and recorded in a change set that observers receive each time
/// `processPendingChanges()` runs (docs/design.md#observers-the-parent-watching-its-children) and, in counts, after the save.
public final class ObjectContext {
    /// The model of the context's store.
    public let model: ObjectModel
    /// The model fingerprints whose change documents apply here (`Store.acceptedFingerprints`).
    public let acceptedFingerprints: Set<String>
    let db: Database
    private(set) var observers: [any ContextObserver]
    let recordChanges: Bool
    private var counted = ChangeSummary()
    // `@exclusivity(unchecked)`: the bookkeeping of each insert, changed in place a few times
    // per row; the checks the runtime made at each access cost as much as the rest of it. These
    // are private, changed only by this context's own methods, none while another has them.
    @exclusivity(unchecked) private var pending = ChangeBatch()
    @exclusivity(unchecked) private var pendingRelationshipIndex: [RelationshipKey: Int] = [:]
    /// The entry of `pending.relationshipChanges` the last `noteInverse` wrote to.
    @exclusivity(unchecked) private var lastRelationshipChange: (key: RelationshipKey, index: Int)?
    private var isProcessing = false
    /// Numbers the batches of `pending`: an entry of its `relationshipChanges` remembered with
    /// the batch's number is valid while the number is the same.
    private var pendingBatch = 0
    /// The most inserts a batch had so far.
    private var insertsPerBatch = 0

    private struct RelationshipKey: Hashable {
        let owner: ObjectID
        let relationship: String
        /// The owner alone (see `ObjectID.hash(into:)`): an owner has few observed relationships.
        func hash(into hasher: inout Hasher) { owner.hash(into: &hasher) }
    }

    init(db: Database, store: Store, observers: [any ContextObserver], recordChanges: Bool) {
        self.db = db
        self.model = store.model
        acceptedFingerprints = store.acceptedFingerprints
        self.observers = observers
        self.recordChanges = recordChanges
        interests = observers.map { $0.observedChanges(in: store.model) }
    }

    private var interests: [ObservedChanges]
    private var entityObserved: [String: Bool] = [:]
    private var relationshipObserved: [String: Bool] = [:]

    /// Adds an observer of this transaction only: it sees the changes processed from now on
    /// (not those of other transactions, nor the save or rollback).
    ///
    /// ```swift
    /// let report = MergeChangeCollector(layouts: [layout])
    /// try context.addObserver(report)
    /// try merge.merge(layout, incoming: feed, scope: .all, parent: nil)
    /// try context.processPendingChanges()
    /// print(report.changes.count)
    /// ```
    public func addObserver(_ observer: any ContextObserver) throws {
        try processPendingChanges()
        // What is recorded was decided per entity for the observers so far: decide again.
        flushInsertCounts()
        insertPlans.removeAll()
        insertPlansByOrdinal.removeAll()
        updatePlans.removeAll()
        subtreeDeletePlans.removeAll()
        entityObserved.removeAll()
        relationshipObserved.removeAll()
        observers.append(observer)
        interests.append(observer.observedChanges(in: model))
    }

    /// Whether some observer reads object changes of `entity`.
    private func isObserved(_ entity: String) -> Bool {
        if let known = entityObserved[entity] { return known }
        let wanted = interests.contains { $0.wants(entity: entity) }
        entityObserved[entity] = wanted
        return wanted
    }

    /// Whether some observer reads member changes of `owner.relationship`, naming the owner by
    /// its entity, an ancestor or a sub-entity (the relationship is inherited both ways).
    private func isObserved(_ relationship: String, of owner: String) -> Bool {
        let key = owner + "." + relationship
        if let known = relationshipObserved[key] { return known }
        var names = model.entity(owner)?.descendants ?? [owner]
        var entity = model.entity(owner)
        while let parent = entity?.parent { names.append(parent); entity = model.entity(parent) }
        let wanted = interests.contains { i in names.contains { i.wants(relationship: relationship, of: $0) } }
        relationshipObserved[key] = wanted
        return wanted
    }

    /// Deletes every object of every entity at once, and returns how many there were: for a
    /// transaction that takes the store back to empty (`undo` of a change made to an empty store,
    /// nothing written since). Observers hear nothing of it: nothing is left of what they keep
    /// (aggregates, stamps), and the objects' deletions one by one cost twice the import that made
    /// them.
    public func deleteEveryObject() throws -> Int {
        try processPendingChanges()
        // Checked at the commit, when no row refers to another any more (tables in any order).
        // Unchecked (`Store.write(checkingForeignKeys: false)`), SQLite clears each table at once.
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        var deleted = 0
        for root in model.roots {
            try db.execute(sql: "DELETE FROM \(quote(root.name))")
            deleted += db.changesCount
        }
        return deleted
    }

    /// Runs `body` on this context's connection, inside its transaction: bookkeeping tables kept
    /// beside the model (a register of change files) then commit or roll back with the objects.
    public func withDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try body(db)
    }

    // MARK: Fetching

    /// Streams objects of `entityName` (and its sub-entities) matching `predicate`, sorted in SQL,
    /// with only `keys` read (default: every attribute and foreign key): at most `limit` of them,
    /// after skipping `offset` (skipped by SQLite, no object made for them).
    public func fetch(_ entityName: String, where predicate: ObjectPredicate = .all, orderBy sort: [SortKey] = [],
                      keys: [String]? = nil, limit: Int? = nil, offset: Int = 0) throws -> ObjectCursor {
        try flushInserts()
        let head = try fetchHead(entityName, keys)
        // Sorting by row id (`_pk`) is allowed: it is how `members(of:_:)` lists a relationship.
        for key in sort where key.key != Schema.rowIDColumn && head.layout.entity.rowIndex(of: key.key) == nil {
            throw ObjectGraphError.unknownKey(entity: head.layout.entity.name, key: key.key, known: head.layout.entity.rowKeys)
        }
        var arguments: [Value] = []
        var sql: String
        if case let .union(terms) = predicate, terms.count > 1, !sort.isEmpty,
           sort.allSatisfy({ $0.key == Schema.rowIDColumn || head.layout.index[$0.key] != nil }) {
            // One query per term, merged on the sort keys (they name selected columns, as a
            // compound's ORDER BY must). The terms are as many as the next power of two, the
            // first repeated (UNION drops the repeats): one statement per power, not per count.
            var count = 1
            while count < terms.count { count *= 2 }
            sql = try (terms + repeatElement(terms[0], count: count - terms.count)).map {
                head.select + (try $0.sql(head.layout.entity, &arguments)) + head.entityFilter
            }.joined(separator: " UNION ")
        } else {
            sql = head.select + (try predicate.sql(head.layout.entity, &arguments)) + head.entityFilter
        }
        if !sort.isEmpty {
            sql += " ORDER BY " + sort.map { "\(quote($0.key))\($0.ascending ? "" : " DESC")" }.joined(separator: ", ")
        }
        if let limit { sql += " LIMIT \(limit)" }
        if offset > 0 {
            // Bound, not written in: one statement for every offset (a page of a list).
            sql += (limit == nil ? " LIMIT -1" : "") + " OFFSET ?"
            arguments.append(.integer(Int64(offset)))
        }
        return ObjectCursor(statement: try db.cachedStatement(sql: sql), arguments: arguments, layout: head.layout,
                            entityColumn: head.hasEntityColumn, db: db)
    }

    /// Streams the members of the to-many relationship `relationshipName` of every `ownerEntityName`
    /// object matching `predicate`: each member's `keys` and, last, its owner's row id; owners in
    /// `ownerOrder`, each owner's members together (in no given order among themselves). One
    /// join in the owners' index order, where fetching members per block of owners cost an IN
    /// list and a sort per block (the XMLTV export's credits and categories).
    public func fetchMembers(_ relationshipName: String, ofOwners ownerEntityName: String, where predicate: ObjectPredicate,
                             ownerOrder: [SortKey], keys: [String]) throws -> ObjectCursor {
        try flushInserts()
        let owner = try fetchHead(ownerEntityName, ownerOrder.map(\.key))
        guard let r = owner.layout.entity.relationship(relationshipName), r.isToMany, let inverse = r.inverse else {
            throw ObjectGraphError.unknownKey(entity: ownerEntityName, key: relationshipName,
                                              known: owner.layout.entity.relationships.filter(\.isToMany).map(\.name))
        }
        let member = try fetchHead(r.destination, keys + [inverse])
        let table = model.entity(member.layout.entity.rootName)!
        var arguments: [Value] = []
        // The owners' query as a subquery: its predicate names the owner's columns unqualified.
        var sql = "SELECT m.\(quote(Schema.rowIDColumn))"
        if member.hasEntityColumn { sql += ", m.\(quote(Schema.entityColumn))" }
        for key in member.layout.keys { sql += ", m.\(quote(key))" }
        sql += " FROM (" + owner.select + (try predicate.sql(owner.layout.entity, &arguments)) + owner.entityFilter + ") AS o"
        sql += " JOIN \(quote(table.name)) AS m ON m.\(quote(inverse)) = o.\(quote(Schema.rowIDColumn))"
        if !member.entityFilter.isEmpty { sql += " AND m." + member.entityFilter.dropFirst(" AND ".count) }
        if !ownerOrder.isEmpty {
            sql += " ORDER BY " + ownerOrder.map { "o.\(quote($0.key))\($0.ascending ? "" : " DESC")" }.joined(separator: ", ")
        }
        return ObjectCursor(statement: try db.cachedStatement(sql: sql), arguments: arguments, layout: member.layout,
                            entityColumn: member.hasEntityColumn, db: db)
    }

    /// What every fetch of these keys of an entity shares, made once per context: a resolution
    /// fetches thousands of times, and writing the column list cost more than the fetch.
    private struct FetchHead {
        let layout: FetchLayout
        /// `SELECT columns FROM table WHERE `, ready for the predicate.
        let select: String
        /// After the predicate: the entity's own rows, when its table stores other entities too.
        let entityFilter: String
        let hasEntityColumn: Bool
    }

    private var fetchHeads: [QueryShape: FetchHead] = [:]

    private func fetchHead(_ entityName: String, _ requestedKeys: [String]?) throws -> FetchHead {
        let cacheKey = QueryShape(entity: entityName, keys: requestedKeys)
        if let known = fetchHeads[cacheKey] { return known }
        let entity = try model.requireEntity(entityName)
        let keys = requestedKeys ?? entity.rowKeys
        for key in keys where entity.rowIndex(of: key) == nil {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.rowKeys)
        }
        let table = model.entity(entity.rootName)!
        let hasEntityColumn = table.descendants.count > 1
        var select = "SELECT \(quote(Schema.rowIDColumn))"
        if hasEntityColumn { select += ", \(quote(Schema.entityColumn))" }
        for key in keys { select += ", \(quote(key))" }
        select += " FROM \(quote(table.name)) WHERE "
        var entityFilter = ""
        if hasEntityColumn && entity.descendants.count < table.descendants.count {
            entityFilter = " AND \(quote(Schema.entityColumn)) IN (\(entity.descendants.map { Schema.literal(.string($0)) }.joined(separator: ",")))"
        }
        let head = FetchHead(layout: FetchLayout(entity: entity, keys: keys), select: select, entityFilter: entityFilter,
                             hasEntityColumn: hasEntityColumn)
        fetchHeads[cacheKey] = head
        return head
    }

    /// Every matching object, in memory: for small results.
    public func fetchAll(_ entityName: String, where predicate: ObjectPredicate = .all, orderBy sort: [SortKey] = [],
                         keys: [String]? = nil, limit: Int? = nil, offset: Int = 0) throws -> [FetchedObject] {
        let cursor = try fetch(entityName, where: predicate, orderBy: sort, keys: keys, limit: limit, offset: offset)
        var all: [FetchedObject] = []
        while let o = try cursor.next() { all.append(o) }
        return all
    }

    /// The first object of `entityName` matching `predicate`, or nil.
    public func first(_ entityName: String, where predicate: ObjectPredicate = .all, keys: [String]? = nil) throws -> FetchedObject? {
        try fetch(entityName, where: predicate, keys: keys, limit: 1).next()
    }

    /// One object by id, or nil if it no longer exists.
    public func object(_ id: ObjectID, keys: [String]? = nil) throws -> FetchedObject? {
        try flushInserts()
        let query = try objectQuery(id.entity, keys)
        return try ObjectCursor(statement: query.statement, arguments: [.integer(id.rowID)], layout: query.layout,
                                entityColumn: query.entityColumn, db: db).next()
    }

    /// The statement and row layout of `object(_:keys:)`, made once per entity and keys (the
    /// merge asks for the same shape for every changed object; even looking a statement up by
    /// its text hashes the whole text).
    private func objectQuery(_ entityName: String, _ keys: [String]?) throws -> ObjectQuery {
        let key = QueryShape(entity: entityName, keys: keys)
        if let known = objectQueries[key] { return known }
        // The fetches' head (columns, table), with the row id as the whole predicate.
        let head = try fetchHead(entityName, keys)
        let query = ObjectQuery(statement: try db.makeStatement(sql: head.select + "\(quote(Schema.rowIDColumn)) = ?"),
                                layout: head.layout, entityColumn: head.hasEntityColumn)
        objectQueries[key] = query
        return query
    }

    /// What a query reads (an entity, and its keys or nil for all): the cache key of both
    /// `fetchHeads` and `objectQueries`.
    private struct QueryShape: Hashable {
        let entity: String
        let keys: [String]?
    }

    private struct ObjectQuery {
        let statement: Statement
        let layout: FetchLayout
        let entityColumn: Bool
    }

    private var objectQueries: [QueryShape: ObjectQuery] = [:]

    /// How many objects of `entityName` match `predicate` (counted by SQLite).
    public func count(_ entityName: String, where predicate: ObjectPredicate = .all) throws -> Int {
        try flushInserts()
        let entity = try model.requireEntity(entityName)
        let table = model.entity(entity.rootName)!
        var arguments: [Value] = []
        var sql = "SELECT COUNT(*) FROM \(quote(table.name)) WHERE " + (try predicate.sql(entity, &arguments))
        if table.descendants.count > 1 && entity.descendants.count < table.descendants.count {
            sql += " AND \(quote(Schema.entityColumn)) IN (\(entity.descendants.map { Schema.literal(.string($0)) }.joined(separator: ",")))"
        }
        return Int(try RawStatement.integer(db.cachedStatement(sql: sql), in: db, values: arguments) ?? 0)
    }

    /// Forgets the content hash (model metadata `hash`) of the objects of `entityName` that match
    /// `predicate`, so that the next merge compares their values instead of trusting the hash:
    /// what a change of the rules that mapped them (a whitelist, an alias) needs. The hash is a
    /// cache of the merge, not a value of the object: observers are not told, nothing is recorded.
    /// Returns how many objects had one.
    @discardableResult
    public func forgetContentHashes(_ entityName: String, where predicate: ObjectPredicate = .all) throws -> Int {
        try flushInserts()
        let entity = try model.requireEntity(entityName)
        guard let hashKey = entity.userInfo["hash"], entity.attribute(hashKey) != nil else { return 0 }
        let table = model.entity(entity.rootName)!
        var arguments: [Value] = []
        var sql = "UPDATE \(quote(table.name)) SET \(quote(hashKey)) = NULL WHERE \(quote(hashKey)) IS NOT NULL AND " + (try predicate.sql(entity, &arguments))
        if table.descendants.count > 1 && entity.descendants.count < table.descendants.count {
            sql += " AND \(quote(Schema.entityColumn)) IN (\(entity.descendants.map { Schema.literal(.string($0)) }.joined(separator: ",")))"
        }
        try RawStatement.execute(db.cachedStatement(sql: sql), in: db, values: arguments[...])
        return db.changesCount
    }

    /// The members of a to-many relationship (or the object of a to-one) of `id`.
    public func members(of id: ObjectID, _ relationshipName: String) throws -> [ObjectID] {
        let entity = try model.requireEntity(id.entity)
        guard let r = entity.relationship(relationshipName) else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: relationshipName, known: entity.relationships.map(\.name))
        }
        if r.storesForeignKey {
            return try object(id, keys: [r.name])?.related(r.name).map { [$0] } ?? []
        }
        guard let inverse = r.inverse else { return [] }
        return try fetchAll(r.destination, where: .related(inverse, id), keys: [])
            .map(\.id)
    }

    // MARK: Inserting

    /// Inserts an object with attribute values and related objects by name.
    @discardableResult
    public func insert(_ entityName: String, _ values: [String: Value] = [:], related: [String: ObjectID] = [:]) throws -> ObjectID {
        let entity = try model.requireEntity(entityName)
        var row = entity.defaultRow
        for (key, value) in values {
            guard let i = entity.rowIndex(of: key) else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.rowKeys)
            }
            row[i] = value
        }
        var toManyAdds: [(String, ObjectID)] = []
        for (key, target) in related {
            guard let r = entity.relationship(key) else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.relationships.map(\.name))
            }
            if let i = entity.rowIndex(of: key) {
                row[i] = .integer(target.rowID)
            } else if !r.isToMany {
                toManyAdds.append((key, target))   // one-to-one stored on the other side
            } else {
                throw ObjectGraphError.invalidOperation("\(entity.name).\(key) is to-many: use add(_:to:of:)")
            }
        }
        let id = try insert(into: entity, row: row)
        for (key, target) in toManyAdds { try setRelated(id, key, to: target) }
        return id
    }

    /// Inserts a row given in `entity.rowKeys` order: the fast path of bulk imports.
    ///
    /// The row gets its row id at once but is written with others of its table (see
    /// `flushInserts`), before anything in this context next reads or changes the database.
    @discardableResult
    public func insert(into entity: Entity, row: [Value]) throws -> ObjectID {
        let plan = try insertPlan(entity)
        // Each value's type checked where it is (a copy of each would retain and release its
        // string, allocated on the thread that read the guide).
        if let mismatch = row.withUnsafeBufferPointer({ plan.firstMismatch($0) }) {
            let a = entity.attributes[mismatch]
            if row[mismatch].isNull { throw ObjectGraphError.missingRequired(entity: entity.name, key: a.name) }
            throw ObjectGraphError.wrongType(entity: entity.name, key: a.name, expected: a.type.rawValue, got: row[mismatch].description)
        }
        let rowID = try plan.rowIDs.next(or: firstRowID(plan.table))
        // The row itself is kept (the change below shares it), not copied value by value.
        plan.pending.append(RawStatement.PendingRow(rowID: rowID, entityName: plan.entityName, values: row))
        pendingInsertRows += 1
        if pendingInsertRows >= Self.maxPendingInsertRows { try flushInserts() }

        let id = ObjectID(entity: entity.name, rowID: rowID)
        plan.insertCount += 1
        let observed = plan.isObserved
        guard observed || plan.hasObservedInverse else { return id }
        var foreignKeys = ForeignKeys()
        let attributeCount = plan.attributeCount
        // By index: a copy of each key's names would retain and release three strings.
        for i in plan.foreignKeys.indices where observed || plan.isInverseObserved[i] {
            guard let owner = row[attributeCount + i].integerValue else { continue }
            if observed { foreignKeys.append(plan.foreignKeys[i].name, owner) }
            if plan.isInverseObserved[i] { noteInsertedMember(id, plan, foreignKey: i, owner: owner) }
        }
        if observed {
            // Room for as many inserts as a batch had so far: the list grows by one allocation,
            // not by copying itself at each doubling.
            if pending.inserted.capacity == 0 { pending.inserted.reserveCapacity(insertsPerBatch) }
            pending.inserted.append(ObjectChange(kind: .insert, id: id, changedKeys: plan.rowKeys, old: [],
                                                 new: recordChanges ? row : [], foreignKeys: foreignKeys))
        }
        return id
    }

    /// `noteMember(member, of: owner, in: inverse, added: true)` for a member just inserted: the
    /// members of one owner come one after another (a programme's credits), so each foreign key
    /// of a plan remembers the entry its last owner got, and the next member of the same owner
    /// goes straight there (no lookup by owner and name, no string compared).
    private func noteInsertedMember(_ member: ObjectID, _ plan: InsertPlan, foreignKey i: Int, owner: Int64) {
        let last = plan.lastOwnerEntries[i]
        if last.batch == pendingBatch, last.owner == owner {
            // A new row id is in no list of removed members: it was never given out before.
            pending.relationshipChanges[last.index].added.append(member)
            return
        }
        let ownerID = ObjectID(entity: plan.foreignKeys[i].destination, rowID: owner)
        noteMember(member, of: ownerID, in: plan.foreignKeys[i].observedInverse!, added: true)
        if let entry = lastRelationshipChange { plan.lastOwnerEntries[i] = (pendingBatch, owner, entry.index) }
    }

    /// What inserting into one entity needs, prepared once per context, and its rows not yet written.
    private final class InsertPlan {
        let table: String
        /// `INSERT INTO table (_pk, [entity,] row keys...) VALUES` and one row's placeholders.
        let sqlHead: String
        let rowPlaceholders: String
        let hasEntityColumn: Bool
        /// Values bound before each row's own: the row id, and the entity name if the table has that column.
        let leadValues: Int
        /// Rows per INSERT statement: many narrow rows, fewer wide ones.
        let rowsPerStatement: Int
        /// Whether observers read inserts of this entity, and member changes of the to-many
        /// inverse of each of its foreign keys (in `entity.foreignKeys` order).
        let isObserved: Bool
        /// The entity's foreign keys (in `entity.foreignKeys` order): name, destination, and the
        /// to-many inverse when observers read its member changes.
        let foreignKeys: [(name: String, destination: String, observedInverse: String?)]
        // Unchecked as `ObjectContext.pending` is.
        @exclusivity(unchecked) var insertCount = 0
        @exclusivity(unchecked) var pending: [RawStatement.PendingRow] = []
        /// How many tables this one refers to through chains of foreign keys: written after them.
        let flushRank: Int
        /// The table's row ids, shared with the other entities stored in it.
        let rowIDs: RowIDCounter
        /// INSERT statements by their number of rows.
        var statements: [Int: Statement] = [:]

        let entity: Entity
        /// The entity's name when the table stores several entities (bound with each row).
        let entityName: String?
        let rowKeys: [String]
        let attributeCount: Int
        /// Each attribute's type and whether it may be null, in row order.
        let attributeTypes: [AttributeType]
        let attributeOptional: [Bool]
        /// `attributeTypes` as the codes `firstMismatch` gives values (a null: `nullKind`).
        let attributeKinds: [UInt8]
        static let nullKind: UInt8 = 6
        let hasObservedInverse: Bool
        /// Per foreign key: whether it has an observed inverse.
        let isInverseObserved: [Bool]
        /// Per foreign key: the owner the last member inserted referred to, and the entry of
        /// `pending.relationshipChanges` that owner got, in the batch numbered `batch`.
        @exclusivity(unchecked) var lastOwnerEntries: [(batch: Int, owner: Int64, index: Int)]

        init(entity: Entity, table: String, columns: [String], hasEntityColumn: Bool, flushRank: Int, rowIDs: RowIDCounter,
             isObserved: Bool, foreignKeys: [(name: String, destination: String, observedInverse: String?)]) {
            self.entity = entity
            entityName = hasEntityColumn ? entity.name : nil
            rowKeys = entity.rowKeys
            attributeCount = entity.attributes.count
            attributeTypes = entity.attributes.map(\.type)
            attributeKinds = attributeTypes.map { type in
                switch type {
                case .string: 0
                case .integer: 1
                case .double: 2
                case .bool: 3
                case .date: 4
                case .data: 5
                }
            }
            attributeOptional = entity.attributes.map(\.isOptional)
            isInverseObserved = foreignKeys.map { $0.observedInverse != nil }
            hasObservedInverse = isInverseObserved.contains(true)
            lastOwnerEntries = Array(repeating: (-1, 0, 0), count: foreignKeys.count)
            self.table = table
            self.flushRank = flushRank
            self.rowIDs = rowIDs
            sqlHead = "INSERT INTO \(quote(table)) (\(columns.joined(separator: ", "))) VALUES "
            rowPlaceholders = "(" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
            self.hasEntityColumn = hasEntityColumn
            leadValues = hasEntityColumn ? 2 : 1
            rowsPerStatement = max(1, min(64, 1024 / columns.count))
            self.isObserved = isObserved
            self.foreignKeys = foreignKeys
        }

        /// How many of `left` rows the next INSERT writes: `rowsPerStatement`, or a shorter tail
        /// in powers of two (largest first), so that a context prepares a few statements per
        /// table rather than one for every tail length it meets (a first import met about a
        /// hundred, each costing as much to prepare as writing a few hundred rows).
        func rowsInNextStatement(of left: Int) -> Int {
            if left >= rowsPerStatement { return rowsPerStatement }
            var power = 1
            while power * 2 <= left { power *= 2 }
            return power
        }

        /// The first attribute whose value does not fit it (null where one is required, or of
        /// another type), or nil.
        func firstMismatch(_ row: UnsafeBufferPointer<Value>) -> Int? {
            attributeKinds.withUnsafeBufferPointer { kinds in
                for i in 0..<attributeCount {
                    // The case alone, no payload bound: nothing is copied.
                    let kind: UInt8
                    switch row[i] {
                    case .null: kind = Self.nullKind
                    case .string: kind = 0
                    case .integer: kind = 1
                    case .double: kind = 2
                    case .bool: kind = 3
                    case .date: kind = 4
                    case .data: kind = 5
                    }
                    if kind != kinds[i] && !(kind == Self.nullKind && attributeOptional[i]) { return i }
                }
                return nil
            }
        }

        func statement(rows: Int, _ db: Database) throws -> Statement {
            if let known = statements[rows] { return known }
            let made = try db.makeStatement(sql: sqlHead + Array(repeating: rowPlaceholders, count: rows).joined(separator: ", "))
            statements[rows] = made
            return made
        }
    }
    /// A short list (one per entity inserted into), searched in order: cheaper than hashing.
    private var insertPlans: [(entity: Entity, plan: InsertPlan)] = []

    /// The plans again, by `Entity.ordinal`: a merge inserts into a few entities in turn, each
    /// insert finds its plan without a search.
    @exclusivity(unchecked) private var insertPlansByOrdinal: [InsertPlan?] = []

    private func insertPlan(_ entity: Entity) throws -> InsertPlan {
        let ordinal = entity.ordinal
        if ordinal < insertPlansByOrdinal.count, let plan = insertPlansByOrdinal[ordinal], plan.entity === entity { return plan }
        if let cached = insertPlans.first(where: { $0.entity === entity }) { return cached.plan }
        if entity.isAbstract {
            throw ObjectGraphError.invalidOperation("entity \(entity.name) is abstract: insert one of its sub-entities")
        }
        let table = model.entity(entity.rootName)!
        let hasEntityColumn = table.descendants.count > 1
        let columns = [quote(Schema.rowIDColumn)] + (hasEntityColumn ? [quote(Schema.entityColumn)] : []) + entity.rowKeys.map(quote)
        let plan = InsertPlan(entity: entity, table: table.name, columns: columns, hasEntityColumn: hasEntityColumn,
                              flushRank: referenceDepth(table.name, visiting: []), rowIDs: rowIDCounter(table.name),
                              isObserved: isObserved(entity.name),
                              foreignKeys: entity.foreignKeys.map { r in
                                  (r.name, r.destination, isInverseObserved(r) ? r.inverse : nil)
                              })
        insertPlans.append((entity, plan))
        if insertPlansByOrdinal.count <= ordinal { insertPlansByOrdinal += Array(repeating: nil, count: ordinal + 1 - insertPlansByOrdinal.count) }
        insertPlansByOrdinal[ordinal] = plan
        return plan
    }

    // MARK: Batched inserts

    // An import inserts millions of narrow rows (a programme's credits and categories). SQLite's
    // work per statement (preparing the cursors, AUTOINCREMENT's read and write of
    // sqlite_sequence, ending the statement) costs more than a narrow row itself, so rows are
    // written as multi-row INSERTs, with row ids given out here as SQLite would (one past the
    // largest ever used in the table).

    /// Rows pending in all tables; past this many they are written (memory stays bounded).
    private static let maxPendingInsertRows = 4096
    @exclusivity(unchecked) private var pendingInsertRows = 0
    /// The next row id of a table, shared by the insert plans of the entities stored in it.
    final class RowIDCounter {
        @exclusivity(unchecked) private var next: Int64?
        /// The next id; `first` (read lazily, once) gives the first.
        func next(or first: @autoclosure () throws -> Int64) rethrows -> Int64 {
            let id = try next ?? first()
            next = id + 1
            return id
        }
    }
    private var rowIDCounters: [String: RowIDCounter] = [:]

    private func rowIDCounter(_ table: String) -> RowIDCounter {
        if let known = rowIDCounters[table] { return known }
        let counter = RowIDCounter()
        rowIDCounters[table] = counter
        return counter
    }

    /// The first row id to give out in a table.
    private func firstRowID(_ table: String) throws -> Int64 {
        // AUTOINCREMENT never reuses an id, even one whose row is gone: start past both.
        let largest = try Int64.fetchOne(db, sql: "SELECT max(\(quote(Schema.rowIDColumn))) FROM \(quote(table))") ?? 0
        let sequence = try db.tableExists("sqlite_sequence")
            ? try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table]) ?? 0 : 0
        return max(largest, sequence) + 1
    }

    /// The longest chain of foreign keys from `table` to other tables (a cycle ends a chain).
    private func referenceDepth(_ table: String, visiting: Set<String>) -> Int {
        guard let entity = model.entity(table) else { return 0 }
        var depth = 0
        for name in entity.descendants {   // the entity and its sub-entities
            for r in model.entity(name)?.foreignKeys ?? [] {
                guard let target = model.entity(r.destination)?.rootName, target != table, !visiting.contains(target) else { continue }
                depth = max(depth, 1 + referenceDepth(target, visiting: visiting.union([table])))
            }
        }
        return depth
    }

    /// Writes every pending row, parent tables before the tables whose rows refer to them
    /// (foreign keys are checked as each statement runs).
    private func flushInserts() throws {
        guard pendingInsertRows > 0 else { return }
        pendingInsertRows = 0
        let plans = insertPlans.map(\.plan).filter { !$0.pending.isEmpty }.sorted { $0.flushRank < $1.flushRank }
        for plan in plans {
            defer { plan.pending.removeAll(keepingCapacity: true) }
            var row = 0
            while row < plan.pending.count {
                let rows = plan.rowsInNextStatement(of: plan.pending.count - row)
                try RawStatement.execute(try plan.statement(rows: rows, db), in: db, rows: plan.pending[row..<(row + rows)], lead: plan.leadValues)
                row += rows
            }
        }
    }

    /// Folds the per-entity insert and update counters into the summary.
    private func flushInsertCounts() {
        for entry in insertPlans where entry.plan.insertCount > 0 {
            counted.counts[entry.entity.name, default: EntityCounts()].inserted += entry.plan.insertCount
            entry.plan.insertCount = 0
        }
        for case let plan? in updatePlans where plan.updateCount > 0 {
            counted.counts[plan.entity.name, default: EntityCounts()].updated += plan.updateCount
            plan.updateCount = 0
        }
    }

    /// What this context changed so far, in numbers.
    public var summary: ChangeSummary {
        flushInsertCounts()
        return counted
    }

    // MARK: Updating

    /// Sets attributes (and to-one relationships, as `.integer(rowID)` or `.null`) of an object.
    /// Only the keys whose value really changes are written and reported. Returns those keys.
    @discardableResult
    public func update(_ id: ObjectID, _ changes: [String: Value]) throws -> [String] {
        try update(id, changes, current: nil)
    }

    /// `update(_:_:)` for a caller that has just read the object: when `current` holds every key
    /// of `changes` and every foreign key, the object is not read again.
    @discardableResult
    public func update(_ id: ObjectID, _ changes: [String: Value], current known: FetchedObject?) throws -> [String] {
        try flushInserts()
        let entity = try model.requireEntity(id.entity)
        // Each key's attribute and value looked up once (a merge updates thousands of objects).
        let requested = changes.sorted { $0.key < $1.key }
        for (key, value) in requested {
            guard entity.rowIndex(of: key) != nil else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.rowKeys)
            }
            if let a = entity.attribute(key) {
                if !value.fits(a.type) {
                    throw ObjectGraphError.wrongType(entity: entity.name, key: key, expected: a.type.rawValue, got: value.description)
                }
                if value.isNull && !a.isOptional { throw ObjectGraphError.missingRequired(entity: entity.name, key: key) }
            }
        }
        let current: FetchedObject
        if let known, known.id == id, requested.allSatisfy({ known.layout.index[$0.key] != nil }),
           entity.foreignKeys.allSatisfy({ known.layout.index[$0.name] != nil }) {
            current = known
        } else {
            let readKeys = Array(Set(requested.map(\.key) + entity.foreignKeys.map(\.name))).sorted()
            guard let read = try object(id, keys: readKeys) else {
                throw ObjectGraphError.objectNotFound(entity: entity.name, id: id.description)
            }
            current = read
        }
        var changed: [String] = [], old: [String: Value] = [:], new: [String: Value] = [:]
        var values: [Value] = []
        for (key, value) in requested {
            let before = current[key]
            guard before != value else { continue }
            changed.append(key)
            values.append(value)
            old[key] = before
            new[key] = value
        }
        if changed.isEmpty { return [] }
        values.append(.integer(id.rowID))
        try RawStatement.execute(try updateStatement(entity.rootName, changed), in: db, values: values[...])

        var foreignKeys = ForeignKeys()
        for r in entity.foreignKeys {
            if let v = (new[r.name] ?? current[r.name]).integerValue { foreignKeys.append(r.name, v) }
        }
        record(update: id, entity: entity, keys: changed, old: old, new: new, foreignKeys: foreignKeys)
        for r in entity.foreignKeys where new[r.name] != nil {
            if let before = old[r.name]?.integerValue { noteInverse(of: r, owner: before, member: id, added: false) }
            if let after = new[r.name]?.integerValue { noteInverse(of: r, owner: after, member: id, added: true) }
        }
        return changed
    }

    /// `UPDATE table SET key = ?, ... WHERE _pk = ?`, prepared once per table and keys (a merge
    /// writes the same few shapes thousands of times).
    private func updateStatement(_ table: String, _ keys: [String]) throws -> Statement {
        let cacheKey = ([table] + keys).joined(separator: "\u{0}")
        if let known = updateStatements[cacheKey] { return known }
        let sql = "UPDATE \(quote(table)) SET " + keys.map { "\(quote($0)) = ?" }.joined(separator: ", ")
            + " WHERE \(quote(Schema.rowIDColumn)) = ?"
        let statement = try db.makeStatement(sql: sql)
        updateStatements[cacheKey] = statement
        return statement
    }

    private var updateStatements: [String: Statement] = [:]

    /// `update(_:_:current:)` with the keys given by their position in `entity.rowKeys`: what a
    /// merge writes for each changed object. The plan of each entity (types, names in the order
    /// written and reported, statements by the keys changed) is made once, so an update hashes no
    /// key names and builds no SQL; and rows still waiting to be inserted are written first only
    /// when the update refers to one of them (a merge's update of a programme came after the
    /// inserts of its new credits, each time forcing a short INSERT per table). The object's
    /// change is reported exactly as `update(_:_:current:)` reports it. Returns whether anything
    /// changed.
    @discardableResult
    public func update(_ id: ObjectID, of entity: Entity, _ changes: [(position: Int, value: Value)], current: FetchedObject) throws -> Bool {
        let plan = updatePlan(entity)
        if plan.layout !== current.layout { plan.read(current.layout) }
        // An object of another entity (a sub-entity's), a current object without a key to
        // compare or report: the general path.
        guard id.isOf(entity.name), current.id == id, plan.layoutHasForeignKeys,
              changes.allSatisfy({ plan.layoutIndices[$0.position] >= 0 }) else {
            var named: [String: Value] = [:]
            for change in changes { named[entity.rowKeys[change.position]] = change.value }
            return try !update(id, named, current: current).isEmpty
        }
        for (position, value) in changes where position < plan.attributeTypes.count {
            if !value.fits(plan.attributeTypes[position]) {
                throw ObjectGraphError.wrongType(entity: entity.name, key: entity.rowKeys[position], expected: plan.attributeTypes[position].rawValue,
                                                 got: value.description)
            }
            if value.isNull && !plan.attributeOptional[position] { throw ObjectGraphError.missingRequired(entity: entity.name, key: entity.rowKeys[position]) }
        }
        // In the order of the keys' names, as `update(_:_:current:)` writes and reports them.
        // (A few keys: sorted in place by insertion, no closure called per comparison.)
        var requested = changes
        for i in requested.indices.dropFirst() {
            var j = i
            while j > 0 && plan.rank[requested[j].position] < plan.rank[requested[j - 1].position] {
                requested.swapAt(j, j - 1)
                j -= 1
            }
        }
        var positions: [Int] = [], old: [Value] = [], new: [Value] = []
        positions.reserveCapacity(requested.count)
        old.reserveCapacity(requested.count)
        new.reserveCapacity(requested.count + 1)
        for (position, value) in requested {
            let before = current.values[plan.layoutIndices[position]]
            guard before != value else { continue }
            positions.append(position)
            old.append(before)
            new.append(value)
        }
        if positions.isEmpty { return false }
        let shape = try plan.shape(positions, db)
        if try mustFlushInserts(before: id, plan, positions, new) { try flushInserts() }
        // The row id bound last, then taken off again: `new` is what observers are told.
        new.append(.integer(id.rowID))
        try RawStatement.execute(shape.statement, in: db, values: new[...])
        new.removeLast()

        var foreignKeys = ForeignKeys()
        for (i, r) in entity.foreignKeys.enumerated() {
            let position = plan.foreignKeyPositions[i]
            let value = positions.firstIndex(of: position).map { new[$0] } ?? current.values[plan.layoutIndices[position]]
            if let v = value.integerValue { foreignKeys.append(r.name, v) }
        }
        if positions.contains(where: { !plan.isExcluded[$0] }) { plan.updateCount += 1 }
        if plan.isObserved {
            pending.updated.append(ObjectChange(kind: .update, id: id, changedKeys: shape.keys, old: old, new: new, foreignKeys: foreignKeys))
        }
        for (i, r) in entity.foreignKeys.enumerated() {
            guard let j = positions.firstIndex(of: plan.foreignKeyPositions[i]) else { continue }
            if let before = old[j].integerValue { noteInverse(of: r, owner: before, member: id, added: false) }
            if let after = new[j].integerValue { noteInverse(of: r, owner: after, member: id, added: true) }
        }
        return true
    }

    /// Whether a row still waiting to be inserted must be written before `id` is updated: it is
    /// that row, or a foreign key the update sets refers to one.
    private func mustFlushInserts(before id: ObjectID, _ plan: UpdatePlan, _ positions: [Int], _ values: [Value]) throws -> Bool {
        guard pendingInsertRows > 0 else { return false }
        if isPendingInsert(plan.table, id.rowID) { return true }
        for (j, position) in positions.enumerated() where position >= plan.attributeTypes.count {
            if let target = values[j].integerValue, isPendingInsert(plan.foreignKeyTables[position - plan.attributeTypes.count], target) { return true }
        }
        return false
    }

    /// Whether row `rowID` of `table` is among the rows waiting to be inserted (row ids are given
    /// out in increasing order, so a stored row's id is below every waiting row's of its table).
    private func isPendingInsert(_ table: String, _ rowID: Int64) -> Bool {
        insertPlans.contains { entry in
            guard let first = entry.plan.pending.first, first.rowID <= rowID, entry.plan.table == table else { return false }
            return entry.plan.pending.contains { $0.rowID == rowID }
        }
    }

    /// What updating objects of one entity by key positions needs, made once per context.
    private final class UpdatePlan {
        let entity: Entity
        let table: String
        let isObserved: Bool
        /// Per row position: its rank among the row keys sorted by name.
        let rank: [Int]
        let attributeTypes: [AttributeType]
        let attributeOptional: [Bool]
        /// Per row position: whether a change of it is left out of the counts.
        let isExcluded: [Bool]
        /// Per foreign key: its row position, and the table its rows are in.
        let foreignKeyPositions: [Int]
        let foreignKeyTables: [String]
        /// The layout of the current object last given, where each row position is among its
        /// values (-1: not read), and whether it has every foreign key.
        private(set) var layout: FetchLayout?
        private(set) var layoutIndices: [Int] = []
        private(set) var layoutHasForeignKeys = false
        /// Updates counted but not yet added to the context's summary.
        var updateCount = 0
        /// The statement and key names of each set of changed positions (in name order).
        private var shapes: [[Int]: (statement: Statement, keys: [String])] = [:]

        init(entity: Entity, model: ObjectModel, isObserved: Bool) {
            self.entity = entity
            table = entity.rootName
            self.isObserved = isObserved
            var rank = Array(repeating: 0, count: entity.rowKeys.count)
            for (r, i) in entity.rowKeys.indices.sorted(by: { entity.rowKeys[$0] < entity.rowKeys[$1] }).enumerated() { rank[i] = r }
            self.rank = rank
            attributeTypes = entity.attributes.map(\.type)
            attributeOptional = entity.attributes.map(\.isOptional)
            isExcluded = entity.attributes.map(\.isExcludedFromDiff) + entity.foreignKeys.map(\.isExcludedFromDiff)
            foreignKeyPositions = entity.foreignKeys.indices.map { entity.attributes.count + $0 }
            foreignKeyTables = entity.foreignKeys.map { model.entity($0.destination)?.rootName ?? $0.destination }
        }

        func read(_ layout: FetchLayout) {
            self.layout = layout
            layoutIndices = entity.rowKeys.map { layout.index[$0] ?? -1 }
            layoutHasForeignKeys = foreignKeyPositions.allSatisfy { layoutIndices[$0] >= 0 }
        }

        func shape(_ positions: [Int], _ db: Database) throws -> (statement: Statement, keys: [String]) {
            if let known = shapes[positions] { return known }
            let keys = positions.map { entity.rowKeys[$0] }
            let sql = "UPDATE \(quote(table)) SET " + keys.map { "\(quote($0)) = ?" }.joined(separator: ", ")
                + " WHERE \(quote(Schema.rowIDColumn)) = ?"
            let made = (try db.makeStatement(sql: sql), keys)
            shapes[positions] = made
            return made
        }
    }

    /// The update plans, by `Entity.ordinal`.
    private var updatePlans: [UpdatePlan?] = []

    private func updatePlan(_ entity: Entity) -> UpdatePlan {
        let ordinal = entity.ordinal
        if ordinal < updatePlans.count, let plan = updatePlans[ordinal], plan.entity === entity { return plan }
        let plan = UpdatePlan(entity: entity, model: model, isObserved: isObserved(entity.name))
        if updatePlans.count <= ordinal { updatePlans += Array(repeating: nil, count: ordinal + 1 - updatePlans.count) }
        updatePlans[ordinal] = plan
        return plan
    }

    /// Records an update the caller already wrote (the merge's bulk path, which has the old
    /// values at hand and writes with its own cached statement).
    func record(update id: ObjectID, entity: Entity, keys: [String], old: [String: Value], new: [String: Value],
                foreignKeys: ForeignKeys) {
        if keys.contains(where: { !isExcluded(entity, $0) }) {
            counted.counts[entity.name, default: EntityCounts()].updated += 1
        }
        guard isObserved(entity.name) else { return }
        pending.updated.append(ObjectChange(kind: .update, id: id, changedKeys: keys, old: keys.map { old[$0] ?? .null },
                                            new: keys.map { new[$0] ?? .null }, foreignKeys: foreignKeys))
    }

    private func isExcluded(_ entity: Entity, _ key: String) -> Bool {
        entity.attribute(key)?.isExcludedFromDiff ?? entity.relationship(key)?.isExcludedFromDiff ?? false
    }

    /// Points a to-one relationship at `target` (or clears it), keeping the inverse consistent.
    public func setRelated(_ id: ObjectID, _ relationshipName: String, to target: ObjectID?) throws {
        let entity = try model.requireEntity(id.entity)
        guard let r = entity.relationship(relationshipName), !r.isToMany else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: relationshipName,
                                              known: entity.relationships.filter { !$0.isToMany }.map(\.name))
        }
        if r.storesForeignKey {
            try update(id, [r.name: target.map { .integer($0.rowID) } ?? .null])
        } else if let inverse = r.inverse {
            // One-to-one kept on the other side: detach the current partner, attach the new one.
            for partner in try members(of: id, r.name) where partner != target {
                try update(partner, [inverse: .null])
            }
            if let target { try update(target, [inverse: .integer(id.rowID)]) }
        }
    }

    // MARK: To-many mutations (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed)

    /// Adds objects to a to-many relationship; each is taken from its previous owner, if any.
    public func add(_ members: [ObjectID], to relationshipName: String, of owner: ObjectID) throws {
        let (_, inverse) = try toMany(owner, relationshipName)
        for member in members { try update(member, [inverse.name: .integer(owner.rowID)]) }
    }

    /// Removes objects from a to-many relationship. Members of an owning (cascade) relationship
    /// are deleted, since they cannot exist on their own; others just lose the reference.
    public func remove(_ members: [ObjectID], from relationshipName: String, of owner: ObjectID) throws {
        let (r, inverse) = try toMany(owner, relationshipName)
        for member in members {
            guard try object(member, keys: [inverse.name])?.related(inverse.name)?.rowID == owner.rowID else { continue }
            if r.deleteRule == .cascade {
                try delete(member)
            } else {
                if !inverse.isOptional {
                    throw ObjectGraphError.missingRequired(entity: member.entity, key: inverse.name)
                }
                try update(member, [inverse.name: .null])
            }
        }
    }

    private func toMany(_ owner: ObjectID, _ name: String) throws -> (Relationship, Relationship) {
        let entity = try model.requireEntity(owner.entity)
        guard let r = entity.relationship(name), r.isToMany, let inverse = model.inverse(of: r) else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: name,
                                              known: entity.relationships.filter(\.isToMany).map(\.name))
        }
        return (r, inverse)
    }

    // MARK: Deleting

    /// Deletes an object, applying each relationship's delete rule: cascade deletes the owned
    /// objects, nullify clears their reference, deny refuses while there is one.
    public func delete(_ id: ObjectID) throws {
        // Check every deny rule the cascade will meet before deleting anything, so that a refusal
        // deep in the cascade leaves the objects as they were (the caller may carry on).
        var visited = Set<ObjectID>()
        try checkDeletable(id, &visited)
        let entity = try model.requireEntity(id.entity)
        if deletesSubtreesInBulk, let plan = subtreeDeletePlan(entity) {
            try deleteSubtree(id, plan)
        } else {
            try deleteChecked(id)
        }
    }

    private func checkDeletable(_ id: ObjectID, _ visited: inout Set<ObjectID>) throws {
        guard visited.insert(id).inserted else { return }
        let entity = try model.requireEntity(id.entity)
        for r in entity.relationships where r.deleteRule == .deny {
            let n = try members(of: id, r.name).count
            if n > 0 { throw ObjectGraphError.deleteDenied(entity: entity.name, relationship: r.name, count: n) }
        }
        for r in entity.relationships where r.deleteRule == .cascade && cascadeMeetsDeny(r.destination) {
            for member in try members(of: id, r.name) { try checkDeletable(member, &visited) }
        }
    }

    private var cascadeMeetsDenyCache: [String: Bool] = [:]
    /// Whether deleting an object of `entityName` (or a sub-entity) can cascade into a deny rule.
    private func cascadeMeetsDeny(_ entityName: String) -> Bool {
        if let known = cascadeMeetsDenyCache[entityName] { return known }
        var seen = Set<String>(), stack = [entityName], found = false
        while let name = stack.popLast(), !found {
            guard seen.insert(name).inserted, let entity = model.entity(name) else { continue }
            stack += entity.descendants.dropFirst()
            for r in entity.relationships {
                if r.deleteRule == .deny { found = true }
                if r.deleteRule == .cascade { stack.append(r.destination) }
            }
        }
        cascadeMeetsDenyCache[entityName] = found
        return found
    }

    private func deleteChecked(_ id: ObjectID) throws {
        let entity = try model.requireEntity(id.entity)
        for r in entity.relationships where r.deleteRule == .deny {
            let n = try members(of: id, r.name).count
            if n > 0 { throw ObjectGraphError.deleteDenied(entity: entity.name, relationship: r.name, count: n) }
        }
        guard let current = try object(id) else { return }
        for r in entity.relationships where !r.storesForeignKey {
            let related = try members(of: id, r.name)
            guard !related.isEmpty, let inverse = r.inverse else { continue }
            switch r.deleteRule {
            case .cascade:
                for member in related { try deleteChecked(member) }
            case .nullify, .deny:
                for member in related { try update(member, [inverse: .null]) }
            }
        }
        // A cascading to-one that holds the key (owned one-to-one stored on this side is rare,
        // but a to-one cascade to a parent-less object is allowed).
        var cascadeTargets: [ObjectID] = []
        for r in entity.foreignKeys where r.deleteRule == .cascade {
            if let target = current.related(r.name) { cascadeTargets.append(target) }
        }
        let table = model.entity(entity.rootName)!
        try db.cachedStatement(sql: "DELETE FROM \(quote(table.name)) WHERE \(quote(Schema.rowIDColumn)) = ?").execute(arguments: [id.rowID])
        counted.counts[entity.name, default: EntityCounts()].deleted += 1
        let foreignKeys = foreignKeyValues(entity, current.values)
        if isObserved(entity.name) {
            pending.deleted.append(ObjectChange(kind: .delete, id: id, changedKeys: entity.rowKeys,
                                                old: current.values, new: [],
                                                foreignKeys: foreignKeys))
        }
        for r in entity.foreignKeys {
            if let owner = foreignKeys[r.name] { noteInverse(of: r, owner: owner, member: id, added: false) }
        }
        for target in cascadeTargets where try object(target, keys: []) != nil { try deleteChecked(target) }
    }

    // MARK: Deleting owned subtrees in bulk

    // Undoing a first import deletes every object of the guide: object by object, each one cost
    // a query per relationship to list its members, one to read it and one to delete it (issue
    // 33). Where the cascade only meets owned to-many members that hold the key to their owner,
    // a subtree is read a level at a time (the members of many owners per query), then deleted
    // with a statement per table and level, and observers are told exactly what `deleteChecked`
    // tells them, in its order (ObjectContextTests compares the two).

    /// How the objects of one entity are deleted with their owned subtrees in bulk.
    fileprivate final class SubtreeDeletePlan {
        let entity: Entity
        /// The owned to-many relationships, in the order `deleteChecked` visits them: the member
        /// key that refers to the owner, and the members' own plan.
        /// `order` is the `ORDER BY` of a member query: the order of the index that
        /// `members(of:_:)` reads, so that members come as they come there.
        var children: [(ownerKey: String, order: [SortKey], plan: SubtreeDeletePlan)] = []
        /// Whether observers see this entity's deletions (then a member row is read whole).
        let isObserved: Bool
        /// What is read of a member row: every row key when observed, else its foreign keys.
        let memberKeys: [String]
        /// Where each foreign key is among a member row's values.
        let foreignKeyIndices: [Int]
        /// For each foreign key, its to-many inverse when observers read its member changes.
        var observedInverses: [String?] = []

        init(entity: Entity, isObserved: Bool) {
            self.entity = entity
            self.isObserved = isObserved
            memberKeys = isObserved ? entity.rowKeys : entity.foreignKeys.map(\.name)
            foreignKeyIndices = entity.foreignKeys.map { r in (isObserved ? entity.rowIndex(of: r.name) : entity.foreignKeys.firstIndex { $0.name == r.name })! }
        }
    }
    private var subtreeDeletePlans: [String: SubtreeDeletePlan?] = [:]
    /// False: every delete goes object by object (tests compare the two).
    var deletesSubtreesInBulk = true

    /// The plan of `entity`, or nil when its cascade meets a deny or nullify rule on a to-many,
    /// a cascading to-one, members kept in a table with other entities, or a cycle.
    private func subtreeDeletePlan(_ entity: Entity, visiting: Set<String> = []) -> SubtreeDeletePlan? {
        if let known = subtreeDeletePlans[entity.name] { return known }
        func decided(_ plan: SubtreeDeletePlan?) -> SubtreeDeletePlan? {
            subtreeDeletePlans[entity.name] = .some(plan)
            return plan
        }
        guard !visiting.contains(entity.name) else { return nil }   // a cycle: decided where it started
        if entity.relationships.contains(where: { $0.deleteRule == .deny }) { return decided(nil) }
        if entity.foreignKeys.contains(where: { $0.deleteRule == .cascade }) { return decided(nil) }
        let plan = SubtreeDeletePlan(entity: entity, isObserved: isObserved(entity.name))
        plan.observedInverses = entity.foreignKeys.map { isInverseObserved($0) ? $0.inverse : nil }
        for r in entity.relationships where !r.storesForeignKey {
            guard r.isToMany, r.deleteRule == .cascade, let inverseName = r.inverse,
                  let destination = model.entity(r.destination), destination.rootName == destination.name,
                  destination.descendants.count == 1, let inverse = destination.relationship(inverseName), inverse.storesForeignKey,
                  let memberPlan = subtreeDeletePlan(destination, visiting: visiting.union([entity.name])) else { return decided(nil) }
            // The index on the owner key: the identity's when the key leads it, else its own.
            let order = destination.identifier.first == inverseName ? destination.identifier + [Schema.rowIDColumn] : [inverseName, Schema.rowIDColumn]
            plan.children.append((inverseName, order.map { SortKey($0) }, memberPlan))
        }
        return decided(plan)
    }

    /// One object of a subtree being deleted: its values (`plan.memberKeys`, or every row key for
    /// the root) and its members, per child relationship of its plan, as indices of the subtree.
    fileprivate struct SubtreeObject {
        let id: ObjectID
        let plan: SubtreeDeletePlan
        let values: [Value]
        let isRoot: Bool
        var members: [[Int]]
    }

    /// `deleteChecked(id)` for an entity with a plan.
    private func deleteSubtree(_ id: ObjectID, _ rootPlan: SubtreeDeletePlan) throws {
        guard let root = try object(id) else { return }
        let subtrees = try deleteSubtrees([(id, rootPlan, root.values)])
        recordSubtreeDeletion(0, in: subtrees)
    }

    /// Reads the subtrees of `roots` a level at a time (the members of many owners per query) and
    /// deletes their rows, deepest level first, with a statement per table and level. Observers
    /// hear nothing yet: `recordSubtreeDeletion` tells them of each root's subtree. The roots are
    /// the first objects of the answer, in their order.
    private func deleteSubtrees(_ roots: [(id: ObjectID, plan: SubtreeDeletePlan, values: [Value])]) throws -> [SubtreeObject] {
        var objects = roots.map { SubtreeObject(id: $0.id, plan: $0.plan, values: $0.values, isRoot: true,
                                                members: Array(repeating: [], count: $0.plan.children.count)) }
        var levels: [[Int]] = [Array(objects.indices)]
        while let level = levels.last, !level.isEmpty {
            var next: [Int] = []
            // Owners of one plan together, plans in the order first met.
            var groups: [(plan: SubtreeDeletePlan, owners: [Int])] = []
            for i in level {
                if let g = groups.firstIndex(where: { $0.plan === objects[i].plan }) { groups[g].owners.append(i) } else { groups.append((objects[i].plan, [i])) }
            }
            for (plan, owners) in groups {
                for (c, child) in plan.children.enumerated() {
                    let ownerKeyIndex = child.plan.memberKeys.firstIndex(of: child.ownerKey)!
                    var ownerIndex: [Int64: Int] = [:]
                    for i in owners { ownerIndex[objects[i].id.rowID] = i }
                    for chunk in owners.chunks(of: Self.ownersPerMemberQuery) {
                        let cursor = try fetch(child.plan.entity.name, where: .isIn(child.ownerKey, chunk.map { .integer(objects[$0].id.rowID) }),
                                               orderBy: child.order, keys: child.plan.memberKeys)
                        while try cursor.step() {
                            let values = child.plan.memberKeys.indices.map { cursor.value(at: $0) }
                            guard let owner = values[ownerKeyIndex].integerValue, let o = ownerIndex[owner] else { continue }
                            objects[o].members[c].append(objects.count)
                            next.append(objects.count)
                            objects.append(SubtreeObject(id: ObjectID(entity: child.plan.entity.name, rowID: cursor.rowID), plan: child.plan,
                                                         values: values, isRoot: false,
                                                         members: Array(repeating: [], count: child.plan.children.count)))
                        }
                    }
                }
            }
            levels.append(next)
        }
        // The rows, deepest level first: no row is deleted before the rows that refer to it.
        for level in levels.reversed() where !level.isEmpty {
            var byTable: [(table: String, rowIDs: [Int64])] = []
            for i in level {
                let table = objects[i].plan.entity.rootName
                if let t = byTable.firstIndex(where: { $0.table == table }) { byTable[t].rowIDs.append(objects[i].id.rowID) } else { byTable.append((table, [objects[i].id.rowID])) }
            }
            for (table, rowIDs) in byTable { try deleteRows(rowIDs, from: table) }
        }
        return objects
    }

    /// What observers hear of the deletion of the subtree of `objects[i]`, in `deleteChecked`'s
    /// order: each object after its members.
    private func recordSubtreeDeletion(_ i: Int, in objects: [SubtreeObject]) {
        for list in objects[i].members { for m in list { recordSubtreeDeletion(m, in: objects) } }
        let object = objects[i], entity = object.plan.entity
        counted.counts[entity.name, default: EntityCounts()].deleted += 1
        var foreignKeys = ForeignKeys()
        if object.isRoot {
            foreignKeys = foreignKeyValues(entity, object.values)
        } else {
            for (r, index) in zip(entity.foreignKeys, object.plan.foreignKeyIndices) {
                if let v = object.values[index].integerValue { foreignKeys.append(r.name, v) }
            }
        }
        if object.plan.isObserved {
            pending.deleted.append(ObjectChange(kind: .delete, id: object.id, changedKeys: entity.rowKeys,
                                                old: object.values, new: [], foreignKeys: foreignKeys))
        }
        // `noteInverse`, its answer for each key worked out once.
        for (r, inverse) in zip(entity.foreignKeys, object.plan.observedInverses) {
            if let inverse, let owner = foreignKeys[r.name] {
                noteMember(object.id, of: ObjectID(entity: r.destination, rowID: owner), in: inverse, added: false)
            }
        }
    }

    /// Objects whose rows `deleteRows(of:)` deleted at once, and whose deletions observers hear
    /// one by one, as each is completed with `completeDeletion(of:_:)`.
    public final class PreparedDeletions {
        fileprivate var objects: [SubtreeObject] = []
        /// Each object asked for: the index of its root in `objects`, or -1 when it was not
        /// stored (a deletion that tells nothing, as `delete(_:)` of it would).
        fileprivate var roots: [ObjectID: Int] = [:]
        fileprivate init() {}
    }

    /// Deletes the rows of `ids` and of what they own, as `delete(_:)` of each would, reading and
    /// deleting them a level at a time for all of them (a merge's deleted programmes with their
    /// credits: a few statements, not a few per programme). Observers hear nothing yet: a caller
    /// completes each deletion with `completeDeletion(of:_:)` where it would have called
    /// `delete(_:)`, so that what they hear, and its order among other changes, is the same. An
    /// object whose cascade meets a rule that needs object-by-object deletion (deny, nullify of
    /// a to-many) is left alone: its completion deletes it.
    ///
    /// ```swift
    /// let deletions = try context.deleteRows(of: gone)
    /// for id in gone { try context.completeDeletion(of: id, deletions) }
    /// ```
    public func deleteRows(of ids: [ObjectID]) throws -> PreparedDeletions {
        let prepared = PreparedDeletions()
        guard deletesSubtreesInBulk else { return prepared }
        // Roots of one entity read together, entities in the order first met.
        var byEntity: [(entity: Entity, plan: SubtreeDeletePlan, rowIDs: [Int64])] = []
        for id in ids where prepared.roots[id] == nil {
            let entity = try model.requireEntity(id.entity)
            guard let plan = subtreeDeletePlan(entity) else { continue }
            prepared.roots[id] = -1
            if let e = byEntity.firstIndex(where: { $0.entity === entity }) { byEntity[e].rowIDs.append(id.rowID) } else { byEntity.append((entity, plan, [id.rowID])) }
        }
        var roots: [(id: ObjectID, plan: SubtreeDeletePlan, values: [Value])] = []
        for (entity, plan, rowIDs) in byEntity {
            for chunk in rowIDs.chunks(of: Self.ownersPerMemberQuery) {
                // Every row key, as `object(_:)` reads a root.
                try fetch(entity.name, where: .rowIDs(chunk)).forEach { root in
                    roots.append((ObjectID(entity: entity.name, rowID: root.id.rowID), plan, root.values))
                }
            }
        }
        guard !roots.isEmpty else { return prepared }
        prepared.objects = try deleteSubtrees(roots)
        for (i, root) in roots.enumerated() { prepared.roots[root.id] = i }
        return prepared
    }

    /// Tells observers of the deletion of `id` that `deleteRows(of:)` prepared, exactly as
    /// `delete(_:)` would have; deletes an object it left alone (or did not know) with `delete(_:)`.
    public func completeDeletion(of id: ObjectID, _ prepared: PreparedDeletions) throws {
        guard let i = prepared.roots.removeValue(forKey: id) else { return try delete(id) }
        if i >= 0 { recordSubtreeDeletion(i, in: prepared.objects) }
    }

    /// Owners per member query: the answers stay small (the owners' row ids are one argument,
    /// `ObjectPredicate.isIn`'s JSON array of integers).
    private static let ownersPerMemberQuery = 512
    /// Rows per DELETE statement at most; a shorter list is padded with its first row id to a
    /// power of two (SQLite builds the `IN` list's table from every value: a merge's lone
    /// deleted programme cost ten times more in a list of 64). Placeholders, not the one JSON
    /// array a fetch binds: measured, that made an undo 2 % more instructions and a merge's
    /// deletions no cheaper.
    private static let rowsPerDelete = 64
    private var deleteStatements: [String: [Int: Statement]] = [:]

    private func deleteRows(_ rowIDs: [Int64], from table: String) throws {
        for chunk in rowIDs.chunks(of: Self.rowsPerDelete) {
            var size = 1
            while size < chunk.count { size *= 2 }
            let statement: Statement
            if let known = deleteStatements[table]?[size] {
                statement = known
            } else {
                statement = try db.makeStatement(sql: "DELETE FROM \(quote(table)) WHERE \(quote(Schema.rowIDColumn)) IN ("
                                                 + Array(repeating: "?", count: size).joined(separator: ", ") + ")")
                deleteStatements[table, default: [:]][size] = statement
            }
            var values = chunk.map { Value.integer($0) }
            values += Array(repeating: values[0], count: size - values.count)
            try RawStatement.execute(statement, in: db, values: values[...])
        }
    }

    // MARK: Notifications

    /// Hands the changes made since the last call to the observers, which may react with further
    /// changes (an aggregate kept current); those are handed on in turn.
    public func processPendingChanges() throws {
        try flushInserts()   // observers, and the commit after the last call, see every row
        guard !isProcessing else { return }
        isProcessing = true
        defer { isProcessing = false }
        var rounds = 0
        while !pending.isEmpty {
            rounds += 1
            if rounds > 16 { throw ObjectGraphError.invalidOperation("observers keep changing objects in response to their own changes") }
            let batch = pending
            pending = ChangeBatch()
            insertsPerBatch = max(insertsPerBatch, batch.inserted.count)
            pendingRelationshipIndex.removeAll(keepingCapacity: true)
            lastRelationshipChange = nil
            pendingBatch += 1
            for observer in observers { try observer.context(self, didProcess: batch) }
        }
    }

    /// Whether observers read member changes of `r`'s inverse, and it is a to-many relationship.
    private func isInverseObserved(_ r: Relationship) -> Bool {
        guard let inverseName = r.inverse, isObserved(inverseName, of: r.destination) else { return false }
        return model.inverse(of: r)?.isToMany == true
    }

    private func noteInverse(of r: Relationship, owner rowID: Int64, member: ObjectID, added: Bool) {
        guard let inverseName = r.inverse else { return }
        let owner = ObjectID(entity: r.destination, rowID: rowID)
        // The members of one owner come one after another (a programme's credits): the entry
        // written last passed the checks for this relationship.
        let isLast = lastRelationshipChange.map { $0.key.owner == owner && $0.key.relationship == inverseName } ?? false
        guard isLast || isInverseObserved(r) else { return }
        noteMember(member, of: owner, in: inverseName, added: added)
    }

    /// The value of a dictionary entry, made by reading it through `subscript(_:default:)`.
    private static func entry(_ value: inout Int) -> Int { value }

    /// Records that `member` joined or left `owner`'s to-many `relationship`, which observers read.
    private func noteMember(_ member: ObjectID, of owner: ObjectID, in relationship: String, added: Bool) {
        let index: Int
        if let last = lastRelationshipChange, last.key.owner == owner, last.key.relationship == relationship {
            index = last.index
        } else {
            let key = RelationshipKey(owner: owner, relationship: relationship)
            // One lookup finds the entry or makes room for a new one (a first import meets a new
            // owner for nearly every member list).
            let next = pending.relationshipChanges.count
            index = Self.entry(&pendingRelationshipIndex[key, default: next])
            if index == next {
                // Room for a few members at once (a programme's credits): the list grows by
                // one allocation, not one for each of its first sizes.
                var members: [ObjectID] = []
                members.reserveCapacity(4)
                pending.relationshipChanges.append(RelationshipChange(owner: owner, relationship: relationship,
                                                                      added: added ? members : [], removed: added ? [] : members))
            }
            lastRelationshipChange = (key, index)
        }
        if added {
            if let j = pending.relationshipChanges[index].removed.firstIndex(of: member) {
                pending.relationshipChanges[index].removed.remove(at: j)
            } else {
                pending.relationshipChanges[index].added.append(member)
            }
        } else {
            if let j = pending.relationshipChanges[index].added.firstIndex(of: member) {
                pending.relationshipChanges[index].added.remove(at: j)
            } else {
                pending.relationshipChanges[index].removed.append(member)
            }
        }
    }

    private func foreignKeyValues(_ entity: Entity, _ row: [Value]) -> ForeignKeys {
        var keys = ForeignKeys()
        for (i, r) in entity.foreignKeys.enumerated() {
            if let v = row[entity.attributes.count + i].integerValue { keys.append(r.name, v) }
        }
        return keys
    }
}

extension Value {
    /// Column `index` of the current row of `statement`, read as `type` (dates and booleans are
    /// stored as integers).
    init(column index: Int32, of statement: OpaquePointer, type: AttributeType?) {
        // One call into the statement, then the value's own accessors: each `sqlite3_column_*`
        // call takes the connection's mutex and checks the statement again, and a fetch makes
        // one for every column of every row.
        guard let value = sqlite3_column_value(statement, index) else { self = .null; return }
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: self = .null
        case SQLITE_INTEGER:
            let i = sqlite3_value_int64(value)
            switch type {
            case .bool: self = .bool(i != 0)
            case .date: self = .date(i)
            case .double: self = .double(Double(i))
            default: self = .integer(i)
            }
        case SQLITE_FLOAT:
            let d = sqlite3_value_double(value)
            self = type == .integer ? .integer(Int64(d)) : .double(d)
        case SQLITE_TEXT:
            // The text first, then its length (SQLite's order: the length is of the form asked for).
            let text = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .string(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? "")
        default:
            let bytes = sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .data(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [])
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .string(let s): s.databaseValue
        case .integer(let i), .date(let i): i.databaseValue
        case .bool(let b): (b ? 1 : 0).databaseValue
        case .double(let d): d.databaseValue
        case .data(let d): Data(d).databaseValue
        }
    }
}
