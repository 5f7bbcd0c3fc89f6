/// An object change that was not applied, because the target store no longer matched what the
/// diff expected (or could not hold the change). The object was left as it was.
///
/// ```swift
/// let report = try document.apply(to: replica)
/// for conflict in report.conflicts { print(conflict) }   // "update Channel[bbc1]: title is 'BBC 1', not 'BBC One'"
/// ```
public struct Conflict: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The entity of the object that was not changed.
    public var entityName: String
    /// The object's identifier (its entity's identifier keys).
    public var id: [IdentifierComponent]
    /// The change that was not applied.
    public var change: ChangeKind
    /// The key whose current value differs from the diff's `old`, if one key is to blame.
    public var key: String?
    /// Why, in words.
    public var reason: String

    /// A conflict of `change` on the object `id` of `entityName`.
    ///
    /// ```swift
    /// Conflict(entityName: "Channel", id: [DiffValue(.string("bbc1"))], change: .delete, reason: "the object does not exist")
    /// ```
    public init(entityName: String, id: [IdentifierComponent], change: ChangeKind, key: String? = nil, reason: String) {
        self.entityName = entityName
        self.id = id
        self.change = change
        self.key = key
        self.reason = reason
    }

    public var description: String {
        "\(change.rawValue) \(entityName)[\(canonicalIdentifier(id))]: \(reason)"
    }
}

/// What applying a change document did.
///
/// ```swift
/// let report = try document.apply(to: store, dryRun: true)
/// print("\(report.applied) objects, \(report.conflicts.count) conflicts")
/// ```
public struct ApplyReport: Sendable, Codable, Equatable {
    /// Objects changed (an insert or delete counts its owned members too; an update that only
    /// carries its members' changes does not count itself).
    public var applied: Int
    /// The changes that were not applied, each with its reason.
    public var conflicts: [Conflict]
    /// A report of `applied` objects and `conflicts`.
    public init(applied: Int = 0, conflicts: [Conflict] = []) {
        self.applied = applied
        self.conflicts = conflicts
    }
}

extension ChangeDocument {
    /// Applies this document to `store` in one transaction (rolled back when `dryRun`).
    ///
    /// - Every update and delete is first checked against the store as it is: an update only if
    ///   every current value equals the diff's `old`, a delete only if the object exists with the
    ///   expected old values and exactly the expected owned members.
    /// - Deletes run first (so an object that moved between owners can be re-inserted).
    /// - Then inserts (creating owned members, resolving to-one references by identifier) and
    ///   updates.
    /// - References are set last, once every inserted object exists.
    /// Anything that does not match becomes a `Conflict` and that object is left untouched; the
    /// owned members of a conflicting update are checked and applied on their own. A conflict
    /// never aborts the transaction; an error (a model mismatch, a malformed identifier, SQLite)
    /// rolls it all back.
    public func apply(to store: Store, dryRun: Bool = false) throws -> ApplyReport {
        guard store.acceptedFingerprints.contains(model) else { throw DiffError.modelMismatch(expected: model, found: store.fingerprint) }
        return try store.write(dryRun: dryRun) { context in try apply(in: context) }.result
    }

    /// Applies this document inside a transaction the caller already holds.
    ///
    /// `storeIsAsExpected`: the caller knows that the store holds exactly the old values of this
    /// document (the inverse of a change nothing wrote after: `Store.writeToken`), so the objects
    /// are not compared with it; they are only found. Otherwise every object is checked.
    public func apply(in context: ObjectContext, storeIsAsExpected: Bool = false) throws -> ApplyReport {
        try apply(in: context, readingSubtreesInBulk: true, storeIsAsExpected: storeIsAsExpected)
    }

    /// `apply(in:)`; without `readingSubtreesInBulk`, deletes are checked object by object, as
    /// before `SubtreeRows` (tests compare the two).
    func apply(in context: ObjectContext, readingSubtreesInBulk: Bool, storeIsAsExpected: Bool = false) throws -> ApplyReport {
        guard context.acceptedFingerprints.contains(model) else { throw DiffError.modelMismatch(expected: model, found: context.model.schemaFingerprint) }
        let applier = Applier(context: context, schema: try DiffSchema(model: context.model, excluding: Set(excluded)))
        applier.readsSubtreesInBulk = readingSubtreesInBulk
        applier.trustsOldValues = storeIsAsExpected
        let changes = ObjectDiff.squash(changes)
        for change in changes { try applier.check(change, owner: nil, via: nil) }
        for change in changes { try applier.deletes(change, owner: nil, via: nil) }
        // Observers see the deletes before any insert: SQLite reuses the row id of a deleted last
        // row, and an observer keyed by row id (an aggregate) would otherwise mix a deleted
        // channel's changes with those of the new channel that took its row id.
        try context.processPendingChanges()
        applier.forgetResolutions()
        for change in changes { try applier.upserts(change, owner: nil, via: nil) }
        try applier.retryDeferredInserts()
        try applier.setReferences()
        return ApplyReport(applied: applier.applied, conflicts: applier.conflicts)
    }
}

