import Foundation
import Primitives

/// The old and new value of one attribute; an absent value is `null`.
///
/// ```swift
/// let renamed = AttributeChange(old: .string("BBC 1"), new: .string("BBC One"))
/// ```
public struct AttributeChange: Sendable, Codable, Equatable, Hashable {
    /// The value before (null for an insert).
    public var old: DiffValue
    /// The value after (null for a delete).
    public var new: DiffValue
    /// A change from `old` to `new`.
    public init(old: DiffValue, new: DiffValue) {
        self.old = old
        self.new = new
    }
    /// A change from `old` to `new`, from the store's values.
    public init(old: Value, new: Value) {
        self.init(old: DiffValue(old), new: DiffValue(new))
    }
    /// The change that undoes this one (old and new swapped).
    public var inverted: AttributeChange { AttributeChange(old: new, new: old) }
    /// Becomes the change that undoes it.
    mutating func invert() { swap(&old, &new) }

    private enum CodingKeys: String, CodingKey { case old, new }

    /// An absent side is null (compact change files leave an insert's old side out).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        old = try c.decodeIfPresent(DiffValue.self, forKey: .old) ?? .null
        new = try c.decodeIfPresent(DiffValue.self, forKey: .new) ?? .null
    }
}

/// A reference to an object that is not recursed into: its entity and identifier.
///
/// ```swift
/// let channel = ObjectReference(entityName: "Channel", id: [DiffValue(.string("bbc1.uk"))])
/// ```
public struct ObjectReference: Sendable, Codable, Equatable, Hashable, CustomStringConvertible {
    /// The referenced object's entity.
    public var entityName: String
    /// Its identifier (its entity's identifier keys).
    public var id: [IdentifierComponent]
    /// A reference to the object `id` of `entityName`.
    public init(entityName: String, id: [IdentifierComponent]) {
        self.entityName = entityName
        self.id = id
    }
    public var description: String { "\(entityName)[\(canonicalIdentifier(id))]" }
}

/// The change of one relationship of one object.
///
/// - An owning (cascade) relationship lists the diffs of its members that changed (`members`),
///   matched by the destination's identifier; a to-one owning relationship has at most two (the
///   old member deleted, the new one inserted) or one update.
/// - A non-owning relationship (nullify, deny) is never recursed: the referenced objects are listed
///   as `added` and `removed` references. For a to-one, `removed` holds the old reference and
///   `added` the new one.
///
/// ```swift
/// let moved = RelationshipDiff(added: [newChannel], removed: [oldChannel])
/// ```
public struct RelationshipDiff: Sendable, Codable, Equatable {
    /// The changed members of an owning relationship.
    public var members: [ObjectDiff]
    /// Objects a non-owning relationship now refers to.
    public var added: [ObjectReference]
    /// Objects a non-owning relationship no longer refers to.
    public var removed: [ObjectReference]

    /// The change of one relationship: changed members, or references added and removed.
    public init(members: [ObjectDiff] = [], added: [ObjectReference] = [], removed: [ObjectReference] = []) {
        self.members = members
        self.added = added
        self.removed = removed
    }

    /// True when nothing changed.
    public var isEmpty: Bool { members.isEmpty && added.isEmpty && removed.isEmpty }

    /// The change that undoes this one: members inverted, added and removed swapped.
    public var inverted: RelationshipDiff {
        var inverse = self
        inverse.invert()
        return inverse
    }

    /// Becomes the change that undoes it, in place.
    mutating func invert() {
        for i in members.indices { members[i].invert() }
        swap(&added, &removed)
    }

    private enum CodingKeys: String, CodingKey { case members, added, removed }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        members = try c.decodeIfPresent(NodeList.self, forKey: .members)?.nodes ?? []
        added = try c.decodeIfPresent([ObjectReference].self, forKey: .added) ?? []
        removed = try c.decodeIfPresent([ObjectReference].self, forKey: .removed) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if !members.isEmpty { try c.encode(members, forKey: .members) }
        if !added.isEmpty { try c.encode(added, forKey: .added) }
        if !removed.isEmpty { try c.encode(removed, forKey: .removed) }
    }
}

