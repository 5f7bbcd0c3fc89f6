/// The model-driven diff of two object graphs (docs/design.md#model-driven-diff), generic over the entity model.
///
/// - Objects are matched by their entity's identifier keys; a to-one key is rendered through the
///   related object's own identifier, recursively, so row ids (which differ between databases)
///   never appear.
/// - Only owning (cascade) relationships are walked, to-one and to-many, so the inverse of an
///   owning relationship never leads back (no cycles). Non-owning relationships are emitted as
///   references (entity + identifier), never recursed.
/// - Roots are objects of entities that nothing owns; they are streamed from both stores sorted by
///   identifier and merged, so memory holds one root's subtree (and the output) at a time.
/// - Attributes and relationships excluded by model metadata (`diff: exclude`) or by the caller
///   (`"Entity.key"`) are left out of comparison, matching and output alike.
///
/// ```swift
/// let differ = try GraphDiff(model: store.model, excluding: ["Programme.lastSeen"])
/// let document = try differ.diff(from: yesterday, to: store)
/// try document.write(toFile: "changes.json")
/// ```
public struct GraphDiff: Sendable {
    /// The model both stores share.
    public let model: ObjectModel
    /// The caller's exclusions, as "Entity.key".
    public let excluded: Set<String>
    let schema: DiffSchema

    /// A diff of stores of `model`, leaving out the keys in `excluded` ("Entity.key") besides
    /// those the model excludes; throws `DiffError` for an unknown or identifier key.
    ///
    /// ```swift
    /// let differ = try GraphDiff(model: model)
    /// ```
    public init(model: ObjectModel, excluding excluded: Set<String> = []) throws {
        self.model = model
        self.excluded = excluded
        self.schema = try DiffSchema(model: model, excluding: excluded)
    }

    /// Whether a key takes part in the diff.
    public func includes(_ entityName: String, _ key: String) -> Bool {
        guard let e = model.entity(entityName) else { return false }
        return !schema.isExcluded(e, key)
    }

    /// The root entities, in the order their diffs come.
    public var rootEntityNames: [String] { schema.rootEntities.map(\.name) }

    // MARK: Public entry points

    /// Diffs two stores of the same model: what turns `old` into `new`.
    public func diff(from old: Store, to new: Store) throws -> ChangeDocument {
        guard old.fingerprint == new.fingerprint else {
            throw DiffError.modelMismatch(expected: old.fingerprint, found: new.fingerprint)
        }
        if old === new { return ChangeDocument(model: old.fingerprint, excluded: Array(excluded), changes: []) }
        let changes = try old.read { a in try new.read { b in try diff(from: a, to: b) } }
        return ChangeDocument(model: old.fingerprint, excluded: Array(excluded), changes: changes)
    }

    /// Diffs two read (or write) contexts, collecting every root's diff.
    public func diff(from old: ObjectContext, to new: ObjectContext) throws -> [ObjectDiff] {
        var out: [ObjectDiff] = []
        try diff(from: old, to: new) { out.append($0) }
        return out
    }

