/// What happens to the destination objects of a relationship when its source object is deleted.
public enum DeleteRule: String, Sendable, Codable {
    /// Delete the destination objects too: the source owns them. Removing a member from an owning
    /// to-many relationship deletes that member, since an owned object cannot live on its own.
    case cascade
    /// Clear the destination objects' reference back to the deleted object.
    case nullify
    /// Refuse to delete the source while the relationship has a destination.
    case deny
}

/// The declaration of an attribute, as a module writes it.
public struct AttributeDescription: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The value type.
    public var type: AttributeType
    /// Whether it may be null.
    public var isOptional: Bool
    /// The value of a new object that does not set it.
    public var defaultValue: Value
    /// Free-form metadata, like Core Data's userInfo (for example `diff: exclude`).
    public var userInfo: [String: String]

    /// An attribute: `AttributeDescription("title", .string, optional: false)`.
    public init(_ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: Value = .null,
                userInfo: [String: String] = [:]) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.userInfo = userInfo
    }
}

/// The declaration of a relationship, as a module writes it.
public struct RelationshipDescription: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The inverse relationship's name on the destination, if any.
    public var inverse: String?
    /// Whether it holds many destination objects.
    public var isToMany: Bool
    /// What deleting the source does to the destination objects.
    public var deleteRule: DeleteRule
    /// Whether it may be null.
    public var isOptional: Bool
    /// Free-form metadata.
    public var userInfo: [String: String]

    /// A relationship; see also `toOne` and `toMany`.
    public init(_ name: String, destination: String, inverse: String?, toMany: Bool, deleteRule: DeleteRule,
                optional: Bool = true, userInfo: [String: String] = [:]) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.userInfo = userInfo
    }

    /// A to-one relationship: `.toOne("artist", "Artist", inverse: "songs")`.
    public static func toOne(_ name: String, _ destination: String, inverse: String?, deleteRule: DeleteRule = .nullify,
                             optional: Bool = true, userInfo: [String: String] = [:]) -> Self {
        .init(name, destination: destination, inverse: inverse, toMany: false, deleteRule: deleteRule,
              optional: optional, userInfo: userInfo)
    }

    /// A to-many relationship: `.toMany("songs", "Song", inverse: "artist", deleteRule: .cascade)`.
    public static func toMany(_ name: String, _ destination: String, inverse: String?, deleteRule: DeleteRule,
                              userInfo: [String: String] = [:]) -> Self {
        .init(name, destination: destination, inverse: inverse, toMany: true, deleteRule: deleteRule, userInfo: userInfo)
    }
}

/// The declaration of an entity inside one module.
///
/// As in the seeds, what the generic machinery needs to know about an entity lives in its
/// `userInfo`: `id` names its identifier keys (comma-separated attributes or to-one relationships),
/// `overwrite` the attributes an import may overwrite (its whitelist), `placeholder` marks a
/// stand-in for an entity that another module defines.
public struct EntityDescription: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The parent entity's name, for single-table inheritance.
    public var parent: String?
    /// Whether objects of exactly this entity cannot be inserted.
    public var isAbstract: Bool
    /// The attributes this declaration adds.
    public var attributes: [AttributeDescription]
    /// The relationships this declaration adds.
    public var relationships: [RelationshipDescription]
    /// Free-form metadata.
    public var userInfo: [String: String]

    /// An entity; `identifier` names the keys that identify an object, `overwritable` the attributes a merge may update.
    public init(_ name: String, parent: String? = nil, abstract: Bool = false, placeholder: Bool = false,
                identifier: [String]? = nil, overwritable: [String]? = nil,
                attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
                userInfo: [String: String] = [:]) {
        self.name = name
        self.parent = parent
        self.isAbstract = abstract
        self.attributes = attributes
        self.relationships = relationships
        var info = userInfo
        if placeholder { info[UserInfoKey.placeholder] = "true" }
        if let identifier { info[UserInfoKey.identifier] = identifier.joined(separator: ",") }
        if let overwritable { info[UserInfoKey.overwrite] = overwritable.joined(separator: ",") }
        self.userInfo = info
    }

    /// A stand-in for an entity defined by another module: it carries only the properties this
    /// module adds to that entity (local attributes, relationships into this module).
    public static func placeholder(_ name: String, attributes: [AttributeDescription] = [],
                                   relationships: [RelationshipDescription] = []) -> Self {
        .init(name, placeholder: true, attributes: attributes, relationships: relationships)
    }

    /// Whether this declaration stands in for an entity another module defines.
    public var isPlaceholder: Bool { userInfo[UserInfoKey.placeholder] == "true" }
}

/// The userInfo keys the generic machinery reads.
public enum UserInfoKey {
    /// The comma-separated identifier keys.
    public static let identifier = "id"
    /// The comma-separated attributes a merge may overwrite.
    public static let overwrite = "overwrite"
    /// `true` on a placeholder declaration.
    public static let placeholder = "placeholder"
    /// On an attribute: `true` gives it an SQL index (for fetches and deletes by that key).
    public static let index = "index"
    /// On an entity: the comma-separated columns (attributes, to-one relationships) of one more
    /// index, for a query that reads only those: SQLite answers it from the index alone, without
    /// seeking each row in the table.
    public static let coveringIndex = "coveringIndex"
    /// On an attribute or relationship: `exclude` keeps it out of diffs and change reports.
    public static let diff = "diff"
    /// On an entity: how people name one of its objects, for generated pages: comma-separated
    /// parts shown one after the other, each a `|`-separated list of attributes of which the first
    /// with a value counts (`customName|displayName|xmltvId`; `title,start`).
    public static let display = "display"
    /// On an entity: comma-separated bookkeeping attributes that generated pages fold away (with
    /// those excluded from diffs, which are derived).
    public static let details = "details"
}

/// A named, self-contained piece of a model (docs/design.md#models-from-modules).
public struct ModelModule: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The entity declarations, placeholders included.
    public var entities: [EntityDescription]

    /// A module: `ModelModule("Songs", entities: [...])`.
    public init(_ name: String, entities: [EntityDescription]) {
        self.name = name
        self.entities = entities
    }
}

func splitList(_ s: String?) -> [String]? {
    guard let s else { return nil }
    return s.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
}

extension Substring {
    func trimmingWhitespace() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