/// The change of one object (the design's (docs/design.md#model-driven-diff) diff node), with its owned members' changes nested.
///
/// - insert: every attribute whose value is not null (old `null`), every reference as `added`,
///   every owned member as an insert — enough to create the object elsewhere.
/// - delete: every attribute whose value is not null (new `null`), every reference as `removed`,
///   every owned member as a delete — enough to check that what is deleted is what was expected,
///   and to undo.
/// - update: only the attributes and references that changed, and the members that changed.
///
/// In an insert or a delete, an attribute that the diff compares but the node does not list was
/// null (as in docs/design.md#model-driven-diff, where equal values, NSNull included, are left out).
///
/// ```swift
/// let rename = ObjectDiff(entityName: "Channel", id: [DiffValue(.string("bbc1.uk"))], change: .update,
///                         attributes: ["displayName": AttributeChange(old: .string("BBC 1"), new: .string("BBC One"))])
/// ```
public struct ObjectDiff: Sendable, Codable, Equatable {
    /// Insert, update or delete.
    public typealias Kind = ChangeKind

    /// The object's entity.
    public var entityName: String
    /// The object's identifier (its entity's identifier keys).
    public var id: [IdentifierComponent]
    /// What happened to the object.
    public var change: Kind
    /// The attributes that changed (all non-null ones for an insert or a delete), by name.
    public var attributes: [String: AttributeChange]
    /// The relationships that changed, by name.
    public var relationships: [String: RelationshipDiff]
    /// Owned members (nested ones included) of an insert that were counted and not read: only in
    /// a document read for an undo that trusts the store (`ChangeDocument(contentsOfFile:readingInsertedMembers:)`).
    var unreadMembers = 0

    /// The change of one object.
    public init(entityName: String, id: [IdentifierComponent], change: Kind,
                attributes: [String: AttributeChange] = [:], relationships: [String: RelationshipDiff] = [:]) {
        self.entityName = entityName
        self.id = id
        self.change = change
        self.attributes = attributes
        self.relationships = relationships
    }

    /// The identifier as one string (components joined by `,`).
    public var canonicalID: String { canonicalIdentifier(id) }
    /// The object as a reference (entity and identifier).
    public var reference: ObjectReference { ObjectReference(entityName: entityName, id: id) }

    /// The diff that undoes this one: insert and delete swapped, old and new swapped.
    public var inverted: ObjectDiff {
        var inverse = self
        inverse.invert()
        return inverse
    }

    /// Becomes the diff that undoes it, in place: a document read for an undo is inverted without
    /// a second copy of its values (that copy doubled the undo's memory).
    mutating func invert() {
        change = switch change {
        case .insert: .delete
        case .delete: .insert
        case .update: .update
        }
        for i in attributes.values.indices { attributes.values[i].invert() }
        for i in relationships.values.indices { relationships.values[i].invert() }
    }

    /// How many nodes this diff holds, itself and nested members included.
    public var objectCount: Int {
        1 + unreadMembers + relationships.values.reduce(0) { $0 + $1.members.reduce(0) { $0 + $1.objectCount } }
    }

    /// Whether members of this node or of a nested one were counted and not read.
    var hasUnreadMembers: Bool {
        unreadMembers > 0 || relationships.values.contains { $0.members.contains(where: \.hasUnreadMembers) }
    }

    /// Whether this node changes its own object (not only owned members): an insert, a delete, or
    /// an update of attributes or references.
    public var changesItself: Bool {
        change != .update || !attributes.isEmpty || relationships.values.contains { !$0.added.isEmpty || !$0.removed.isEmpty }
    }

    /// How many objects this diff changes, nested members included (what `ApplyReport.applied`
    /// counts when everything applies).
    public var changedObjectCount: Int {
        (changesItself ? 1 : 0) + unreadMembers + relationships.values.reduce(0) { $0 + $1.members.reduce(0) { $0 + $1.changedObjectCount } }
    }