    /// Diffs two contexts, handing each root's diff to `body` as soon as it is known (roots in
    /// root-entity order, then identifier order): for change files that need not fit in memory.
    ///
    /// `comparing`, when given, limits the roots present on both sides that are walked (the
    /// importer knows which it touched): roots only on one side are always reported.
    ///
    /// `touched`, when given, holds per entity name the row ids of the objects written between
    /// `old` and `new` (see `TouchedObjectsObserver`; valid only when `new` is `old` changed
    /// through contexts, since it relies on row ids): members of those entities under an owner
    /// present on both sides are then walked only if touched, so a change file costs what
    /// changed, not the size of the changed channels. Under an owner present on one side only,
    /// every member is walked (they were inserted or deleted with it).
    public func diff(from old: ObjectContext, to new: ObjectContext,
                     comparing: ((_ entityName: String, _ id: [IdentifierComponent]) -> Bool)? = nil,
                     touched: [String: Set<Int64>]? = nil,
                     each body: (ObjectDiff) throws -> Void) throws {
        let walker = Walker(schema: schema, old: IdentityRenderer(context: old, schema: schema),
                            new: IdentityRenderer(context: new, schema: schema), touched: touched ?? [:])
        for entity in schema.rootEntities {
            let a = try RootStream(entity: entity, renderer: walker.old)
            let b = try RootStream(entity: entity, renderer: walker.new)
            var x = try a.next(), y = try b.next()
            while x != nil || y != nil {
                let order: Int
                if let x, let y { order = compareIdentifiers(x.id, y.id) } else { order = x == nil ? 1 : -1 }
                let nodes: [ObjectDiff]
                if order < 0 {
                    nodes = try walker.pair(old: x!.object, new: nil, id: x!.id)
                    x = try a.next()
                } else if order > 0 {
                    nodes = try walker.pair(old: nil, new: y!.object, id: y!.id)
                    y = try b.next()
                } else {
                    if let comparing, !comparing(entity.name, x!.id) {
                        nodes = []
                    } else {
                        nodes = try walker.pair(old: x!.object, new: y!.object, id: x!.id)
                    }
                    x = try a.next()
                    y = try b.next()
                }
                for node in nodes { try body(node) }
                walker.old.trim()
                walker.new.trim()
            }
        }
    }
}

// MARK: - Identity

/// Renders objects' identifiers in one context, caching them by row (an owner's identifier is
/// part of each member's).
final class IdentityRenderer {
    let context: ObjectContext
    let schema: DiffSchema
    private var cache: [ObjectID: [DiffValue]] = [:]

    init(context: ObjectContext, schema: DiffSchema) {
        self.context = context
        self.schema = schema
    }

    /// Members fetched ahead, a whole level of a subtree per query, by owner and relationship.
    private struct PrefetchKey: Hashable {
        let owner: ObjectID
        let relationship: String
    }
    private var prefetched: [PrefetchKey: [FetchedObject]] = [:]

    /// Bounds the cache between roots.
    func trim() {
        if cache.count > 50_000 { cache.removeAll(keepingCapacity: true) }
        prefetched.removeAll(keepingCapacity: true)
    }

    /// The object with every key of its concrete entity (a fetch of a parent entity reads only
    /// the parent's keys).
    func full(_ object: FetchedObject) throws -> FetchedObject? {
        if object.layout.entity.name == object.id.entity && object.layout.keys == object.layout.entity.rowKeys { return object }
        return try context.object(object.id)
    }

    func id(of object: FetchedObject) throws -> [DiffValue] {
        if let known = cache[object.id] { return known }
        let entity = try schema.model.requireEntity(object.id.entity)
        var out: [DiffValue] = []
        for key in try schema.identifier(entity) {
            if let r = entity.relationship(key) {
                let target = r.storesForeignKey ? object.related(key) : try context.members(of: object.id, key).first
                if let target, let id = try id(of: target) {
                    out += id
                } else {
                    out += Array(repeating: DiffValue.null, count: try schema.arity(r.destination))
                }
            } else {
                out.append(DiffValue(object[key]))
            }
        }
        cache[object.id] = out
        return out
    }

    func id(of objectID: ObjectID) throws -> [DiffValue]? {
        if let known = cache[objectID] { return known }
        guard let object = try context.object(objectID) else { return nil }
        return try id(of: object)
    }

    func reference(_ objectID: ObjectID?) throws -> ObjectReference? {
        guard let objectID, let id = try id(of: objectID) else { return nil }
        return ObjectReference(entityName: objectID.entity, id: id)
    }

