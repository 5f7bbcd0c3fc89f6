/// The stored rows of an owned subtree that a delete node expects, read in bulk before the node
/// is checked: the members of every owner of one level in one query (an `IN` list of owners),
/// rather than a query to resolve each member's identifier, one to read it and one per
/// relationship to list its members. Undoing a first import checks every object of the guide
/// this way (issue 33). The check itself (`Applier.deleteMismatch`) is unchanged: it reads
/// these rows where it read the store, and the store where a row is not here.
struct SubtreeRows {
    /// The owner and relationship of a member list.
    struct MemberList: Hashable {
        let owner: ObjectID
        let relationship: String
    }

    /// Objects with every attribute and foreign key, as `ObjectContext.object(_:)` reads them.
    var objects: [ObjectID: FetchedObject] = [:]
    /// Member lists, as `ObjectContext.members(of:_:)` gives them (in no particular order).
    var members: [MemberList: [ObjectID]] = [:]
    /// The objects the node's expected members resolve to, in the node's order (nil: left to
    /// `Applier.resolve`). Kept by position rather than in `Applier.resolved`: hashing every
    /// member's identifier (strings) twice cost more than finding it.
    var expectedMembers: [MemberList: [ObjectID?]] = [:]
}

extension Applier {
    /// Owners per `IN` list (`ObjectPredicate.isIn` pads lists to a power of two).
    private static let ownersPerQuery = 512

    /// Reads the subtree of the delete `node` found at `id` into `subtreeRows`, level by level,
    /// and resolves its expected members' identifiers from the rows.
    ///
    /// Only what reading the store would give is kept: a relationship is read in bulk when its
    /// destination has no sub-entities (a row then has the keys `object(_:)` reads) and the
    /// member's identifier includes its owner (so every object with that identifier is among
    /// the owner's members); an expected member is resolved here only when exactly one member
    /// row has its identifier, compared as values of the attributes' types (`Value`'s equality is
    /// SQLite's: strings by bytes). Everything else is left to the check's own queries.
    func readSubtree(of node: ObjectDiff, at id: ObjectID) throws {
        guard let current = try context.object(id) else { return }
        subtreeRows.objects[id] = current
        var level: [(node: ObjectDiff, id: ObjectID)] = [(node, id)]
        while !level.isEmpty {
            var next: [(node: ObjectDiff, id: ObjectID)] = []
            var entityNames: [String] = []
            var byEntity: [String: [(node: ObjectDiff, id: ObjectID)]] = [:]
            for owner in level {
                if byEntity[owner.id.entity] == nil { entityNames.append(owner.id.entity) }
                byEntity[owner.id.entity, default: []].append(owner)
            }
            for entityName in entityNames {
                guard let entity = model.entity(entityName) else { continue }
                for r in schema.owning(entity) {
                    next += try readMembers(r, of: byEntity[entityName] ?? [])
                }
            }
            level = next
        }
    }