    private enum CodingKeys: String, CodingKey { case entityName, id, change, attributes, relationships }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entityName = try c.decode(String.self, forKey: .entityName)
        id = try c.decode([IdentifierComponent].self, forKey: .id)
        change = try c.decode(Kind.self, forKey: .change)
        attributes = try c.decodeIfPresent([String: AttributeChange].self, forKey: .attributes) ?? [:]
        relationships = try c.decodeIfPresent([String: RelationshipDiff].self, forKey: .relationships) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entityName, forKey: .entityName)
        try c.encode(id, forKey: .id)
        try c.encode(change, forKey: .change)
        if !attributes.isEmpty { try c.encode(attributes, forKey: .attributes) }
        if !relationships.isEmpty { try c.encode(relationships, forKey: .relationships) }
    }
}

/// A diff between two stores of one model, as a file: `{ "model": fingerprint, "changes": [...] }`.
/// Changes are the roots' diffs (objects no relationship owns), sorted by identifier within each
/// root entity; everything owned is nested inside its owner.
///
/// ```swift
/// let document = try ChangeDocument(jsonData: Data(contentsOf: URL(fileURLWithPath: "changes.json")))
/// let report = try document.apply(to: replica)
/// ```
public struct ChangeDocument: Sendable, Codable, Equatable {
    /// The fingerprint of the model's schema (`Store.fingerprint`): a document only applies to a
    /// store of the same model.
    public var model: String
    /// The caller's exclusions the diff was made with ("Entity.key", sorted); apply uses them too,
    /// so that a delete's check of the subtree ignores what the diff ignored.
    public var excluded: [String]
    /// The roots' changes, owned members nested.
    public var changes: [ObjectDiff]

    /// A document of `changes` for the model with fingerprint `model`.
    ///
    /// ```swift
    /// let document = ChangeDocument(model: store.fingerprint, changes: [rename])
    /// ```
    public init(model: String, excluded: [String] = [], changes: [ObjectDiff]) {
        self.model = model
        self.excluded = excluded.sorted()
        self.changes = changes
    }

    private enum CodingKeys: String, CodingKey { case model, excluded, changes, rows }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        model = try c.decode(String.self, forKey: .model)
        excluded = try c.decodeIfPresent([String].self, forKey: .excluded) ?? []
        // Compact rows (see `CompactRows`): their columns are read before the changes that use them.
        let forms = try c.decodeIfPresent([String: CompactRows.Form].self, forKey: .rows) ?? [:]
        if !forms.isEmpty {
            guard let box = decoder.userInfo[CompactRows.formsKey] as? CompactRows.FormsBox else {
                throw DecodingError.dataCorruptedError(forKey: .rows, in: c, debugDescription: "a change document with compact rows is read with ChangeDocument(jsonData:)")
            }
            box.forms = forms
        }
        changes = try c.decode(NodeList.self, forKey: .changes).nodes
        if !forms.isEmpty { for i in changes.indices { try CompactRows.fillIdentities(&changes[i], forms: forms, owner: nil) } }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model, forKey: .model)
        if !excluded.isEmpty { try c.encode(excluded, forKey: .excluded) }
        try c.encode(changes, forKey: .changes)
    }

    /// True when the document changes nothing.
    public var isEmpty: Bool { changes.isEmpty }

    /// The document that undoes this one: `apply(diff(a, b).inverted(), to: b)` gives back `a`.
    /// It takes this document's nodes and inverts them in place (no copy when nothing else holds
    /// the document: `undo` of a night's re-import held both, twice the file's objects).
    public consuming func inverted() -> ChangeDocument {
        var nodes = ObjectDiff.squash(changes)
        changes = []
        for i in nodes.indices { nodes[i].invert() }
        return ChangeDocument(model: model, excluded: excluded, changes: nodes)
    }

    /// Nodes, nested members included.
    public var objectCount: Int { changes.reduce(0) { $0 + $1.objectCount } }
    /// Objects changed, nested members included (an update that only holds members' changes does
    /// not count).
    public var changedObjectCount: Int { changes.reduce(0) { $0 + $1.changedObjectCount } }

    /// Pretty, key-sorted JSON (stable from run to run, so change files diff well).
    /// Written by `JSONText` in the bytes `JSONEncoder` would write with `.sortedKeys` and
    /// `.withoutEscapingSlashes` (and `.prettyPrinted` when `pretty`).
    public func jsonData(pretty: Bool = true) throws -> Data {
        var text = JSONText()
        text.raw("{")
        text.key("changes")
        text.array(changes) { $0.append($1) }
        if !excluded.isEmpty {
            text.raw(",")
            text.key("excluded")
            text.array(excluded) { $0.append(string: $1) }
        }
        text.raw(",")
        text.key("model")
        text.append(string: model)
        text.raw("}")
        guard pretty else { return Data(text.bytes) }
        var laidOut = JSONText()
        laidOut.append(prettyPrinting: text.bytes)
        return Data(laidOut.bytes)
    }

    /// Reads a document written by `jsonData(pretty:)`, `write(toFile:)` or a change file
    /// (compact sides, nodes of one object spread over the file).
    ///
    /// ```swift
    /// let document = try ChangeDocument(jsonData: data)
    /// ```
    public init(jsonData: Data) throws {
        self = try jsonData.withUnsafeBytes { try ChangeDocumentReader.document($0) }
    }

    /// Reads a document with Foundation's `JSONDecoder` (the `Decodable` conformance): what
    /// `init(jsonData:)` gives, slower; tests compare the two.
    static func decoded(_ jsonData: Data) throws -> ChangeDocument {
        let decoder = JSONDecoder()
        decoder.userInfo[CompactRows.formsKey] = CompactRows.FormsBox()
        return try decoder.decode(ChangeDocument.self, from: jsonData)
    }
}