extension GraphDiff {
    /// Applies a document (see `ChangeDocument.apply(to:dryRun:)`).
    public func apply(_ document: ChangeDocument, to store: Store, dryRun: Bool = false) throws -> ApplyReport {
        try document.apply(to: store, dryRun: dryRun)
    }
}

final class Applier {
    let context: ObjectContext
    let schema: DiffSchema
    var model: ObjectModel { schema.model }
    var applied = 0
    var conflicts: [Conflict] = []
    /// Identifiers resolved so far (`readSubtree` adds those it finds in bulk).
    var resolved: [ObjectReference: ObjectID] = [:]
    /// The rows of the delete being checked, read in bulk (`readSubtree`).
    var subtreeRows = SubtreeRows()
    var readsSubtreesInBulk = true
    /// Whether the store is known to hold the document's old values (`apply(in:storeIsAsExpected:)`).
    var trustsOldValues = false
    private var pendingReferences: [(object: ObjectID, relationship: String, target: ObjectReference?, node: ObjectDiff)] = []

    init(context: ObjectContext, schema: DiffSchema) {
        self.context = context
        self.schema = schema
    }

    func forgetResolutions() { resolved.removeAll() }

    private var arities: [String: Int] = [:]
    /// `DiffSchema.arity`, worked out once per entity (every identifier resolved asks for it).
    func arity(_ entityName: String) throws -> Int {
        if let known = arities[entityName] { return known }
        let n = try schema.arity(entityName)
        arities[entityName] = n
        return n
    }

    private func conflict(_ node: ObjectDiff, _ reason: String, key: String? = nil) {
        conflicts.append(Conflict(entityName: node.entityName, id: node.id, change: node.change, key: key, reason: reason))
    }

    // MARK: Resolving identifiers

    func resolve(_ reference: ObjectReference) throws -> ObjectID? {
        if let known = resolved[reference] { return known }
        let entity = try model.requireEntity(reference.entityName)
        let keys = try schema.identifier(entity)
        let expected = try arity(entity.name)
        guard reference.id.count == expected else {
            throw DiffError.malformedIdentifier(entity: entity.name, id: canonicalIdentifier(reference.id), expectedComponents: expected)
        }
        var predicates: [ObjectPredicate] = []
        var k = 0
        for key in keys {
            if let r = entity.relationship(key) {
                let n = try arity(r.destination)
                let part = Array(reference.id[k..<(k + n)])
                k += n
                guard r.storesForeignKey else { throw DiffError.noIdentifier(entity: entity.name) }
                if part.allSatisfy(\.isNull) {
                    predicates.append(.related(key, nil))
                } else {
                    guard let target = try resolve(ObjectReference(entityName: r.destination, id: part)) else { return nil }
                    predicates.append(.related(key, target))
                }
            } else {
                let type = entity.attribute(key)!.type
                predicates.append(.compare(key, .equal, reference.id[k].coerced(to: type)))
                k += 1
            }
        }
        guard let found = try context.first(entity.name, where: .and(predicates), keys: [])?.id else { return nil }
        resolved[reference] = found
        return found
    }

    // MARK: Checking old values

