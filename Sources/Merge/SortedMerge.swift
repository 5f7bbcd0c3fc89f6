import ObjectGraph
import Primitives

/// How incoming objects of one entity are shaped: which attributes they carry, and which owned
/// to-many relationships, each with its own layout.
public final class MergeLayout: Sendable {
    public let entity: Entity
    /// Attribute names, in the order of `IncomingObject.values`.
    public let keys: [String]
    /// Owned to-many relationships carried, in the order of `IncomingObject.children`.
    public let children: [(relationship: String, layout: MergeLayout)]
    /// The to-one relationship that ties these objects to their parent in the scope, if any
    /// (part of the identifier, fixed by the scope, so not compared).
    public let parentKey: String?
    /// Identifier attributes compared by the merge, with their positions in `keys`.
    let identifierKeys: [String]
    let identifierPositions: [Int]
    /// Positions in `keys` (and names) that an update may overwrite: the entity's whitelist.
    let overwritable: [(name: String, position: Int)]
    /// The attribute holding `IncomingObject.contentHash`, when the entity has one.
    let hashKey: String?

    public init(entity: Entity, keys: [String], parentKey: String? = nil,
                children: [(relationship: String, layout: MergeLayout)] = [],
                overwritable: Set<String>? = nil) throws {
        self.entity = entity
        self.keys = keys
        self.parentKey = parentKey
        self.children = children
        for key in keys where entity.attribute(key) == nil {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.attributes.map(\.name))
        }
        identifierKeys = entity.identifier.filter { $0 != parentKey }
        identifierPositions = try identifierKeys.map { key in
            guard let i = keys.firstIndex(of: key) else {
                throw ObjectGraphError.invalidOperation("merge layout of \(entity.name) lacks identifier key '\(key)'")
            }
            return i
        }
        let whitelist = overwritable ?? entity.overwritable
        self.overwritable = keys.enumerated().filter { whitelist.contains($0.element) && !entity.identifier.contains($0.element) }
            .map { ($0.element, $0.offset) }
        hashKey = entity.userInfo["hash"].flatMap { entity.attribute($0) != nil ? $0 : nil }
        self.whitelist = whitelist
        childMayOverwrite = children.map { whitelist.contains($0.relationship) }
        childInverses = children.map { entity.relationship($0.relationship)?.inverse }
        rowPositions = keys.map { entity.rowIndex(of: $0)! }
        var sources = Array(repeating: -1, count: entity.defaultRow.count)
        for (i, position) in rowPositions.enumerated() { sources[position] = i }
        rowSources = sources
        overwritableRowPositions = self.overwritable.map { entity.rowIndex(of: $0.name)! }
        parentRowPosition = parentKey.flatMap { entity.rowIndex(of: $0) }
        hashRowPosition = hashKey.flatMap { entity.rowIndex(of: $0) }
        // What an update reads of a stored object whose hash differs: the whitelist, the hash and
        // the parent, so that writing needs no second read.
        updateKeys = self.overwritable.map(\.name) + [hashKey, parentKey].compactMap { $0 }
    }

    /// Where each of `keys`, the parent key and the hash go in a stored row (computed once).
    let rowPositions: [Int]
    /// The other way round: for each position of a stored row, the index of its value among an
    /// incoming object's, or -1 where the entity's default goes.
    let rowSources: [Int]
    /// Where each of `overwritable` goes in a stored row.
    let overwritableRowPositions: [Int]
    let parentRowPosition: Int?
    let hashRowPosition: Int?
    let updateKeys: [String]

    let whitelist: Set<String>

    /// Per child relationship: whether an update may replace its members (the whitelist has
    /// it), and its inverse. Worked out once: an update asks for each child of each object.
    let childMayOverwrite: [Bool]
    let childInverses: [String?]
}

/// What one merge did, per entity.
public struct MergeTally: Sendable, Hashable, Codable {
    public var inserted = 0
    public var updated = 0
    public var deleted = 0
    public var unchanged = 0
    public init() {}

    public static func += (lhs: inout MergeTally, rhs: MergeTally) {
        lhs.inserted += rhs.inserted
        lhs.updated += rhs.updated
        lhs.deleted += rhs.deleted
        lhs.unchanged += rhs.unchanged
    }
}