extension ChangeDocument {
    /// Writes the document as pretty JSON, atomically (a change file is whole or absent).
    public func write(toFile path: String) throws {
        try DurableFile.replace(path, with: Array(try jsonData()))
    }

    /// Reads a change file.
    /// Reads a change file; a `JSONReadError` names the file, and the line and column where it is wrong.
    public init(contentsOfFile path: String) throws {
        try self.init(contentsOfFile: path, readingInsertedMembers: true)!   // whole: never nil
    }

    /// Reads a change file; without `readingInsertedMembers`, the owned members of its inserts
    /// are counted, not read (the objects of a first import): enough for an undo that trusts the
    /// store (`apply(in:storeIsAsExpected:)`), which deletes an inserted object with whatever it
    /// owns, and for nothing else. Nil then when a member list holds more than inserts.
    public init?(contentsOfFile path: String, readingInsertedMembers: Bool) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            guard let document = try data.withUnsafeBytes({ try ChangeDocumentReader.document($0, readingInsertedMembers: readingInsertedMembers) }) else {
                return nil
            }
            self = document
        } catch var error as JSONReadError {
            error.file = path
            throw error
        }
    }

    /// Objects inserted, updated and deleted per entity (nested members included; an update that
    /// only carries members' changes does not count): for a one-line report.
    public var counts: ChangeSummary {
        var summary = ChangeSummary()
        func visit(_ node: ObjectDiff) {
            if node.changesItself {
                switch node.change {
                case .insert: summary.counts[node.entityName, default: EntityCounts()].inserted += 1
                case .update: summary.counts[node.entityName, default: EntityCounts()].updated += 1
                case .delete: summary.counts[node.entityName, default: EntityCounts()].deleted += 1
                }
            }
            for rel in node.relationships.values { rel.members.forEach(visit) }
        }
        ObjectDiff.squash(changes).forEach(visit)
        return summary
    }
}

/// `inverted(diff)` as a free function, as the design writes it.
public func inverted(_ document: ChangeDocument) -> ChangeDocument { document.inverted() }

// MARK: - Squashing

extension ChangeDocument {
    /// The same changes with one node per object: nodes of one object that follow each other
    /// (a `ChangeRecorder` writes a root once per batch that changed it) folded in order: an
    /// insert then an update is the insert with the new values, an update then a delete the
    /// delete with the first old values, an insert then a delete nothing. A delete followed by an
    /// insert stays two nodes (`apply` deletes first). A document with one node per object, as
    /// `GraphDiff` writes it, is returned as it is.
    public func squashed() -> ChangeDocument {
        var copy = self
        copy.changes = ObjectDiff.squash(changes)
        return copy
    }
}

extension ObjectDiff {
    private struct Key: Hashable {
        let entityName: String
        let id: [DiffValue]
    }

