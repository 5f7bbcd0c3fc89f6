/// Errors of diffing and applying.
public enum DiffError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The document (or the other store) was made for another model: fingerprints `expected`, `found`.
    case modelMismatch(expected: String, found: String)
    /// The entity declares no identifier keys, so its objects cannot be matched between stores.
    case noIdentifier(entity: String)
    /// Two objects of the entity share one identifier.
    case duplicateIdentifier(entity: String, id: String)
    /// A document's identifier with the wrong number of components.
    case malformedIdentifier(entity: String, id: String, expectedComponents: Int)
    /// An exclusion ("Entity.key") naming no entity and key of the model.
    case unknownExclusion(String)
    /// An exclusion naming an identifier key, which matching needs.
    case identifierExcluded(String)

    public var description: String {
        switch self {
        case let .modelMismatch(expected, found):
            "the change document was made for model \(expected), but this store's model is \(found)"
        case let .noIdentifier(entity):
            "entity '\(entity)' has no identifier keys (userInfo 'id'): its objects cannot be matched between stores"
        case let .duplicateIdentifier(entity, id):
            "two \(entity) objects share the identifier '\(id)': they cannot be matched between stores"
        case let .malformedIdentifier(entity, id, n):
            "identifier '\(id)' of \(entity) should have \(n) component\(n == 1 ? "" : "s")"
        case let .unknownExclusion(key):
            "cannot exclude '\(key)' from the diff: no such entity and key (write Entity.key)"
        case let .identifierExcluded(key):
            "cannot exclude '\(key)' from the diff: it is an identifier key, which matching needs"
        }
    }
}

/// What the diff reads of a model: for each entity, the attributes compared, the owning
/// relationships walked, the references emitted, and which entities are roots. Exclusions (model
/// metadata `diff: exclude`, or the caller's "Entity.key" set) apply to all three alike.
struct DiffSchema {
    let model: ObjectModel
    let excluded: Set<String>
    let ownedEntities: Set<String>
    /// Entities whose objects are fetched as roots: not owned, and not inside a root's fetch
    /// already (a fetch of an entity includes its sub-entities).
    let rootEntities: [Entity]

    /// Per entity: what the diff reads of it, computed once.
    private struct Plan {
        var attributes: [Attribute]
        var owning: [Relationship]
        var references: [Relationship]
    }
    private var plans: [String: Plan] = [:]

    init(model: ObjectModel, excluding: Set<String>) throws {
        self.model = model
        for key in excluding {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let e = model.entity(parts[0]),
                  e.attribute(parts[1]) != nil || e.relationship(parts[1]) != nil else {
                throw DiffError.unknownExclusion(key)
            }
            if e.identifier.contains(parts[1]) { throw DiffError.identifierExcluded(key) }
        }
        self.excluded = excluding
        var owned = Set<String>()
        for e in model.entities {
            for r in e.relationships where r.isOwning {
                owned.formUnion(model.entity(r.destination)?.descendants ?? [r.destination])
            }
        }
        ownedEntities = owned
        rootEntities = model.entities.filter { e in
            !owned.contains(e.name) && (e.parent.map { owned.contains($0) } ?? true)
        }
        for e in model.entities {
            plans[e.name] = Plan(
                attributes: e.attributes.filter { !isExcluded(e, $0.name) },
                owning: e.relationships.filter { $0.isOwning && !isExcluded(e, $0.name) },
                // Non-owning relationships emitted as references: the to-one side that holds the
                // key. The to-many side of a non-owning pair is the same fact seen from the other
                // end and is emitted there (once), which also keeps apply from writing it twice.
                references: e.relationships.filter { !$0.isOwning && !$0.isToMany && $0.storesForeignKey && !isExcluded(e, $0.name) })
        }
    }

    /// Whether a key is left out. Identifier keys never are (metadata on one is ignored): an
    /// insert must carry them and matching needs them.
    func isExcluded(_ entity: Entity, _ key: String) -> Bool {
        if entity.identifier.contains(key) { return false }
        if entity.attribute(key)?.isExcludedFromDiff == true || entity.relationship(key)?.isExcludedFromDiff == true {
            return true
        }
        // An exclusion named on an ancestor covers the inherited key.
        var current: Entity? = entity
        while let e = current {
            if excluded.contains("\(e.name).\(key)") { return true }
            current = e.parent.flatMap(model.entity)
        }
        return false
    }

    /// Attributes compared and output.
    func attributes(_ entity: Entity) -> [Attribute] { plans[entity.name]?.attributes ?? [] }

    /// Owning relationships walked by the diff (to-one and to-many).
    func owning(_ entity: Entity) -> [Relationship] { plans[entity.name]?.owning ?? [] }

    /// Non-owning to-one relationships holding the key, emitted as references.
    func references(_ entity: Entity) -> [Relationship] { plans[entity.name]?.references ?? [] }

    /// Identifier keys, or an error if the entity has none.
    func identifier(_ entity: Entity) throws -> [String] {
        guard !entity.identifier.isEmpty else { throw DiffError.noIdentifier(entity: entity.name) }
        return entity.identifier
    }

    /// How many components an identifier of `entityName` renders to (to-one keys recursively).
    func arity(_ entityName: String, depth: Int = 0) throws -> Int {
        guard let entity = model.entity(entityName) else { throw ObjectGraphError.unknownEntity(entityName, known: model.entities.map(\.name)) }
        if depth > 32 { throw DiffError.noIdentifier(entity: entityName) }
        var n = 0
        for key in try identifier(entity) {
            if let r = entity.relationship(key) { n += try arity(r.destination, depth: depth + 1) } else { n += 1 }
        }
        return n
    }

    /// Whether a root entity's identifier is all attributes, so that SQL can sort by it.
    func sortsInSQL(_ entity: Entity) -> Bool {
        entity.identifier.allSatisfy { entity.attribute($0) != nil }
    }
}

extension ObjectModel {
    /// The fingerprint of this model's schema, as `Store.fingerprint` and change documents carry it.
    public var schemaFingerprint: String { Schema(model: self).fingerprint }
}