/// The find-(update)-or-create-or-remove merge of docs/design.md#sorted-two-cursor-merge, generic over the entity model, with
/// the scope predicate the seed's author left out.
///
/// Both sides are sorted streams in the same order: the incoming objects sorted by their
/// identifier (UTF-8 byte order for text, exactly SQLite's BINARY collation), the stored objects
/// read by a cursor with `ORDER BY` the same keys. One pass decides each identifier: in both →
/// update the whitelisted attributes (nothing is written when nothing changed); only incoming →
/// insert; only stored → delete, if `deletable` allows it. Owned to-many relationships are merged
/// member by member the same way, never deleted and re-inserted wholesale.
public final class SortedMerge {
    public let context: ObjectContext
    /// Values set on every inserted top-level object (for example the source that created it).
    let insertValues: [String: Value]
    /// Attributes read from stored objects for `deletable`.
    let deletableKeys: [String]
    let deletable: (FetchedObject) -> Bool
    /// Stamps written with the updates of each entity, by entity name.
    let stamps: [String: UpdateStamp]
    /// Tallies per entity name.
    public private(set) var tallies: [String: MergeTally] = [:]
    /// When true, each merge keeps the incoming objects it resolved (to insert them or compare
    /// them with their stored rows) in `resolved`, by their index in its `incoming`, until the
    /// next merge: a caller that makes more of the same objects (the resolution of a shared
    /// channel, from the block just merged) takes them from there instead of decoding them again.
    public var keepsResolved = false
    public private(set) var resolved: [Int: IncomingObject] = [:]

    public init(context: ObjectContext, insertValues: [String: Value] = [:], deletableKeys: [String] = [],
                deletable: @escaping (FetchedObject) -> Bool = { _ in true },
                stamps: [String: UpdateStamp] = [:]) {
        self.context = context
        self.stamps = stamps
        self.insertValues = insertValues
        self.deletableKeys = deletableKeys
        self.deletable = deletable
    }

    /// What the walk of `merge` decided for one identifier, done in the walk's order once the
    /// stored side is read.
    private enum Step {
        case update(incoming: Int, stored: FetchedObject)
        case insert(incoming: Int)
        case delete(ObjectID)
    }