    /// Nodes of one list (roots, or one relationship's members), each object folded into one.
    static func squash(_ nodes: [ObjectDiff]) -> [ObjectDiff] {
        var seen = Set<Key>()
        guard nodes.contains(where: { !seen.insert(Key(entityName: $0.entityName, id: $0.id)).inserted }) else { return nodes }
        var out: [ObjectDiff?] = []
        var latest: [Key: Int] = [:]
        for node in nodes {
            let key = Key(entityName: node.entityName, id: node.id)
            if let i = latest[key], let earlier = out[i] {
                switch earlier.folding(node) {
                case .folded(let result):
                    out[i] = result
                    if result == nil { latest[key] = nil }
                case .separate:
                    out.append(node)
                    latest[key] = out.count - 1
                }
            } else {
                out.append(node)
                latest[key] = out.count - 1
            }
        }
        return out.compactMap { $0 }
    }

    private enum Fold {
        case folded(ObjectDiff?)
        case separate
    }

    /// This node followed by `later`, a change of the same object.
    private func folding(_ later: ObjectDiff) -> Fold {
        var result = self
        switch (change, later.change) {
        case (.insert, .delete):
            return .folded(nil)
        case (.update, .update), (.insert, .update):
            // A later change of a member that was not read cannot be folded into it.
            if unreadMembers > 0 && later.relationships.values.contains(where: { $0.members.contains { $0.change != .insert } }) {
                return .separate
            }
            for (key, value) in later.attributes {
                let old = attributes[key]?.old ?? value.old
                if change == .insert && value.new.isNull { result.attributes[key] = nil; continue }
                result.attributes[key] = old == value.new ? nil : AttributeChange(old: old, new: value.new)
            }
        case (.update, .delete):
            result = later
            // What the update changed was, before it, its old values.
            for (key, value) in attributes {
                result.attributes[key] = value.old.isNull ? nil : AttributeChange(old: value.old, new: .null)
            }
        default:
            return .separate
        }
        let names = Set(relationships.keys).union(later.relationships.keys)
        for name in names {
            let a = relationships[name] ?? RelationshipDiff(), b = later.relationships[name] ?? RelationshipDiff()
            var merged = RelationshipDiff(members: Self.squash(a.members + b.members))
            // References are to-one: the first old one, the last new one.
            switch (change, later.change) {
            case (.update, .delete):
                merged.removed = a.removed.isEmpty ? b.removed : a.removed
            case (.insert, _):
                merged.added = b.added.isEmpty && b.removed.isEmpty ? a.added : b.added
            default:
                merged.removed = a.removed.isEmpty ? b.removed : a.removed
                merged.added = b.added.isEmpty && b.removed.isEmpty ? a.added : b.added
                if merged.added == merged.removed { merged.added = []; merged.removed = [] }
            }
            result.relationships[name] = merged.isEmpty ? nil : merged
        }
        if result.change == .update && result.attributes.isEmpty && result.relationships.isEmpty { return .folded(nil) }
        return .folded(result)
    }
}

// MARK: - Compact rows

/// The compact form of inserted and deleted objects in a change document, as `ChangeRecorder`
/// writes them: a first import is one insert per object, and repeating every attribute's name,
/// `{"new": ...}` and an identifier that nesting already implies made such a file twice the
/// guide's size.
///
/// The document's head names, per entity, the columns of its rows and the keys of its identifier:
/// `"rows": {"Category": {"columns": ["name", "lang", "position"], "id": ["programme", "name", "lang"]}}`.
/// A node `{"change": "insert", "entityName": "Category", "rows": [["Movie", "en", 1], ...]}` then
/// stands for one insert (or, with `"delete"`, one delete carrying its old values) per row: the
/// row's values in column order (null: no value) up to its last value, and, when the object has
/// references or owned members, one more element, its relationships as an `ObjectDiff` writes
/// them: an object that is not a tagged value (`DiffValue.isTaggedValue`), so it may come before
/// the last column. (A writer that does not know this form writes every column first, which reads
/// the same.) Reading expands each row to the `ObjectDiff` the full form
/// would give: its identifier from its own columns, its references' identifiers, and (for a key
/// that is neither) its owner's identifier, which the nesting gives.
enum CompactRows {
    struct Form: Codable, Sendable {
        var columns: [String]
        var id: [String]
    }

