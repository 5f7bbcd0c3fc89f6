import ObjectGraph

/// A change to one object as reports list it, read from the store's change stream by
/// `MergeChangeCollector`.
public struct MergeChange: Sendable {
    public var kind: ChangeKind
    public let entity: String
    public let id: ObjectID
    /// Changed attributes: name → (old, new).
    public var attributes: [(name: String, old: Value, new: Value)]
    /// Owned members added and removed, per relationship, as their identifier values.
    public var relationships: [(name: String, added: [[Value]], removed: [[Value]])]
    /// The identifier of the parent in the scope (a programme's channel id), when the importer knows it.
    public var owner: String?

    public init(kind: ChangeKind, entity: String, id: ObjectID, attributes: [(name: String, old: Value, new: Value)],
                relationships: [(name: String, added: [[Value]], removed: [[Value]])], owner: String? = nil) {
        self.kind = kind
        self.entity = entity
        self.id = id
        self.attributes = attributes
        self.relationships = relationships
        self.owner = owner
    }
}

/// The merge's changes as reports list them (`MergeChange`), read from the store's own change
/// stream: what the merge decided is recorded once, by the context, and the change file, the
/// revision stamps, the feeds to rewrite and this report all read that one record.
///
/// ```swift
/// let report = MergeChangeCollector(layouts: [programmeLayout])
/// try context.addObserver(report)
/// try SortedMerge(context: context).merge(programmeLayout, incoming: feed, scope: .all, parent: nil)
/// try context.processPendingChanges()
/// for change in report.changes { print(change.kind, change.entity, change.attributes.map(\.name)) }
/// ```
///
/// Each layout names an entity merged at the top level. Its objects are listed as the merge sees
/// them: an insert with the values of the layout's keys and its members' identifiers, an update
/// with the whitelisted attributes that changed and the members added and removed, a delete with
/// its identifier. Members (the layout's children) are listed inside their owner, and an object
/// deleted with its owner is left out (the owner's delete says it). An object inserted and then
/// completed in the same transaction is one insert. Keys the merge does not compare (a content
/// hash, revision stamps) are left out.
public final class MergeChangeCollector: ContextObserver, @unchecked Sendable {
    /// A top-level entity's layout and the place of its changes in the list.
    private struct TopLevel {
        let layout: MergeLayout
        let rank: Int
        let parentEntity: String?
        /// The place of each owned relationship in the layout, the order changes list them in.
        let childOrder: [String: Int]
    }
    /// A member entity: its layout and its owner's relationship to it.
    private struct Member {
        let layout: MergeLayout
        let relationship: String
        let ownerKey: String
        let ownerEntity: String
    }
    private struct Entry {
        var change: MergeChange
        var parent: ObjectID?
        let rank: Int
        let batch: Int
        let identifier: [Value]
    }
    private let topLevel: [String: TopLevel]
    private let members: [String: Member]
    private let topLevelNames: [String]
    private let memberNames: [String]
    private var entries: [Entry] = []
    private var position: [ObjectID: Int] = [:]
    private var deleted = Set<ObjectID>()
    private var batch = 0
    /// While set, batches are not listed (writes that are not the merge's own, made in the same
    /// transaction: a resolution of what several sources show, say).
    public var isPaused = false

    /// Collects the changes of the layouts' entities (listed in this order) and their members.
    public init(layouts: [MergeLayout]) {
        var topLevel: [String: TopLevel] = [:], members: [String: Member] = [:]
        for (rank, layout) in layouts.enumerated() {
            topLevel[layout.entity.name] = TopLevel(layout: layout, rank: rank,
                                                   parentEntity: layout.parentKey.flatMap { layout.entity.relationship($0)?.destination },
                                                   childOrder: Dictionary(uniqueKeysWithValues: layout.children.enumerated().map { ($1.relationship, $0) }))
            for (relationship, child) in layout.children {
                guard let key = child.parentKey else { continue }
                members[child.entity.name] = Member(layout: child, relationship: relationship, ownerKey: key, ownerEntity: layout.entity.name)
            }
        }
        self.topLevel = topLevel
        self.members = members
        topLevelNames = Array(topLevel.keys)
        memberNames = Array(members.keys)
    }