    /// Merges `incoming` (sorted by identifier, strictly increasing) into the stored objects of
    /// `layout.entity` that match `scope`, under `parent` when the layout has a parent key.
    ///
    /// The walk over both sides decides first and writes nothing; then the stored objects whose
    /// hash differs are read back at once, with their members (`StoredAtOnce`: a few queries
    /// instead of three per object), and the steps are done in the walk's order.
    /// `beforeResolving` is told, before any is, which incoming objects will be resolved (their
    /// indices, in order): where they are made from can be read at once too.
    @discardableResult
    public func merge(_ layout: MergeLayout, incoming: [IncomingObject], scope: ObjectPredicate, parent: ObjectID?,
                      isTopLevel: Bool = true, beforeResolving: (([Int]) throws -> Void)? = nil) throws -> MergeTally {
        var tally = MergeTally()
        let entity = layout.entity
        if keepsResolved { resolved.removeAll(keepingCapacity: true) }
        var steps: [Step] = []
        var storedKeys = layout.identifierKeys
        if let hashKey = layout.hashKey { storedKeys.append(hashKey) }
        else { storedKeys += layout.overwritable.map(\.name).filter { !storedKeys.contains($0) } }
        if isTopLevel { storedKeys += deletableKeys.filter { !storedKeys.contains($0) } }
        let cursor = try context.fetch(entity.name, where: scope, orderBy: layout.identifierKeys.map { SortKey($0) }, keys: storedKeys)
        // Stored values come in the order of `storedKeys`: the identifier first, then the hash.
        let identifierCount = layout.identifierKeys.count
        let hashIndex = layout.hashKey.flatMap { storedKeys.firstIndex(of: $0) }

        // The stored side is read in place: its identifier into `storedKey` (and the one before,
        // for the order check, into `previousKey`, swapped rather than copied), its hash when
        // compared; an object is built only for a row that is updated or deleted.
        var hasStored = try cursor.step()
        var storedKey = [Value](repeating: .null, count: identifierCount)
        var previousKey = storedKey
        var hasPreviousKey = false
        func loadStoredKey() { for k in 0..<identifierCount { storedKey[k] = cursor.value(at: k) } }
        if hasStored { loadStoredKey() }
        var index = 0
        var previousIncoming: Int?
        while index < incoming.count || hasStored {
            var order = 0
            if index == incoming.count {
                order = 1
            } else if hasStored {
                order = compare(incoming[index], layout, storedKey)
            } else {
                order = -1
            }
            if order <= 0 {
                if let p = previousIncoming, compareIncoming(incoming[p], incoming[index], layout) >= 0 {
                    throw ObjectGraphError.notSorted(entity: entity.name, previous: describe(identifier(of: incoming[p], layout)),
                                                     next: describe(identifier(of: incoming[index], layout)), side: "incoming")
                }
                previousIncoming = index
            }
            if order >= 0, hasStored {
                if hasPreviousKey, compareKeys(previousKey, storedKey) >= 0 {
                    throw ObjectGraphError.notSorted(entity: entity.name, previous: describe(previousKey), next: describe(storedKey), side: "stored")
                }
            }
            switch order {
            case 0:
                if let hashIndex, let hash = incoming[index].contentHash, cursor.value(at: hashIndex) == .integer(hash) {
                    tally.unchanged += 1
                } else {
                    steps.append(.update(incoming: index, stored: cursor.current()))
                }
                index += 1
            case -1:
                steps.append(.insert(incoming: index))
                index += 1
            default:
                let stored = cursor.current()
                if !isTopLevel || deletable(stored) { steps.append(.delete(stored.id)) }
            }
            if order >= 0 {
                swap(&previousKey, &storedKey)
                hasPreviousKey = true
                hasStored = try cursor.step()
                if hasStored { loadStoredKey() }
            }
        }

        if let beforeResolving {
            try beforeResolving(steps.compactMap {
                switch $0 {
                case let .update(i, _), let .insert(i): incoming[i].resolve == nil ? nil : i
                case .delete: nil
                }
            })
        }
        let updated = steps.compactMap { if case .update(_, let stored) = $0 { stored.id.rowID } else { nil } }
        let readAtOnce = layout.hashKey != nil && !updated.isEmpty ? try StoredAtOnce(layout, rowIDs: updated, stamp: stamps[entity.name], context) : nil
        // The deleted objects' rows go at once, with what they own; observers hear of each in
        // the walk's order below.
        let deleted = steps.compactMap { if case .delete(let id) = $0 { id } else { nil } }
        let deletions = deleted.isEmpty ? nil : try context.deleteRows(of: deleted)
        for step in steps {
            switch step {
            case let .update(i, stored):
                if try update(stored, with: incoming[i], layout, readAtOnce, index: i) { tally.updated += 1 } else { tally.unchanged += 1 }
            case let .insert(i):
                let object = try incoming[i].resolved()
                if keepsResolved { resolved[i] = object }
                try insert(object, layout, parent: parent, isTopLevel: isTopLevel)
                tally.inserted += 1
            case let .delete(id):
                try context.completeDeletion(of: id, deletions!)
                tally.deleted += 1
            }
        }
        tallyChildInserts()
        tallies[entity.name, default: MergeTally()] += tally
        return tally
    }

    /// Incoming against a stored identifier.
    private func compare(_ object: IncomingObject, _ layout: MergeLayout, _ storedKey: [Value]) -> Int {
        for (k, position) in layout.identifierPositions.enumerated() {
            let c = Value.compare(object.values[position], storedKey[k])
            if c != 0 { return c }
        }
        return 0
    }

    private func compareKeys(_ a: [Value], _ b: [Value]) -> Int {
        for (x, y) in zip(a, b) {
            let c = Value.compare(x, y)
            if c != 0 { return c }
        }
        return 0
    }

    private func compareIncoming(_ a: IncomingObject, _ b: IncomingObject, _ layout: MergeLayout) -> Int {
        for position in layout.identifierPositions {
            let c = Value.compare(a.values[position], b.values[position])
            if c != 0 { return c }
        }
        return 0
    }

    private func identifier(of object: IncomingObject, _ layout: MergeLayout) -> [Value] {
        layout.identifierPositions.map { object.values[$0] }
    }

    // Identifiers come from the input: quote a bounded excerpt of each part.
    private func describe(_ key: [Value]) -> String { key.map { $0.description.excerpt() }.joined(separator: "/") }

    /// What inserting objects of one layout starts from: a row of the entity's defaults, with
    /// `insertValues` over them for a top-level object, and where each position's value comes
    /// from among an incoming object's (-1: from the template).
    private final class InsertTemplate {
        let layout: MergeLayout
        let isTopLevel: Bool
        let row: [Value]
        let sources: [Int]
        /// Positions of `row` that hold a value (not null) no incoming value replaces.
        let fixed: [Int]
        /// Positions whose value comes from an incoming object's.
        let sourced: [Int]
        /// Inserted members per child layout since the merge began (told to `tallies` at its end).
        /// Unchecked: counted in place for each object, never while it is read.
        @exclusivity(unchecked) var childInserts: [Int]