    /// The members of an owning relationship, with their identifiers, sorted by identifier;
    /// only those whose row id is in `only`, when given.
    func members(of owner: FetchedObject, _ r: Relationship, only: Set<Int64>? = nil) throws -> [(id: [DiffValue], object: FetchedObject)] {
        var objects: [FetchedObject] = []
        if let only, r.isToMany, let inverse = schema.model.inverse(of: r), inverse.storesForeignKey {
            // Row ids first (an index scan), then whole rows of the touched members only.
            for member in try context.fetchAll(r.destination, where: .related(inverse.name, owner.id), keys: [])
            where only.contains(member.id.rowID) {
                if let o = try context.object(member.id) { objects.append(o) }
            }
        } else if let ahead = prefetched.removeValue(forKey: PrefetchKey(owner: owner.id, relationship: r.name)) {
            objects = ahead
        } else if r.isToMany, let inverse = schema.model.inverse(of: r), inverse.storesForeignKey {
            objects = try context.fetchAll(r.destination, where: .related(inverse.name, owner.id))
        } else {
            for id in try context.members(of: owner.id, r.name) {
                if let o = try context.object(id) { objects.append(o) }
            }
        }
        var out: [(id: [DiffValue], object: FetchedObject)] = []
        out.reserveCapacity(objects.count)
        for o in objects {
            guard let o = try full(o) else { continue }
            out.append((try id(of: o), o))
        }
        out.sort { compareIdentifiers($0.id, $1.id) < 0 }
        for (p, q) in zip(out, out.dropFirst()) where compareIdentifiers(p.id, q.id) == 0 {
            throw DiffError.duplicateIdentifier(entity: q.object.id.entity, id: canonicalIdentifier(q.id))
        }
        try prefetchMembers(of: out.map(\.object))
        return out
    }

    /// Fetches the owned to-many members of many objects at once (`owner IN (...)`, in chunks),
    /// so that a channel's programmes' credits cost a few queries, not one per programme.
    private func prefetchMembers(of objects: [FetchedObject]) throws {
        guard objects.count > 1 else { return }
        var byEntity: [String: [FetchedObject]] = [:]
        for o in objects { byEntity[o.id.entity, default: []].append(o) }
        for (name, owners) in byEntity {
            guard let entity = schema.model.entity(name) else { continue }
            for r in schema.owning(entity) where r.isToMany {
                guard let inverse = schema.model.inverse(of: r), inverse.storesForeignKey else { continue }
                var groups: [Int64: [FetchedObject]] = [:]
                var start = 0
                while start < owners.count {
                    let chunk = owners[start..<min(start + 500, owners.count)]
                    start += 500
                    let cursor = try context.fetch(r.destination, where: .isIn(inverse.name, chunk.map { .integer($0.id.rowID) }))
                    while let member = try cursor.next() {
                        if let owner = member[inverse.name].integerValue { groups[owner, default: []].append(member) }
                    }
                }
                for owner in owners {
                    prefetched[PrefetchKey(owner: owner.id, relationship: r.name)] = groups[owner.id.rowID] ?? []
                }
            }
        }
    }
}

/// The objects of one root entity, sorted by identifier: straight from an SQL cursor when the
/// identifier is made of attributes, otherwise loaded and sorted in memory.
final class RootStream {
    private let renderer: IdentityRenderer
    private let entity: Entity
    private var cursor: ObjectCursor?
    private var sorted: [(id: [DiffValue], object: FetchedObject)] = []
    private var position = 0
    private var previous: [DiffValue]?

    init(entity: Entity, renderer: IdentityRenderer) throws {
        self.renderer = renderer
        self.entity = entity
        let context = renderer.context
        if renderer.schema.sortsInSQL(entity) {
            cursor = try context.fetch(entity.name, orderBy: entity.identifier.map { SortKey($0) })
        } else {
            let all = try context.fetchAll(entity.name)
            for o in all where !renderer.schema.ownedEntities.contains(o.id.entity) {
                guard let o = try renderer.full(o) else { continue }
                sorted.append((try renderer.id(of: o), o))
            }
            sorted.sort { compareIdentifiers($0.id, $1.id) < 0 }
        }
    }