    /// The changes so far: by layout, then in the order of the batches, by identifier within one.
    public var changes: [MergeChange] { orderedEntries.map(\.change) }

    /// The changes with the object that owns each in the merge's scope (a programme's channel),
    /// when its layout has a parent key.
    public var changesWithParents: [(change: MergeChange, parent: ObjectID?)] { orderedEntries.map { ($0.change, $0.parent) } }

    /// The listed changes of `entity`, in no particular order (no sorting of the whole list).
    public func changes(of entity: String) -> [MergeChange] {
        entries.lazy.map(\.change).filter { $0.entity == entity && self.isListed($0) }
    }

    /// The objects of `entity` whose listed change is an update, in no particular order (for
    /// counting: no sorting of the whole list).
    public func updatedObjects(of entity: String) -> [ObjectID] {
        entries.filter { $0.change.entity == entity && $0.change.kind == .update && isListed($0.change) }.map(\.change.id)
    }

    private var orderedEntries: [Entry] {
        entries.enumerated().filter { isListed($0.element.change) }.sorted { a, b in
            let (x, y) = (a.element, b.element)
            if x.rank != y.rank { return x.rank < y.rank }
            if x.batch != y.batch { return x.batch < y.batch }
            for (u, v) in zip(x.identifier, y.identifier) {
                let c = Value.compare(u, v)
                if c != 0 { return c < 0 }
            }
            return a.offset < b.offset
        }.map(\.element)
    }

    private func isListed(_ change: MergeChange) -> Bool {
        change.kind != .update || !change.attributes.isEmpty || !change.relationships.isEmpty
    }