        init(_ layout: MergeLayout, isTopLevel: Bool, insertValues: [String: Value]) {
            self.layout = layout
            self.isTopLevel = isTopLevel
            var row = layout.entity.defaultRow, sources = layout.rowSources
            if isTopLevel {
                for (key, value) in insertValues {
                    guard let position = layout.entity.rowIndex(of: key) else { continue }
                    row[position] = value
                    sources[position] = -1
                }
            }
            self.row = row
            self.sources = sources
            fixed = row.indices.filter { sources[$0] < 0 && !row[$0].isNull }
            sourced = sources.indices.filter { sources[$0] >= 0 }
            childInserts = Array(repeating: 0, count: layout.children.count)
        }
    }

    private var insertTemplates: [InsertTemplate] = []

    private func insertTemplate(_ layout: MergeLayout, isTopLevel: Bool) -> InsertTemplate {
        for t in insertTemplates where t.layout === layout && t.isTopLevel == isTopLevel { return t }
        let t = InsertTemplate(layout, isTopLevel: isTopLevel, insertValues: insertValues)
        insertTemplates.append(t)
        return t
    }

    /// Adds the members inserted with their owners to `tallies` (counted per layout while
    /// inserting: a dictionary keyed by entity name cost a string's hash per object).
    private func tallyChildInserts() {
        for t in insertTemplates {
            for (i, count) in t.childInserts.enumerated() where count > 0 {
                tallies[t.layout.children[i].layout.entity.name, default: MergeTally()].inserted += count
                t.childInserts[i] = 0
            }
        }
    }

    private func insert(_ object: IncomingObject, _ layout: MergeLayout, parent: ObjectID?, isTopLevel: Bool) throws {
        try insert(object, insertTemplate(layout, isTopLevel: isTopLevel), parent: parent)
    }

    private func insert(_ object: IncomingObject, _ template: InsertTemplate, parent: ObjectID?) throws {
        let layout = template.layout
        // A row of nulls, allocated once, and each value copied once into its place; the
        // parent and the hash over anything else. (Grown from empty: `init(repeating:count:)`
        // and `init(unsafeUninitializedCapacity:)` allocate through the standard library's
        // unspecialized code, which looks the storage's type up at each call, costing more
        // than the rest of making the row.)
        var row: [Value] = []
        row.reserveCapacity(template.row.count)
        for _ in 0..<template.row.count { row.append(.null) }
        // Each value goes over a null: initialized in place, as no null needs destroying.
        row.withUnsafeMutableBufferPointer { row in
            let slots = row.baseAddress!
            template.row.withUnsafeBufferPointer { defaults in
                for position in template.fixed { (slots + position).initialize(to: defaults[position]) }
                template.sources.withUnsafeBufferPointer { sources in
                    object.values.withUnsafeBufferPointer { values in
                        for position in template.sourced {
                            let source = sources[position]
                            (slots + position).initialize(to: source < values.count ? values[source] : defaults[position])
                        }
                    }
                }
            }
        }
        if let parent, let p = layout.parentRowPosition { row[p] = .integer(parent.rowID) }
        if let hash = object.contentHash, let p = layout.hashRowPosition { row[p] = .integer(hash) }
        let id = try context.insert(into: layout.entity, row: row)
        let children = layout.children
        guard !children.isEmpty else { return }
        for i in children.indices {
            let members = object.children[i]
            guard !members.isEmpty else { continue }
            let memberTemplate = insertTemplate(children[i].layout, isTopLevel: false)
            for member in members { try insert(member, memberTemplate, parent: id) }
            template.childInserts[i] += members.count
        }
    }

    /// The stored objects an update compares (by row id, read with `layout.updateKeys` and the
    /// stamp's keys, as `update` reads them), and the members of each owned relationship the
    /// layout carries (by owner row id, in identifier order, with their identifier and
    /// whitelist): one query per entity and 4096 objects.
    private struct StoredAtOnce {
        var objects: [Int64: FetchedObject] = [:]
        /// Per `layout.children`; nil for a relationship whose members have members of their own.
        var members: [[Int64: [FetchedObject]]?] = []