    func next() throws -> (id: [DiffValue], object: FetchedObject)? {
        var item: (id: [DiffValue], object: FetchedObject)?
        if let cursor {
            while item == nil, let o = try cursor.next() {
                if renderer.schema.ownedEntities.contains(o.id.entity) { continue }
                guard let o = try renderer.full(o) else { continue }
                item = (try renderer.id(of: o), o)
            }
        } else if position < sorted.count {
            item = sorted[position]
            position += 1
        }
        guard let item else { return nil }
        if let previous, compareIdentifiers(previous, item.id) >= 0 {
            throw DiffError.duplicateIdentifier(entity: item.object.id.entity, id: canonicalIdentifier(item.id))
        }
        previous = item.id
        return item
    }
}

// MARK: - Walking

final class Walker {
    let schema: DiffSchema
    let old: IdentityRenderer
    let new: IdentityRenderer
    /// Row ids of the objects written between the two sides, per entity name (see `diff`).
    let touched: [String: Set<Int64>]

    init(schema: DiffSchema, old: IdentityRenderer, new: IdentityRenderer, touched: [String: Set<Int64>] = [:]) {
        self.schema = schema
        self.old = old
        self.new = new
        self.touched = touched
    }

    /// The diffs of two matched objects (either may be absent). Objects of different entities
    /// under one identifier are a delete and an insert.
    func pair(old o: FetchedObject?, new n: FetchedObject?, id: [DiffValue]) throws -> [ObjectDiff] {
        if let o, let n, o.id.entity != n.id.entity {
            return try [node(old: o, new: nil, id: id), node(old: nil, new: n, id: id)].compactMap { $0 }
        }
        return try node(old: o, new: n, id: id).map { [$0] } ?? []
    }

    private func node(old o: FetchedObject?, new n: FetchedObject?, id: [DiffValue]) throws -> ObjectDiff? {
        guard let any = n ?? o else { return nil }
        let entity = try schema.model.requireEntity(any.id.entity)
        let kind: ChangeKind = o == nil ? .insert : (n == nil ? .delete : .update)

        var attributes: [String: AttributeChange] = [:]
        for a in schema.attributes(entity) {
            let ov = o?[a.name] ?? .null, nv = n?[a.name] ?? .null
            // Insert and delete: every non-null value (an absent attribute was null,
            // docs/design.md#model-driven-diff); update: what changed.
            if ov != nv { attributes[a.name] = AttributeChange(old: ov, new: nv) }
        }

        var relationships: [String: RelationshipDiff] = [:]
        for r in schema.references(entity) {
            let oref = try o.flatMap { try old.reference($0.related(r.name)) }
            let nref = try n.flatMap { try new.reference($0.related(r.name)) }
            if oref != nref {
                relationships[r.name] = RelationshipDiff(added: nref.map { [$0] } ?? [], removed: oref.map { [$0] } ?? [])
            }
        }
        for r in schema.owning(entity) {
            // Under an owner on both sides, untouched members are equal on both: skip them.
            let only = o != nil && n != nil ? touched[r.destination] : nil
            let oms = try o.map { try old.members(of: $0, r, only: only) } ?? []
            let nms = try n.map { try new.members(of: $0, r, only: only) } ?? []
            var members: [ObjectDiff] = []
            var i = 0, j = 0
            while i < oms.count || j < nms.count {
                let order = i == oms.count ? 1 : (j == nms.count ? -1 : compareIdentifiers(oms[i].id, nms[j].id))
                if order < 0 {
                    members += try pair(old: oms[i].object, new: nil, id: oms[i].id); i += 1
                } else if order > 0 {
                    members += try pair(old: nil, new: nms[j].object, id: nms[j].id); j += 1
                } else {
                    members += try pair(old: oms[i].object, new: nms[j].object, id: oms[i].id); i += 1; j += 1
                }
            }
            if !members.isEmpty { relationships[r.name] = RelationshipDiff(members: members) }
        }

        if kind == .update && attributes.isEmpty && relationships.isEmpty { return nil }
        return ObjectDiff(entityName: entity.name, id: id, change: kind, attributes: attributes, relationships: relationships)
    }
}
