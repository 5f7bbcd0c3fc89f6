/// An attribute of a resolved entity, with the module it came from.
public struct Attribute: Sendable, Hashable {
    /// The name.
    public let name: String
    /// The value type.
    public let type: AttributeType
    /// Whether it may be null.
    public let isOptional: Bool
    /// The value of a new object that does not set it.
    public let defaultValue: Value
    /// Free-form metadata from its declaration.
    public let userInfo: [String: String]
    /// The module that declared it.
    public let module: String
    /// The entity that declares it (an ancestor for inherited attributes).
    public let declaringEntity: String

    /// Whether diffs and change reports leave it out (`diff: exclude` in its userInfo).
    public var isExcludedFromDiff: Bool { userInfo[UserInfoKey.diff] == "exclude" }
}

/// A relationship of a resolved entity, with the module it came from.
public struct Relationship: Sendable, Hashable {
    /// The name.
    public let name: String
    /// The destination entity's name.
    public let destination: String
    /// The inverse relationship's name, if any.
    public let inverse: String?
    /// Whether it holds many destination objects.
    public let isToMany: Bool
    /// What deleting the source does to the destination objects.
    public let deleteRule: DeleteRule
    /// Whether it may be null.
    public let isOptional: Bool
    /// Free-form metadata from its declaration.
    public let userInfo: [String: String]
    /// The module that declared it.
    public let module: String
    /// The entity that declares it (an ancestor for inherited relationships).
    public let declaringEntity: String
    /// Whether this side holds the SQL foreign key column (every to-one whose inverse is to-many
    /// or absent, and the owned side of a one-to-one).
    public let storesForeignKey: Bool

    /// Whether diffs and change reports leave it out (`diff: exclude` in its userInfo).
    public var isExcludedFromDiff: Bool { userInfo[UserInfoKey.diff] == "exclude" }
    /// An owning relationship: its destination objects belong to the source (cascade).
    public var isOwning: Bool { deleteRule == .cascade }
}

/// An entity of a merged model: every property resolved, inherited ones included, each with its
/// module of origin. Immutable and shared.
public final class Entity: Sendable, CustomStringConvertible {
    /// The name.
    public let name: String
    /// The module that declared it.
    public let module: String
    /// The parent entity's name, if any.
    public let parent: String?
    /// The names of the entities that inherit from it.
    public let subentities: [String]
    /// The root of its inheritance tree: the SQL table it lives in.
    public let rootName: String
    /// Whether objects of exactly this entity cannot be inserted.
    public let isAbstract: Bool
    /// Every attribute, inherited ones first.
    public let attributes: [Attribute]
    /// Every relationship, inherited ones first.
    public let relationships: [Relationship]
    /// Free-form metadata from its declaration.
    public let userInfo: [String: String]
    /// The identifier keys: attributes or to-one relationships, unique together.
    public let identifier: [String]
    /// The attributes an import may overwrite on update; nil: every attribute of the defining module.
    public let overwritable: Set<String>
    /// Names of every entity in this tree (this one and all its descendants).
    public let descendants: [String]

    let attributeIndex: [String: Int]
    let relationshipIndex: [String: Int]
    /// The keys of a stored row, in column order: every attribute, then every foreign key.
    public let rowKeys: [String]
    /// A stored row of defaults, in `rowKeys` order: each attribute's default value, every foreign
    /// key null. The start of a row for `ObjectContext.insert(into:row:)`:
    /// `var row = entity.defaultRow; row[entity.rowIndex(of: "title")!] = .string("News")`.
    public let defaultRow: [Value]
    let rowKeyIndex: [String: Int]
    /// Its position among its model's entities: where per-entity tables keep it.
    let ordinal: Int

    init(ordinal: Int, name: String, module: String, parent: String?, subentities: [String], rootName: String, isAbstract: Bool,
         attributes: [Attribute], relationships: [Relationship], userInfo: [String: String],
         identifier: [String], overwritable: Set<String>, descendants: [String]) {
        self.ordinal = ordinal
        self.name = name
        self.module = module
        self.parent = parent
        self.subentities = subentities
        self.rootName = rootName
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.userInfo = userInfo
        self.identifier = identifier
        self.overwritable = overwritable
        self.descendants = descendants
        var ai: [String: Int] = [:]
        for (i, a) in attributes.enumerated() { ai[a.name] = i }
        attributeIndex = ai
        var ri: [String: Int] = [:]
        for (i, r) in relationships.enumerated() { ri[r.name] = i }
        relationshipIndex = ri
        foreignKeys = relationships.filter(\.storesForeignKey)
        rowKeys = attributes.map(\.name) + foreignKeys.map(\.name)
        defaultRow = attributes.map(\.defaultValue) + Array(repeating: Value.null, count: foreignKeys.count)
        var rk: [String: Int] = [:]
        for (i, k) in rowKeys.enumerated() { rk[k] = i }
        rowKeyIndex = rk
    }

    /// The position of an attribute or foreign key in a stored row (`rowKeys`).
    public func rowIndex(of key: String) -> Int? { rowKeyIndex[key] }

    /// The attribute named `name`, or nil.
    public func attribute(_ name: String) -> Attribute? { attributeIndex[name].map { attributes[$0] } }
    /// The position of the attribute named `name` in `attributes`.
    public func indexOfAttribute(_ name: String) -> Int? { attributeIndex[name] }
    /// The relationship named `name`, or nil.
    public func relationship(_ name: String) -> Relationship? { relationshipIndex[name].map { relationships[$0] } }

    /// To-one relationships that hold a column, in declaration order (made once: every insert,
    /// update and delete walks them).
    public let foreignKeys: [Relationship]

    public var description: String { name }
}

/// A merged entity model: what the store, the contexts, the merge and the diff work from.
public struct ObjectModel: Sendable {
    /// Every entity, sorted by name.
    public let entities: [Entity]
    /// The names of the modules merged, in order.
    public let modules: [String]
    private let byName: [String: Entity]

    init(entities: [Entity], modules: [String]) {
        self.entities = entities
        self.modules = modules
        var map: [String: Entity] = [:]
        for e in entities { map[e.name] = e }
        byName = map
    }

    /// The entity named `name`, or nil: `model.entity("Artist")`.
    public func entity(_ name: String) -> Entity? { byName[name] }

    /// The entity, or an error naming what is known.
    public func requireEntity(_ name: String) throws -> Entity {
        guard let e = byName[name] else {
            throw ObjectGraphError.unknownEntity(name, known: entities.map(\.name))
        }
        return e
    }

    /// Root entities: one SQL table each.
    public var roots: [Entity] { entities.filter { $0.parent == nil } }

    /// Every entity of the tree rooted at `root`, root first.
    func tree(of root: Entity) -> [Entity] { root.descendants.compactMap { byName[$0] } }

    /// The relationship on the other side, if declared.
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inv = relationship.inverse else { return nil }
        return byName[relationship.destination]?.relationship(inv)
    }
}