        init(_ layout: MergeLayout, rowIDs: [Int64], stamp: UpdateStamp?, _ context: ObjectContext) throws {
            let chunks = rowIDs.chunks(of: 4096)
            for chunk in chunks {
                try context.fetch(layout.entity.name, where: .rowIDs(chunk), keys: layout.updateKeys + (stamp?.keys ?? [])).forEach { objects[$0.id.rowID] = $0 }
            }
            for child in layout.children {
                guard child.layout.children.isEmpty, let inverse = layout.entity.relationship(child.relationship)?.inverse else {
                    members.append(nil)
                    continue
                }
                let keys = child.layout.identifierKeys + child.layout.overwritable.map(\.name) + [inverse]
                var byOwner: [Int64: [FetchedObject]] = [:]
                for chunk in chunks {
                    // Owner first: the order of the identity index (owner, identifier), so SQLite sorts nothing.
                    try context.fetch(child.layout.entity.name, where: .isIn(inverse, chunk.map { .integer($0) }),
                                      orderBy: ([inverse] + child.layout.identifierKeys).map { SortKey($0) },
                                      keys: keys).forEach { member in
                        if let owner = member.values.last?.integerValue { byOwner[owner, default: []].append(member) }
                    }
                }
                members.append(byOwner)
            }
        }

        /// Whether merging `incoming` into `stored` (members read as above) would change nothing:
        /// the same identifiers in the same order, the same whitelisted values.
        static func same(_ incoming: [IncomingObject], _ stored: [FetchedObject], _ layout: MergeLayout) -> Bool {
            guard incoming.count == stored.count else { return false }
            let identifiers = layout.identifierPositions.count
            for (object, member) in zip(incoming, stored) {
                guard object.resolve == nil else { return false }
                for (k, position) in layout.identifierPositions.enumerated() where object.values[position] != member.values[k] { return false }
                for (j, (_, position)) in layout.overwritable.enumerated() where object.values[position] != member.values[identifiers + j] { return false }
            }
            return true
        }
    }

    /// Writes the whitelisted differences; returns whether anything changed. (The caller has
    /// compared the hashes: when the layout has one, they differ.) Owned members are merged first,
    /// so that the object's one update carries its stamp for them too.
    private func update(_ stored: FetchedObject, with incoming: IncomingObject, _ layout: MergeLayout,
                        _ readAtOnce: StoredAtOnce? = nil, index: Int? = nil) throws -> Bool {
        // With a hash, `current` is read with `layout.updateKeys` (the whitelist first, in order)
        // and the stamp's keys.
        let positional = layout.hashKey != nil
        let stamp = stamps[layout.entity.name]
        var current = stored
        if positional {
            // The content differs: read what the whitelist may overwrite.
            guard let full = try readAtOnce?.objects[stored.id.rowID] ?? context.object(stored.id, keys: layout.updateKeys + (stamp?.keys ?? []))
            else { return false }
            current = full
        }
        let object = try incoming.resolved()
        if keepsResolved, let index { resolved[index] = object }
        // By position in the stored row: the context neither hashes nor sorts names per update.
        var changes: [(position: Int, value: Value)] = []
        var changed: [String] = []   // attributes and owned relationships
        for (j, (name, position)) in layout.overwritable.enumerated() {
            let old = positional ? current.values[j] : current[name]
            let new = object.values[position]
            if old != new {
                changes.append((layout.overwritableRowPositions[j], new))
                changed.append(name)
            }
        }

        for (i, child) in layout.children.enumerated() where layout.childMayOverwrite[i] {
            guard let inverse = layout.childInverses[i] else { continue }
            if let stored = readAtOnce?.members[i], StoredAtOnce.same(object.children[i], stored[current.id.rowID] ?? [], child.layout) { continue }
            let members = SortedMerge(context: context)
            let t = try members.merge(child.layout, incoming: object.children[i], scope: .related(inverse, stored.id),
                                      parent: stored.id, isTopLevel: false)
            for (name, t) in members.tallies { tallies[name, default: MergeTally()] += t }
            if t.inserted + t.deleted + t.updated > 0 { changed.append(child.relationship) }
        }
        if !changed.isEmpty, let stamp {
            // The stamp's values beside the object's own, which win over them.
            for (key, value) in stamp.values(Set(changed), current) {
                guard let position = layout.entity.rowIndex(of: key) else {
                    throw ObjectGraphError.unknownKey(entity: layout.entity.name, key: key, known: layout.entity.rowKeys)
                }
                if !changes.contains(where: { $0.position == position }) { changes.append((position, value)) }
            }
        }
        if let position = layout.hashRowPosition, let hash = object.contentHash {
            if let i = changes.firstIndex(where: { $0.position == position }) { changes[i].value = .integer(hash) } else { changes.append((position, .integer(hash))) }
        }
        if !changes.isEmpty { try context.update(stored.id, of: layout.entity, changes, current: current) }
        return !changed.isEmpty
    }
}