    /// The members through `r` of `owners`, stored in `subtreeRows`; returns the expected delete
    /// members it resolved, with their objects (the next level).
    private func readMembers(_ r: Relationship, of owners: [(node: ObjectDiff, id: ObjectID)]) throws -> [(node: ObjectDiff, id: ObjectID)] {
        guard let inverse = model.inverse(of: r), inverse.storesForeignKey,
              let destination = model.entity(r.destination), destination.descendants.count == 1,
              let keys = try? schema.identifier(destination), keys.contains(inverse.name) else { return [] }
        var found: [Int64: [FetchedObject]] = [:]
        var start = 0
        while start < owners.count {
            let chunk = owners[start..<min(start + Self.ownersPerQuery, owners.count)]
            start += Self.ownersPerQuery
            let cursor = try context.fetch(destination.name, where: .isIn(inverse.name, chunk.map { .integer($0.id.rowID) }))
            while let member = try cursor.next() {
                guard let owner = member[inverse.name].integerValue else { continue }
                found[owner, default: []].append(member)
            }
        }
        var next: [(node: ObjectDiff, id: ObjectID)] = []
        let plan = try? IdentityPlan(destination, keys: keys, applier: self)
        for owner in owners {
            let rows = found[owner.id.rowID] ?? []
            subtreeRows.members[SubtreeRows.MemberList(owner: owner.id, relationship: r.name)] = rows.map(\.id)
            for row in rows { subtreeRows.objects[row.id] = row }
            let expected = owner.node.relationships[r.name]?.members ?? []
            guard let plan, !expected.isEmpty else { continue }
            // Each identifier's row; nil where two rows share one (then the check's query decides).
            var byIdentity: [[Value]: ObjectID?] = [:]
            for row in rows {
                let identity = plan.indices.map { row.values[$0] }
                byIdentity[identity] = byIdentity[identity] == nil ? row.id : .some(nil)
            }
            var resolvedMembers = [ObjectID?](repeating: nil, count: expected.count)
            for (position, member) in expected.enumerated() where member.change == .delete {
                guard let identity = identityValues(of: member, plan, owner: owner),
                      case let id?? = byIdentity[identity] else { continue }
                resolvedMembers[position] = id
                next.append((member, id))
            }
            subtreeRows.expectedMembers[SubtreeRows.MemberList(owner: owner.id, relationship: r.name)] = resolvedMembers
        }
        return next
    }

    /// How an entity's identifier keys map to a fetched row and to a node's identifier, worked
    /// out once per relationship read.
    private struct IdentityPlan {
        enum Part {
            case attribute(AttributeType)
            case reference(destination: String, components: Int)
        }
        let parts: [Part]
        /// The position of each key among a fetched row's values.
        let indices: [Int]
        /// The identifier's components (`DiffSchema.arity`).
        let arity: Int

        init(_ entity: Entity, keys: [String], applier: Applier) throws {
            let layoutKeys = entity.rowKeys
            var parts: [Part] = [], indices: [Int] = []
            for key in keys {
                guard let index = layoutKeys.firstIndex(of: key) else { throw DiffError.noIdentifier(entity: entity.name) }
                indices.append(index)
                if let r = entity.relationship(key) {
                    guard r.storesForeignKey else { throw DiffError.noIdentifier(entity: entity.name) }
                    parts.append(.reference(destination: r.destination, components: try applier.arity(r.destination)))
                } else if let a = entity.attribute(key) {
                    parts.append(.attribute(a.type))
                } else {
                    throw DiffError.noIdentifier(entity: entity.name)
                }
            }
            self.parts = parts
            self.indices = indices
            arity = try applier.arity(entity.name)
        }
    }

    /// The values a row holds for `node`'s identifier (`plan`): attributes coerced to their
    /// types, to-one keys as the row id of the object their part resolves to (the owner's own
    /// identifier, the owner). Nil when `resolve` would not get as far (a malformed identifier, a
    /// part that resolves to nothing): the check meets that itself.
    private func identityValues(of node: ObjectDiff, _ plan: IdentityPlan, owner: (node: ObjectDiff, id: ObjectID)) -> [Value]? {
        guard node.id.count == plan.arity else { return nil }
        var values: [Value] = []
        values.reserveCapacity(plan.parts.count)
        var k = 0
        for part in plan.parts {
            switch part {
            case .attribute(let type):
                values.append(node.id[k].coerced(to: type))
                k += 1
            case let .reference(destination, n):
                let ids = node.id[k..<(k + n)]
                k += n
                if ids.allSatisfy(\.isNull) {
                    values.append(.null)
                } else if destination == owner.node.entityName && ids.elementsEqual(owner.node.id) {
                    values.append(.integer(owner.id.rowID))
                } else {
                    guard let target = (try? resolve(ObjectReference(entityName: destination, id: Array(ids)))) ?? nil else { return nil }
                    values.append(.integer(target.rowID))
                }
            }
        }
        return values
    }
}