    final class FormsBox: @unchecked Sendable {
        var forms: [String: Form] = [:]
    }

    static let formsKey = CodingUserInfoKey(rawValue: "ObjectGraph.CompactRows.forms")!

    /// Fills in the identifiers of the node's compact rows (those read with an empty `id`) and of
    /// its members'; `owner` is the identifier of the node it is nested in. In place: a first
    /// import's change file holds a node per object, and copying the tree cost as much as reading it.
    static func fillIdentities(_ node: inout ObjectDiff, forms: [String: Form], owner: [IdentifierComponent]?) throws {
        if node.id.isEmpty, let form = forms[node.entityName] {
            var id: [IdentifierComponent] = []
            for key in form.id {
                if form.columns.contains(key) {
                    id.append((node.change == .delete ? node.attributes[key]?.old : node.attributes[key]?.new) ?? .null)
                } else if let reference = node.relationships[key]?.added.first ?? node.relationships[key]?.removed.first {
                    id += reference.id
                } else if let owner {
                    id += owner
                } else {
                    throw ObjectGraphError.invalidOperation("a compact row of \(node.entityName) has no value for its identifier key \(key)")
                }
            }
            node.id = id
        }
        let id = node.id
        for index in node.relationships.indices where !node.relationships.values[index].members.isEmpty {
            for i in node.relationships.values[index].members.indices {
                try fillIdentities(&node.relationships.values[index].members[i], forms: forms, owner: id)
            }
        }
    }
}

/// Nodes of a `changes` or `members` array: full nodes, and compact rows expanded to one
/// node per row.
struct NodeList: Decodable {
    var nodes: [ObjectDiff] = []

    private enum Keys: String, CodingKey { case rows, entityName, change }

    init(from decoder: any Decoder) throws {
        var list = try decoder.unkeyedContainer()
        while !list.isAtEnd {
            let element = try list.superDecoder()
            let keyed = try element.container(keyedBy: Keys.self)
            guard keyed.contains(.rows) else {
                nodes.append(try ObjectDiff(from: element))
                continue
            }
            let entityName = try keyed.decode(String.self, forKey: .entityName)
            let change = try keyed.decode(ChangeKind.self, forKey: .change)
            guard change != .update else {
                throw DecodingError.dataCorruptedError(forKey: .change, in: keyed, debugDescription: "rows stand for inserts or deletes, not updates")
            }
            guard let form = (element.userInfo[CompactRows.formsKey] as? CompactRows.FormsBox)?.forms[entityName] else {
                throw DecodingError.dataCorruptedError(forKey: .rows, in: keyed, debugDescription: "compact rows of \(entityName), which the document's rows do not describe")
            }
            var rows = try keyed.nestedUnkeyedContainer(forKey: .rows)
            while !rows.isAtEnd {
                var row = try rows.nestedUnkeyedContainer()
                var attributes: [String: AttributeChange] = [:]
                var relationships: [String: RelationshipDiff]?
                // A row may end early, its relationships (if any) after its last value: the
                // columns after it are null.
                for column in form.columns where !row.isAtEnd && relationships == nil {
                    switch try row.decode(RowElement.self) {
                    case .value(let value):
                        if !value.isNull { attributes[column] = change == .insert ? AttributeChange(old: .null, new: value) : AttributeChange(old: value, new: .null) }
                    case .relationships(let map):
                        relationships = map
                    }
                }
                if relationships == nil && !row.isAtEnd { relationships = try row.decode([String: RelationshipDiff].self) }
                nodes.append(ObjectDiff(entityName: entityName, id: [], change: change, attributes: attributes, relationships: relationships ?? [:]))
            }
        }
    }

    /// An element of a compact row before its last column: a value, or (an object that is not
    /// a tagged value) the row's relationships.
    private enum RowElement: Decodable {
        case value(DiffValue)
        case relationships([String: RelationshipDiff])

        private struct Name: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Name.self), !DiffValue.isTaggedValue(memberNames: object.allKeys.map(\.stringValue)) {
                self = .relationships(try [String: RelationshipDiff](from: decoder))
            } else {
                self = .value(try DiffValue(from: decoder))
            }
        }
    }
}