    /// Why the object does not hold the diff's old attribute values and references, or nil.
    private func mismatch(_ node: ObjectDiff, _ current: FetchedObject, entity: Entity) throws -> (String, String)? {
        if node.attributes.keys.contains(where: { entity.attribute($0) == nil }) {
            for key in node.attributes.keys.sorted() where entity.attribute(key) == nil {
                return (key, "the model has no attribute \(entity.name).\(key)")
            }
        }
        // An update checks what it changes; a delete checks every compared attribute, those it
        // does not list being null.
        if node.change == .delete {
            if let m = deletedValuesMismatch(node, current, entity: entity) { return m }
        } else {
            for a in node.attributes.keys.sorted().compactMap(entity.attribute) {
                let expected = node.attributes[a.name].map { $0.old.coerced(to: a.type) } ?? .null
                if current[a.name] != expected {
                    return (a.name, "\(a.name) is '\(current[a.name])', the diff expected '\(expected)'")
                }
            }
        }
        for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
            guard let r = entity.relationship(key) else { return (key, "the model has no relationship \(entity.name).\(key)") }
            if r.isOwning || r.isToMany || !r.storesForeignKey { continue }
            let now = current.related(key)
            if let expected = rel.removed.first {
                guard let target = try resolve(expected), target == now else {
                    return (key, "\(key) does not refer to \(expected)")
                }
            } else if node.change == .update, now != nil {
                return (key, "\(key) refers to an object, the diff expected none")
            }
        }
        return nil
    }

    /// For a delete: the first compared attribute (in `DiffSchema.attributes` order) whose value
    /// is not the node's old one (null when the node does not list it). Each listed value is
    /// looked up once and each current one by position: undoing a first import compares every
    /// attribute of every object of the guide.
    private func deletedValuesMismatch(_ node: ObjectDiff, _ current: FetchedObject, entity: Entity) -> (String, String)? {
        let checked = schema.attributes(entity)
        let positions = comparedPositions(entity, checked)
        var expected = [Value?](repeating: nil, count: checked.count)
        for (key, change) in node.attributes {
            if let i = positions[key] { expected[i] = change.old.coerced(to: checked[i].type) }
        }
        let indices = valueIndices(current.layout, checked)
        for (i, a) in checked.enumerated() {
            let value = expected[i] ?? .null
            let now = indices[i].map { current.values[$0] } ?? .null
            if now != value {
                return (a.name, "\(a.name) is '\(now)', the diff expected '\(value)'")
            }
        }
        return nil
    }

    private var comparedPositionsByEntity: [String: [String: Int]] = [:]
    /// The position of each compared attribute of `entity` in `checked`, by name.
    private func comparedPositions(_ entity: Entity, _ checked: [Attribute]) -> [String: Int] {
        if let known = comparedPositionsByEntity[entity.name] { return known }
        var positions: [String: Int] = [:]
        for (i, a) in checked.enumerated() { positions[a.name] = i }
        comparedPositionsByEntity[entity.name] = positions
        return positions
    }

    /// The layouts seen (held, so that an identifier is never another layout's) and where each
    /// compared attribute is among their values.
    private var valueIndicesByLayout: [ObjectIdentifier: (layout: FetchLayout, indices: [Int?])] = [:]
    private func valueIndices(_ layout: FetchLayout, _ checked: [Attribute]) -> [Int?] {
        if let known = valueIndicesByLayout[ObjectIdentifier(layout)] { return known.indices }
        let indices = checked.map { layout.index[$0.name] }
        valueIndicesByLayout[ObjectIdentifier(layout)] = (layout, indices)
        return indices
    }

    /// For a delete: the object and its owned subtree are exactly what the diff expected.
    private func deleteMismatch(_ node: ObjectDiff, _ objectID: ObjectID) throws -> (String?, String)? {
        guard let current = try subtreeRows.objects[objectID] ?? context.object(objectID) else { return (nil, "no such object") }
        let entity = try model.requireEntity(current.id.entity)
        if entity.name != node.entityName { return (nil, "the object is a \(entity.name)") }
        if let m = try mismatch(node, current, entity: entity) { return m }
        for r in schema.owning(entity) {
            let expected = node.relationships[r.name]?.members ?? []
            let list = SubtreeRows.MemberList(owner: objectID, relationship: r.name)
            let actual = Set(try subtreeRows.members[list] ?? context.members(of: objectID, r.name))
            let found = subtreeRows.expectedMembers[list]
            if expected.count != actual.count {
                return (r.name, "\(r.name) has \(actual.count) member\(actual.count == 1 ? "" : "s"), the diff expected \(expected.count)")
            }
            for (position, member) in expected.enumerated() {
                guard member.change == .delete, let id = try found?[position] ?? resolve(member.reference), actual.contains(id) else {
                    return (r.name, "\(r.name) does not hold \(member.reference) as expected")
                }
                if let m = try deleteMismatch(member, id) {
                    return (r.name, "\(member.reference): \(m.1)")
                }
            }
        }
        return nil
    }

    /// Whether `objectID` belongs to `owner` through `via` (for identifiers that do not include
    /// the owner, like a guid, the object found may live under another owner).
    private func belongs(_ objectID: ObjectID, to owner: ObjectID?, via: Relationship?) throws -> Bool {
        guard let owner, let via else { return true }
        if let inverse = model.inverse(of: via), inverse.storesForeignKey {
            // The member holds the key: one row read instead of listing every member.
            return try context.object(objectID, keys: [inverse.name])?.related(inverse.name)?.rowID == owner.rowID
        }
        return try context.members(of: owner, via.name).contains(objectID)
    }

    // MARK: Pass 0: checks against the store as it was

    private struct NodeKey: Hashable {
        let entity: String
        let id: [DiffValue]
        let kind: ChangeKind
        init(_ node: ObjectDiff) { entity = node.entityName; id = node.id; kind = node.change }
    }
    /// Update and delete nodes whose check failed: skipped by the later passes.
    private var refused = Set<NodeKey>()
    /// The objects the delete nodes found before anything changed. Deletes use these: deleting
    /// one object may nullify a reference that another object's identifier goes through.
    private var deleteTargets: [NodeKey: ObjectID] = [:]

    /// Checks every update and delete against the store before anything changes, so that the
    /// document's old state is compared with the store's current state, not with a half-applied
    /// one (a deleted object that other objects referred to, say).
    func check(_ node: ObjectDiff, owner: ObjectID?, via: Relationship?) throws {
        func refuse(_ reason: String, key: String? = nil) {
            refused.insert(NodeKey(node))
            conflict(node, reason, key: key)
        }
        switch node.change {
        case .insert:
            return
        case .delete:
            guard let id = try resolve(node.reference) else { return refuse("no such object") }
            guard try belongs(id, to: owner, via: via) else { return refuse("the object belongs to another owner") }
            if trustsOldValues {
                deleteTargets[NodeKey(node)] = id
                return
            }
            if node.hasUnreadMembers { return refuse("the change file was read without the members to check") }
            if readsSubtreesInBulk { try readSubtree(of: node, at: id) }
            defer { subtreeRows = SubtreeRows() }
            if let (key, reason) = try deleteMismatch(node, id) { return refuse(reason, key: key) }
            deleteTargets[NodeKey(node)] = id
        case .update:
            guard let entity = model.entity(node.entityName) else { return refuse("unknown entity") }
            guard let id = try resolve(node.reference), try belongs(id, to: owner, via: via),
                  let current = try context.object(id, keys: trustsOldValues ? [] : nil) else { return refuse("no such object") }
            if !trustsOldValues, let (key, reason) = try mismatch(node, current, entity: entity) { refuse(reason, key: key) }
            for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
                guard let r = entity.relationship(key), r.isOwning else { continue }
                for member in rel.members { try check(member, owner: id, via: r) }
            }
        }
    }

    // MARK: Pass 1: deletes

    func deletes(_ node: ObjectDiff, owner: ObjectID?, via: Relationship?) throws {
        switch node.change {
        case .insert:
            return
        case .delete:
            if refused.contains(NodeKey(node)) { return }
            guard let id = deleteTargets[NodeKey(node)], try context.object(id, keys: []) != nil else {
                return conflict(node, "no such object")
            }
            do {
                try context.delete(id)
            } catch let error as ObjectGraphError {
                if case .deleteDenied = error { return conflict(node, error.description) }
                throw error
            }
            resolved.removeAll()
            applied += node.changedObjectCount
        case .update:
            guard let id = try resolve(node.reference), let entity = model.entity(node.entityName) else { return }
            for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
                guard let r = entity.relationship(key), r.isOwning else { continue }
                for member in rel.members { try deletes(member, owner: id, via: r) }
            }
        }
    }

    // MARK: Pass 2: inserts and updates

    func upserts(_ node: ObjectDiff, owner: ObjectID?, via: Relationship?) throws {
        switch node.change {
        case .delete:
            return
        case .insert:
            try insert(node, owner: owner, via: via)
        case .update:
            guard let entity = model.entity(node.entityName), let id = try resolve(node.reference) else {
                if !refused.contains(NodeKey(node)) { conflict(node, "no such object") }
                return
            }
            if !refused.contains(NodeKey(node)) {
                var values: [String: Value] = [:]
                for (key, change) in node.attributes { values[key] = change.new.coerced(to: entity.attribute(key)!.type) }
                // The entity's content hash (model metadata `hash`) describes the values an import
                // last wrote; a document never carries it (`diff: exclude`), so after this write
                // it is unknown: cleared, the next import compares the values themselves. The
                // object's own values and its owned members' alike change what it hashes.
                if let hashKey = entity.userInfo["hash"], node.attributes[hashKey] == nil, entity.attribute(hashKey) != nil {
                    values[hashKey] = .null
                }
                do {
                    if !values.isEmpty { try context.update(id, values) }
                    for (key, rel) in node.relationships {
                        guard let r = entity.relationship(key), !r.isOwning, !r.isToMany else { continue }
                        if rel.added.isEmpty && rel.removed.isEmpty { continue }
                        pendingReferences.append((id, key, rel.added.first, node))
                    }
                    if node.changesItself { applied += 1 }
                } catch let error as ObjectGraphError {
                    conflict(node, error.description)
                }
            }
            for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
                guard let r = entity.relationship(key), r.isOwning else { continue }
                for member in rel.members { try upserts(member, owner: id, via: r) }
            }
        }
    }

    /// Inserts whose identifier refers to an object not inserted yet (a root entity ordered
    /// before the one it refers to): retried after the pass, while that makes progress.
    private var deferredInserts: [(node: ObjectDiff, owner: ObjectID?, via: Relationship?)] = []
    private var deferring = true

    func retryDeferredInserts() throws {
        while !deferredInserts.isEmpty {
            let batch = deferredInserts
            deferredInserts = []
            for (node, owner, via) in batch { try insert(node, owner: owner, via: via) }
            if deferredInserts.count == batch.count {
                // No progress: the last round reports them as conflicts.
                deferring = false
                let last = deferredInserts
                deferredInserts = []
                for (node, owner, via) in last { try insert(node, owner: owner, via: via) }
            }
        }
    }

    private func insert(_ node: ObjectDiff, owner: ObjectID?, via: Relationship?) throws {
        guard let entity = model.entity(node.entityName) else { return conflict(node, "unknown entity") }
        if node.unreadMembers > 0 { return conflict(node, "the change file was read without the members to insert") }
        if try resolve(node.reference) != nil { return conflict(node, "the object already exists") }
        let ownerLink = via.flatMap { model.inverse(of: $0) }
        var values: [String: Value] = [:]
        // Compared attributes the node does not list were null (not their default).
        for a in schema.attributes(entity) where a.isOptional { values[a.name] = .null }
        for (key, change) in node.attributes {
            guard let a = entity.attribute(key) else { return conflict(node, "the model has no attribute \(entity.name).\(key)", key: key) }
            values[key] = change.new.coerced(to: a.type)
        }
        var related: [String: ObjectID] = [:]
        var later: [(String, ObjectReference?)] = []
        if let owner, let ownerLink, !ownerLink.isToMany { related[ownerLink.name] = owner }
        for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
            guard let r = entity.relationship(key) else { return conflict(node, "the model has no relationship \(entity.name).\(key)", key: key) }
            if r.isOwning || r.isToMany || r.name == ownerLink?.name { continue }
            if entity.identifier.contains(key) {
                // Part of the identity: must exist now.
                guard let target = rel.added.first else { continue }
                guard let id = try resolve(target) else {
                    if deferring { deferredInserts.append((node, owner, via)); return }
                    return conflict(node, "\(key) refers to \(target), which does not exist", key: key)
                }
                related[key] = id
            } else if !rel.added.isEmpty {
                later.append((key, rel.added.first))
            }
        }
        let id: ObjectID
        do {
            id = try context.insert(entity.name, values, related: related)
        } catch let error as ObjectGraphError {
            return conflict(node, error.description)
        }
        if let owner, let via, via.storesForeignKey { try context.setRelated(owner, via.name, to: id) }
        resolved[node.reference] = id
        applied += 1
        for (key, target) in later { pendingReferences.append((id, key, target, node)) }
        for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
            guard let r = entity.relationship(key), r.isOwning else { continue }
            for member in rel.members { try upserts(member, owner: id, via: r) }
        }
    }

    // MARK: Pass 3: references

    func setReferences() throws {
        for (object, key, target, node) in pendingReferences {
            var targetID: ObjectID?
            if let target {
                guard let id = try resolve(target) else {
                    conflict(node, "\(key) refers to \(target), which does not exist", key: key)
                    continue
                }
                targetID = id
            }
            try context.setRelated(object, key, to: targetID)
        }
        pendingReferences.removeAll()
    }
}