    /// The layouts' entities and their members; no member lists (a member's change names its owner).
    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: Set(topLevel.keys).union(members.keys), relationships: [])
    }

    /// Adds the batch's changes to the list, folding later changes of an object into its entry.
    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        if isPaused { return }
        batch += 1
        // A batch holds every observer's changes (a first import's credits and categories, say):
        // find this collector's few entities by comparing names, not hashing each change's.
        let lists = [changes.inserted, changes.updated, changes.deleted]
        func each(_ list: [ObjectChange], in names: [String], _ body: (ObjectChange, String) throws -> Void) rethrows {
            for i in list.indices {
                let id = list[i].id
                if let name = names.first(where: { id.isOf($0) }) { try body(list[i], name) }
            }
        }
        each(changes.deleted, in: topLevelNames) { change, _ in deleted.insert(change.id) }
        // Owners first, so that members find them.
        for list in lists { try each(list, in: topLevelNames) { change, name in try record(change, topLevel[name]!, context) } }
        guard !memberNames.isEmpty else { return }
        for list in lists { try each(list, in: memberNames) { change, name in try record(change, members[name]!, context) } }
    }

    private func record(_ change: ObjectChange, _ top: TopLevel, _ context: ObjectContext) throws {
        let layout = top.layout
        let parent = layout.parentKey.flatMap { key in
            top.parentEntity.flatMap { entity in change.foreignKeys[key].map { ObjectID(entity: entity, rowID: $0) } }
        }
        if let parent, deleted.contains(parent) { return }   // deleted with its owner
        let values = change.kind == .delete ? change.oldValues : change.newValues
        switch change.kind {
        case .insert:
            let attributes = layout.keys.compactMap { key in values[key].flatMap { $0.isNull ? nil : (key, Value.null, $0) } }
            add(MergeChange(kind: .insert, entity: layout.entity.name, id: change.id, attributes: attributes, relationships: []),
                parent: parent, top: top, identifier: layout.identifierKeys.map { values[$0] ?? .null })
        case .delete:
            if let i = position[change.id], entries[i].change.kind == .insert {
                // Made and removed in one transaction: nothing to list (an empty update is not listed).
                entries[i].change.kind = .update
                entries[i].change.attributes = []
                entries[i].change.relationships = []
                return
            }
            add(MergeChange(kind: .delete, entity: layout.entity.name, id: change.id,
                            attributes: layout.identifierKeys.map { ($0, values[$0] ?? .null, Value.null) }, relationships: []),
                parent: parent, top: top, identifier: layout.identifierKeys.map { values[$0] ?? .null })
        case .update:
            let old = change.oldValues
            let keys = Set(change.changedKeys)
            let changed = top.layout.overwritable.map(\.name).filter { keys.contains($0) }   // in the layout's order
            if let i = position[change.id] {
                let isInsert = entries[i].change.kind == .insert
                for key in changed {
                    let new = values[key] ?? .null
                    if let j = entries[i].change.attributes.firstIndex(where: { $0.name == key }) {
                        entries[i].change.attributes[j].new = new
                    } else {
                        entries[i].change.attributes.append((key, isInsert ? .null : old[key] ?? .null, new))
                    }
                }
                if isInsert { entries[i].change.attributes.removeAll { $0.new.isNull } }
                if entries[i].parent == nil { entries[i].parent = parent }
                return
            }
            guard !changed.isEmpty else { return }   // a hash or a stamp: nothing the merge compares
            try addUpdate(change.id, top, context, parent: parent,
                          attributes: changed.map { ($0, old[$0] ?? .null, values[$0] ?? .null) })
        }
    }

    /// A member's change, listed in its owner's change (an update of the owner when it has none yet).
    private func record(_ change: ObjectChange, _ member: Member, _ context: ObjectContext) throws {
        guard let ownerRow = change.foreignKeys[member.ownerKey], let top = topLevel[member.ownerEntity] else { return }
        let owner = ObjectID(entity: member.ownerEntity, rowID: ownerRow)
        if deleted.contains(owner) { return }
        let i: Int
        if let known = position[owner] {
            i = known
        } else {
            try addUpdate(owner, top, context, parent: nil, attributes: [])
            i = entries.count - 1
        }
        if !entries[i].change.relationships.contains(where: { $0.name == member.relationship }) {
            entries[i].change.relationships.append((member.relationship, [], []))
            entries[i].change.relationships.sort { top.childOrder[$0.name] ?? 0 < top.childOrder[$1.name] ?? 0 }
        }
        let r = entries[i].change.relationships.firstIndex { $0.name == member.relationship }!
        let identifierKeys = member.layout.identifierKeys
        switch change.kind {
        case .insert:
            let values = change.newValues
            entries[i].change.relationships[r].added.append(identifierKeys.map { values[$0] ?? .null })
        case .delete:
            let values = change.oldValues
            entries[i].change.relationships[r].removed.append(identifierKeys.map { values[$0] ?? .null })
        case .update:
            break   // a member changed in place: the relationship changed, no member came or went
        }
    }

    /// An update entry, with the identifier (read when the change does not carry it) that orders it.
    private func addUpdate(_ id: ObjectID, _ top: TopLevel, _ context: ObjectContext, parent: ObjectID?,
                           attributes: [(name: String, old: Value, new: Value)]) throws {
        let keys = top.layout.identifierKeys + (top.layout.parentKey.map { [$0] } ?? [])
        let stored = try context.object(id, keys: keys)
        let owner = parent ?? top.layout.parentKey.flatMap { stored?.related($0) }
        add(MergeChange(kind: .update, entity: top.layout.entity.name, id: id, attributes: attributes, relationships: []),
            parent: owner, top: top, identifier: top.layout.identifierKeys.map { stored?[$0] ?? .null })
    }

    private func add(_ change: MergeChange, parent: ObjectID?, top: TopLevel, identifier: [Value]) {
        position[change.id] = entries.count
        entries.append(Entry(change: change, parent: parent, rank: top.rank, batch: batch, identifier: identifier))
    }
}
