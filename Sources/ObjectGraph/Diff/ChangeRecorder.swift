import Foundation
import Primitives

/// Writes a change document (the diff's format, `ChangeDocument`) while a store changes, from the
/// context's own change batches: what the writers decided is recorded once, as it is processed.
/// No view of the store before, no second pass over what changed.
///
/// Each batch's changes are grouped under their roots (an owned object under its owner, up to an
/// object nothing owns) and written at once, so memory holds one batch (one merged channel) at a
/// time. A root changed in several batches appears once per batch; `ChangeDocument` squashes such
/// nodes when it is read (see `ChangeDocument.squashed()`). Inserts carry only their new values and
/// deletes only their old ones (the other side is null), so a first import is one insert per
/// object with its values.
///
/// A batch of inserts whose owners come before their members (a first import's) is written as
/// it came, without the trees (`InsertedRows.swift`).
///
/// Batches of a transaction that rolls back are cut from the file again. Register it with
/// `Store.addObserver`, then `finish()` or `discard()` it; afterwards it records nothing.
public final class ChangeRecorder: ContextObserver, @unchecked Sendable {
    /// The change file being written.
    public let path: String
    private let schema: DiffSchema
    private let fingerprint: String
    /// What is read of each entity, computed once.
    private var plans: [String: EntityPlan] = [:]
    private let model: ObjectModel
    private let lock = NSLock()
    private var isOpen = true
    /// The document's bytes are made and written on a thread of their own (`DocumentWriter`):
    /// serialising a batch costs about as much as reading it, and the merge goes on meanwhile.
    /// At most `maxPendingBatches` wait for it, so memory stays bounded when the disk is slow.
    private let writer: DocumentWriter
    private let queue = DispatchQueue(label: "ObjectGraph.ChangeRecorder")
    private static let maxPendingBatches = 8
    private let pendingBatches = DispatchSemaphore(value: ChangeRecorder.maxPendingBatches)
    /// Writes batches of inserts that need no tree (`InsertedRows.swift`).
    private let insertedRows: InsertedRows
    /// Whether such batches are written as they came (tests compare with the tree's writing).
    var writesInsertsAsTheyCome = true
    /// How many batches were (for tests).
    private(set) var batchesWrittenAsTheyCame = 0
    /// Identifiers rendered so far, by object (row ids are never reused).
    private var identities: [ObjectID: [DiffValue]] = [:]
    /// Trees of batches not handed to the writer yet, each batch's apart (its runs are written as
    /// they would be alone). A re-import's batch is one channel's few changes, and waking the
    /// writer's thread for each cost the recording thread a system call a batch (a few per cent
    /// of a re-import of every channel shared), so batches go together, up to a bound.
    private var heldBatches: [[Node]] = []
    private var heldChanges = 0
    private static let maxHeldBatches = 64, maxHeldChanges = 4096

    /// Starts the document at `path` (created or truncated) for stores of `model`.
    public init(model: ObjectModel, path: String) throws {
        self.path = path
        self.model = model
        schema = try DiffSchema(model: model, excluding: [])
        fingerprint = model.schemaFingerprint
        var links: [String: (owner: String, relationship: String, key: String)] = [:]
        for e in model.entities {
            for r in schema.owning(e) {
                guard let inverse = model.inverse(of: r), inverse.storesForeignKey else { continue }
                for name in model.entity(r.destination)?.descendants ?? [r.destination] { links[name] = (e.name, r.name, inverse.name) }
            }
        }
        for e in model.entities { plans[e.name] = try EntityPlan(e, schema: schema, owner: links[e.name]) }
        var lookedUp = Set(links.values.map(\.owner))
        for plan in plans.values {
            lookedUp.formUnion(plan.references.map(\.destination))
            lookedUp.formUnion(plan.identifier.compactMap(\.destination))
        }
        for name in lookedUp { for e in model.entity(name)?.descendants ?? [name] { plans[e]?.isLookedUp = true } }
        insertedRows = InsertedRows(plans: plans)
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ObjectGraphError.invalidOperation("cannot create the change file \(path)")
        }
        writer = DocumentWriter(path: path, file: try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
        var text = JSONText()
        text.raw("{")
        text.key("model")
        text.append(string: fingerprint)
        text.raw(",")
        // The columns and identifier keys of each entity written as compact rows (`CompactRows`).
        let compact = model.entities.compactMap { e in plans[e.name].flatMap { $0.isCompactNested ? ($0, e.name) : nil } }
        if !compact.isEmpty {
            text.key("rows")
            text.raw("{")
            for (i, (plan, name)) in compact.sorted(by: { $0.1 < $1.1 }).enumerated() {
                if i > 0 { text.raw(",") }
                text.key(name)
                text.raw("{")
                text.key("columns")
                text.array(plan.rowColumns) { $0.append(string: $1.name) }
                text.raw(",")
                text.key("id")
                text.array(plan.identifier) { $0.append(string: $1.key) }
                text.raw("}")
            }
            text.raw("},")
        }
        text.key("changes")
        text.raw("[")
        writer.head(text)
    }

    /// Changes of every entity; no member lists (a member's change names its owner).
    public func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: Set(model.entities.map(\.name)), relationships: [])
    }

    /// Appends the batch's changes to the file.
    public func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        try lock.withLock {
            guard isOpen else { return }
            // A failed write fails the transaction that is still open, as a failed insert would.
            if let error = writer.failure { throw error }
            // Bounded between batches (never inside one: its references are looked up there).
            if identities.count > 200_000 { identities.removeAll(keepingCapacity: true) }
            if writesInsertsAsTheyCome && insertedRows.fits(changes) {
                // A first import's batch: written as it came, entirely on the writer's queue.
                handOverHeldBatches()
                batchesWrittenAsTheyCame += 1
                pendingBatches.wait()
                queue.async { [writer, insertedRows, pendingBatches] in
                    writer.write(changes, as: insertedRows)
                    pendingBatches.signal()
                }
                return
            }
            let roots = try BatchTree(recorder: self, context: context, changes: changes).roots
            guard !roots.isEmpty else { return }
            heldBatches.append(roots)
            heldChanges += changes.inserted.count + changes.updated.count + changes.deleted.count
            if heldBatches.count >= Self.maxHeldBatches || heldChanges >= Self.maxHeldChanges { handOverHeldBatches() }
        }
    }

    /// Gives the held batches to the writer, in order (called with `lock` held).
    private func handOverHeldBatches() {
        guard !heldBatches.isEmpty else { return }
        let batches = heldBatches
        heldBatches = []
        heldChanges = 0
        pendingBatches.wait()
        queue.async { [writer, pendingBatches] in
            for roots in batches { writer.write(roots) }
            pendingBatches.signal()
        }
    }

    public func contextDidSave(_ summary: ChangeSummary) {
        lock.withLock {
            guard isOpen else { return }
            handOverHeldBatches()
            queue.async { [writer] in writer.save() }
        }
    }

    public func contextDidRollBack() {
        lock.withLock {
            guard isOpen else { return }
            // Held batches are the rolled-back transaction's: never written.
            heldBatches = []
            heldChanges = 0
            queue.async { [writer] in writer.rollBack() }
        }
    }

    /// Ends the document, synced to disk, and stops recording; returns how many root nodes it
    /// holds (0: nothing changed).
    @discardableResult
    public func finish() throws -> Int {
        try lock.withLock {
            let wasOpen = isOpen
            if wasOpen { handOverHeldBatches() }
            isOpen = false
            return try queue.sync { try writer.finish(wasOpen: wasOpen) }
        }
    }

    /// Stops recording and removes the file.
    public func discard() {
        lock.withLock {
            isOpen = false
            heldBatches = []
            queue.sync { writer.discard() }
        }
    }

    /// The document's bytes and file, used only on the recorder's queue (`finish` and `discard`
    /// wait for it), but for `failure`, which the recording thread reads.
    private final class DocumentWriter: @unchecked Sendable {
        let path: String
        private var file: FileHandle?
        /// What is not in the file yet: batches are written straight into it, and it into the
        /// file when it holds a megabyte.
        private var text = JSONText()
        /// Buffers of `InsertedRows`, kept from batch to batch.
        private var scratch = InsertedRows.Scratch()
        /// Bytes written to the file, and in all (file and text).
        private var flushed: UInt64 = 0
        private var written: UInt64 { flushed + UInt64(text.count) }
        /// The length and node count at the last commit: a rollback goes back there.
        private var savedLength: UInt64 = 0
        private var savedNodes = 0
        private var nodes = 0
        private let failureLock = NSLock()
        private var firstFailure: (any Error)?

        init(path: String, file: FileHandle) {
            self.path = path
            self.file = file
        }

        var failure: (any Error)? { failureLock.withLock { firstFailure } }

        /// Records the first error; the next batch's recording throws it.
        func fail(_ error: any Error) { failureLock.withLock { firstFailure = firstFailure ?? error } }

        func head(_ head: JSONText) {
            text.append(json: head)
            savedLength = written
        }

        func write(_ roots: [Node]) {
            guard file != nil, failure == nil else { return }
            Node.forEachRun(roots) { run in
                if nodes > 0 { text.raw(",") }
                Node.write(run, into: &text)
                nodes += 1
            }
            flushWhenFull()
        }

        /// Appends a batch that `rows` fits: its elements of the document's `changes` array.
        func write(_ changes: ChangeBatch, as rows: InsertedRows) {
            guard file != nil, failure == nil else { return }
            let start = text.count
            if nodes > 0 { text.raw(",") }
            do {
                let elements = try rows.render(changes, into: &text, scratch: &scratch)
                if elements == 0 { text.truncate(to: start) }
                nodes += elements
            } catch {
                text.truncate(to: start)
                fail(error)
            }
            flushWhenFull()
        }

        private func flushWhenFull() {
            if text.count > 1 << 20 {
                do { try flush() } catch { fail(error) }
            }
        }

        func save() {
            savedLength = written
            savedNodes = nodes
        }

        func rollBack() {
            guard file != nil else { return }
            if savedLength >= flushed {
                text.truncate(to: Int(savedLength - flushed))
            } else {
                text.removeAll()
                try? file?.truncate(atOffset: savedLength)
                try? file?.seek(toOffset: savedLength)
                flushed = savedLength
            }
            nodes = savedNodes
        }

        func finish(wasOpen: Bool) throws -> Int {
            guard wasOpen, file != nil else { return savedNodes }
            if let failure { throw failure }
            text.raw("]}")
            try flush()
            try file?.synchronize()
            try file?.close()
            file = nil
            return nodes
        }

        func discard() {
            try? file?.close()
            file = nil
            try? FileManager.default.removeItem(atPath: path)
        }

        private func flush() throws {
            guard text.count > 0, let file else { return }
            try text.withBytes { try file.write(contentsOf: UnsafeRawBufferPointer($0)) }
            // On its way to the disk at once, so that the final sync (`finish`, after the
            // store's commit) waits for the last megabyte, not for the whole file.
            DurableFile.startWriteBack(file.fileDescriptor, offset: Int(flushed), count: text.count)
            flushed += UInt64(text.count)
            text.removeAll()
        }
    }

    // MARK: One batch as trees of nodes

    /// What the recorder reads of one entity: positions in its rows (`Entity.rowKeys` order,
    /// as inserts and deletes carry them). A class, so that looking one up per change copies no
    /// arrays; not changed once the recorder is made.
    final class EntityPlan: @unchecked Sendable {
        let entity: Entity
        let rowKeys: [String]
        /// Compared attributes, sorted by name (the order JSON's sorted keys need).
        let attributes: [(name: String, index: Int)]
        let comparedNames: Set<String>
        /// References written as such, sorted by name: not the one to the owner (the nesting
        /// says it, and `apply` sets it from there).
        let references: [(name: String, destination: String, index: Int)]
        let owner: (entity: String, relationship: String, key: String, index: Int)?
        let identifier: [(key: String, index: Int, destination: String?)]
        /// Whether its inserts are written as compact rows (`CompactRows`) when nested in their
        /// owner's node, and at the top level: every identifier key is a column of the row, or
        /// (nested only) the key to the owner, whose identifier the nesting gives.
        let isCompactNested: Bool
        let isCompactAtRoot: Bool
        /// A compact row's columns: the attributes that always have a value first, then the
        /// indexed ones (rows are looked up by them, so nearly every row has one: a programme's
        /// `source`), the rest in the model's order. A row ends at its last value (its
        /// relationships, if any, after it), so the nulls most rows have come last.
        let rowColumns: [(name: String, index: Int)]
        /// Whether a row's relationships may follow its last value before the last column: true
        /// unless a relationship is named like a value's tag (`date`), when they would read alike.
        let endsBeforeRelationships: Bool
        /// `rowColumns`' positions in a row.
        let rowColumnIndices: [Int]
        /// `writeRunHead(.insert, into:)`'s bytes, written once (a first import writes a run per owner).
        let insertRunHead: JSONText
        /// Whether a batch may look its objects up by id: as an owner, a reference's target or
        /// part of an identifier (set once every plan is made). Only such objects' rows are kept
        /// by id while a batch is read.
        var isLookedUp = false

        /// Values in `rowKeys` order (inserts and deletes carry every key in that order).
        func row(_ values: [Value], of change: ObjectChange) -> [Value] { row(values, keys: change.changedKeys) }

        /// Values in `rowKeys` order from `values` of `keys`.
        func row(_ values: [Value], keys: [String]) -> [Value] {
            if values.count == rowKeys.count && keys == rowKeys { return values }
            return rowKeys.map { key in keys.firstIndex(of: key).flatMap { $0 < values.count ? values[$0] : nil } ?? .null }
        }

        /// A compact row's values in `rowColumns` order (dates as seconds), after its `[`; returns
        /// where its last non-null value ends, for a row with no relationships to stop there.
        func writeValues(of row: [Value], into text: inout JSONText) -> Int {
            var written = text.count
            var first = true
            for index in rowColumnIndices {
                // The common kinds written here, the rest as `DiffValue` writes them.
                switch row[index] {
                case .null:
                    if first { text.raw("null") } else { text.raw(",null") }
                    first = false
                    continue
                case .string(let s):
                    if first { text.append(string: s) } else { text.append(string: s, after: ",") }
                case .integer(let n):
                    if first { text.append(integer: n) } else { text.append(integer: n, after: ",") }
                case .bool(let b):
                    if first { text.raw(b ? "true" : "false") } else { text.raw(b ? ",true" : ",false") }
                case .date(let seconds):
                    if first { text.append(integer: seconds, after: "{\"date\":") } else { text.append(integer: seconds, after: ",{\"date\":") }
                    text.raw("}")
                case let value:
                    if !first { text.raw(",") }
                    text.append(DiffValue(value))
                }
                first = false
                written = text.count
            }
            return written
        }

        /// The head of a run of compact rows of this entity, up to its rows' `[`.
        func writeRunHead(_ change: ChangeKind, into text: inout JSONText) {
            if change == .insert { return text.append(json: insertRunHead) }
            Self.writeRunHead(change, entity: entity.name, into: &text)
        }

        private static func writeRunHead(_ change: ChangeKind, entity: String, into text: inout JSONText) {
            text.raw("{")
            text.key("change")
            text.append(string: change.rawValue)
            text.raw(",")
            text.key("entityName")
            text.append(string: entity)
            text.raw(",")
            text.key("rows")
            text.raw("[")
        }

        init(_ entity: Entity, schema: DiffSchema, owner: (owner: String, relationship: String, key: String)?) throws {
            self.entity = entity
            rowKeys = entity.rowKeys
            let position = Dictionary(entity.rowKeys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            attributes = schema.attributes(entity).compactMap { a in position[a.name].map { (a.name, $0) } }.sorted { $0.name < $1.name }
            comparedNames = Set(attributes.map(\.name))
            references = schema.references(entity).filter { $0.name != owner?.key }
                .compactMap { r in position[r.name].map { (r.name, r.destination, $0) } }.sorted { $0.name < $1.name }
            self.owner = owner.flatMap { o in position[o.key].map { (o.owner, o.relationship, o.key, $0) } }
            let identifierKeys = try schema.identifier(entity)
            identifier = identifierKeys.compactMap { key in
                position[key].map { (key, $0, entity.relationship(key)?.destination) }
            }
            func rank(_ name: String) -> Int {
                guard let attribute = entity.attribute(name) else { return 2 }
                if !attribute.isOptional { return 0 }
                return attribute.userInfo[UserInfoKey.index] == "true" ? 1 : 2
            }
            rowColumns = attributes.sorted { a, b in
                let (aRank, bRank) = (rank(a.name), rank(b.name))
                return aRank != bRank ? aRank < bRank : a.index < b.index
            }
            endsBeforeRelationships = !entity.relationships.contains { DiffValue.isTag($0.name) }
            rowColumnIndices = rowColumns.map(\.index)
            var head = JSONText()
            Self.writeRunHead(.insert, entity: entity.name, into: &head)
            insertRunHead = head
            let columns = comparedNames, ownerKey = self.owner?.key
            isCompactAtRoot = identifier.count == identifierKeys.count && identifierKeys.allSatisfy { columns.contains($0) }
            isCompactNested = identifier.count == identifierKeys.count
                && identifierKeys.allSatisfy { columns.contains($0) || $0 == ownerKey }
        }
    }

    /// A node being built: an object's change, its members' nodes nested.
    final class Node: @unchecked Sendable {   // handed to the writer whole, never changed after
        let plan: EntityPlan
        /// Empty for a compact insert or delete (`CompactRows`): its identifier is read from its row.
        var id: [DiffValue]
        var change: ChangeKind
        /// An insert's new row or a delete's old one (`plan.rowKeys` order): attributes and
        /// references are written straight from it.
        var row: [Value]?
        /// An update's changed attributes and references.
        var attributes: [String: AttributeChange] = [:]
        var references: [String: RelationshipDiff] = [:]
        var members: [(relationship: String, nodes: [Node])] = []
        /// An insert's or a delete's references, from its row, with their targets' identifiers
        /// (resolved while the batch is read, so that writing needs nothing but the node).
        var rowReferences: [(name: String, reference: ObjectReference)] = []
        /// Whether it sits in its owner's node (else among the roots).
        var isNested = false

        init(plan: EntityPlan, id: [DiffValue], change: ChangeKind, row: [Value]? = nil) {
            self.plan = plan
            self.id = id
            self.change = change
            self.row = row
        }

        func append(_ node: Node, to relationship: String) {
            if let i = members.firstIndex(where: { $0.relationship == relationship }) {
                members[i].nodes.append(node)
            } else {
                members.append((relationship, [node]))
            }
        }

        /// Folds a later change of the same object (in one batch) in.
        func merge(_ later: Node) {
            if row != nil && (!later.attributes.isEmpty || later.row != nil) { materialize() }
            if change == .update && later.change != .update && attributes.isEmpty && references.isEmpty {
                change = later.change
                row = later.row
                rowReferences = later.rowReferences
            } else if later.row != nil {
                later.materialize()
            }
            for (k, v) in later.attributes {
                if let earlier = attributes[k] { attributes[k] = AttributeChange(old: earlier.old, new: v.new) } else { attributes[k] = v }
            }
            for (k, v) in later.references { references[k] = v }
            for m in later.members { for n in m.nodes { append(n, to: m.relationship) } }
        }

        /// The row as attribute changes (its references are kept in `row`-less form only for
        /// updates, which is all a fold within one batch needs).
        private func materialize() {
            guard let row else { return }
            for (name, index) in plan.attributes where !row[index].isNull {
                attributes[name] = change == .delete ? AttributeChange(old: row[index], new: .null) : AttributeChange(old: .null, new: row[index])
            }
            self.row = nil
            rowReferences = []
        }

        /// The node as `ObjectDiff`'s JSON (compact: no null side), keys in sorted order.
        func write(into text: inout JSONText) {
            text.raw("{")
            if let row {
                var first = true
                for (name, index) in plan.attributes {
                    let v = row[index]
                    if v.isNull { continue }
                    if first { text.key("attributes"); text.raw("{") } else { text.raw(",") }
                    first = false
                    text.key(name)
                    text.raw(change == .delete ? "{\"old\":" : "{\"new\":")
                    text.append(DiffValue(v))
                    text.raw("}")
                }
                if !first { text.raw("},") }
            } else if !attributes.isEmpty {
                text.key("attributes")
                text.object(attributes) { text, change in
                    text.raw("{")
                    if !change.new.isNull { text.key("new"); text.append(change.new) }
                    if !change.old.isNull {
                        if !change.new.isNull { text.raw(",") }
                        text.key("old")
                        text.append(change.old)
                    }
                    text.raw("}")
                }
                text.raw(",")
            }
            text.key("change")
            text.append(string: change.rawValue)
            text.raw(",")
            text.key("entityName")
            text.append(string: plan.entity.name)
            text.raw(",")
            text.key("id")
            text.array(id) { $0.append($1) }
            writeRelationships(into: &text, after: ",\"relationships\":")
            text.raw("}")
        }

        /// A compact insert or delete: its row's values in `plan.rowColumns` order (dates as seconds)
        /// up to the last that is not null, then its relationships when it has any (after every
        /// column when `plan.endsBeforeRelationships` is false).
        func writeRow(into text: inout JSONText) {
            guard let row else { return }
            text.raw("[")
            let written = plan.writeValues(of: row, into: &text)
            if plan.endsBeforeRelationships { text.truncate(to: written) }
            if !writeRelationships(into: &text, after: text.lastByte == UInt8(ascii: "[") ? "" : ",") {
                text.truncate(to: written)
            }
            text.raw("]")
        }

        /// Nodes as array elements: each run of compact rows of one entity and change as one node of rows.
        static func write(_ run: ArraySlice<Node>, into text: inout JSONText) {
            guard let first = run.first, first.id.isEmpty else {
                run.first?.write(into: &text)
                return
            }
            first.plan.writeRunHead(first.change, into: &text)
            for (i, node) in run.enumerated() {
                if i > 0 { text.raw(",") }
                node.writeRow(into: &text)
            }
            text.raw("]}")
        }

        /// Splits `nodes` into what `write(_:into:)` writes as one element: a run of
        /// compact rows of one entity and change, or a single node.
        static func forEachRun(_ nodes: [Node], _ body: (ArraySlice<Node>) throws -> Void) rethrows {
            var start = 0
            while start < nodes.count {
                var end = start + 1
                if nodes[start].id.isEmpty {
                    while end < nodes.count && nodes[end].id.isEmpty && nodes[end].plan.entity === nodes[start].plan.entity
                            && nodes[end].change == nodes[start].change { end += 1 }
                }
                try body(nodes[start..<end])
                start = end
            }
        }

        /// The relationships as an object, by name, when there are any; returns whether it wrote.
        @discardableResult
        private func writeRelationships(into text: inout JSONText, after separator: StaticString) -> Bool {
            if members.isEmpty && references.isEmpty && rowReferences.isEmpty { return false }
            let names = (members.map(\.relationship) + references.keys + rowReferences.map(\.name)).sorted()
            if names.isEmpty { return false }
            text.raw(separator)
            text.raw("{")
            for (i, name) in names.enumerated() {
                if i > 0 { text.raw(",") }
                text.key(name)
                if let m = members.first(where: { $0.relationship == name }) {
                    text.raw("{\"members\":[")
                    var j = 0
                    Node.forEachRun(m.nodes) { run in
                        if j > 0 { text.raw(",") }
                        j += 1
                        Node.write(run, into: &text)
                    }
                    text.raw("]}")
                } else if let r = rowReferences.first(where: { $0.name == name }) {
                    text.raw(change == .delete ? "{\"removed\":[" : "{\"added\":[")
                    text.append(r.reference)
                    text.raw("]}")
                } else if let r = references[name] {
                    text.append(r, compact: true)
                }
            }
            text.raw("}")
            return true
        }
    }

    /// The nodes of one batch, attached to their roots.
    private struct BatchTree {
        var roots: [Node] = []
        private var nodes: [ObjectID: Node] = [:]
        /// Rows of the objects this batch inserted (new) or deleted (old): a deleted owner can no
        /// longer be read, and an inserted one need not be.
        private var known: [ObjectID: [Value]] = [:]
        private let recorder: ChangeRecorder
        private let context: ObjectContext

        init(recorder: ChangeRecorder, context: ObjectContext, changes: ChangeBatch) throws {
            self.recorder = recorder
            self.context = context
            for c in changes.inserted { if let plan = plan(c.id.entity), plan.isLookedUp { known[c.id] = plan.row(c.new, of: c) } }
            for c in changes.deleted { if let plan = plan(c.id.entity), plan.isLookedUp { known[c.id] = plan.row(c.old, of: c) } }
            for c in changes.inserted { try add(c) }
            for c in changes.updated { try add(c) }
            for c in changes.deleted { try add(c) }
        }

        /// The plan of an entity; changes come grouped by entity, so the last one found is
        /// usually the one wanted (comparing the names is cheaper than hashing them).
        private mutating func plan(_ entity: String) -> EntityPlan? {
            if let last = lastPlan, last.entity.name == entity { return last }
            lastPlan = recorder.plans[entity]
            return lastPlan
        }
        private var lastPlan: EntityPlan?

        private mutating func add(_ change: ObjectChange) throws {
            guard let plan = plan(change.id.entity) else { return }
            switch change.kind {
            case .insert, .delete:
                let row = known[change.id] ?? plan.row(change.kind == .insert ? change.new : change.old, of: change)
                // A compact insert or delete is written without its identifier (its row and nesting give it).
                let ownerRow = plan.owner.flatMap { row[$0.index].integerValue }
                let compact = ownerRow == nil ? plan.isCompactAtRoot : plan.isCompactNested
                let node = Node(plan: plan, id: compact ? [] : try identity(of: change.id), change: change.kind, row: row)
                for (name, destination, index) in plan.references {
                    guard let target = row[index].integerValue else { continue }
                    let reference = ObjectReference(entityName: destination, id: try identity(of: ObjectID(entity: destination, rowID: target)))
                    node.rowReferences.append((name, reference))
                }
                try attach(node, change.id, ownerRow: ownerRow)
            case .update:
                var attributes: [String: AttributeChange] = [:]
                var references: [String: RelationshipDiff] = [:]
                for (i, key) in change.changedKeys.enumerated() {
                    let old = i < change.old.count ? change.old[i] : .null, new = i < change.new.count ? change.new[i] : .null
                    guard old != new else { continue }
                    if plan.comparedNames.contains(key) {
                        attributes[key] = AttributeChange(old: old, new: new)
                    } else if let r = plan.references.first(where: { $0.name == key }) {
                        let oldRef = try old.integerValue.map { ObjectReference(entityName: r.destination, id: try identity(of: ObjectID(entity: r.destination, rowID: $0))) }
                        let newRef = try new.integerValue.map { ObjectReference(entityName: r.destination, id: try identity(of: ObjectID(entity: r.destination, rowID: $0))) }
                        references[key] = RelationshipDiff(added: newRef.map { [$0] } ?? [], removed: oldRef.map { [$0] } ?? [])
                    }
                }
                guard !attributes.isEmpty || !references.isEmpty else { return }
                // Matched by its identifier before the change; later batches see the new one.
                var oldIdentity: [String: Value] = [:]
                for (key, _, _) in plan.identifier where change.changedKeys.contains(key) { oldIdentity[key] = change.oldValue(key) }
                let node = Node(plan: plan, id: try identity(of: change.id, overriding: oldIdentity), change: .update)
                if !oldIdentity.isEmpty { recorder.identities[change.id] = nil }
                node.attributes = attributes
                node.references = references
                var ownerRow: Int64?
                if let owner = plan.owner {
                    ownerRow = change.foreignKeys[owner.key]
                    if ownerRow == nil { ownerRow = try context.object(change.id, keys: [owner.key])?[owner.key].integerValue }
                }
                try attach(node, change.id, ownerRow: ownerRow)
            }
        }

        /// Puts `node` under its owner's node (made as an update holding only members when the
        /// owner did not change itself), or among the roots.
        private mutating func attach(_ node: Node, _ id: ObjectID, ownerRow: Int64?) throws {
            if let existing = nodes[id] {
                // Folded with a later change, a row may no longer be one: it needs its identifier.
                if existing.id.isEmpty { existing.id = try identity(of: id) }
                let laterIsRow = node.id.isEmpty
                existing.merge(node)
                // A placeholder made for its members' sake (a cascade records members first) that
                // then turns out inserted or deleted itself is a row again.
                if laterIsRow && existing.row != nil && existing.change != .update && existing.attributes.isEmpty
                    && existing.references.isEmpty && (existing.isNested ? existing.plan.isCompactNested : existing.plan.isCompactAtRoot) {
                    existing.id = []
                }
                return
            }
            nodes[id] = node
            guard let link = node.plan.owner, let ownerRow else {
                roots.append(node)
                return
            }
            node.isNested = true
            let ownerID = try concrete(ObjectID(entity: link.entity, rowID: ownerRow))
            let owner: Node
            if let existing = nodes[ownerID] {
                owner = existing
            } else {
                guard let plan = recorder.plans[ownerID.entity] else { return }
                owner = Node(plan: plan, id: try identity(of: ownerID), change: .update)
                var next: Int64?
                if let o = plan.owner {
                    next = known[ownerID]?[o.index].integerValue
                    if next == nil { next = try context.object(ownerID, keys: [o.key])?[o.key].integerValue }
                }
                try attach(owner, ownerID, ownerRow: next)
            }
            owner.append(node, to: link.relationship)
        }

        /// The object's entity as stored (an owner named by its parent entity may be a sub-entity).
        private func concrete(_ id: ObjectID) throws -> ObjectID {
            if known[id] != nil || nodes[id] != nil || recorder.identities[id] != nil { return id }
            return try context.object(id, keys: [])?.id ?? id
        }

        /// The identifier as the diff renders it: to-one keys through the related object's own
        /// identifier.
        private func identity(of id: ObjectID, overriding: [String: Value] = [:]) throws -> [DiffValue] {
            if overriding.isEmpty, let cached = recorder.identities[id] { return cached }
            guard let plan = recorder.plans[id.entity] else { return [] }
            var read: FetchedObject?
            if known[id] == nil { read = try context.object(id, keys: plan.identifier.map(\.key)) }
            var out: [DiffValue] = []
            for (key, index, destination) in plan.identifier {
                let v = overriding[key] ?? known[id]?[index] ?? read?[key] ?? .null
                if let destination {
                    if let row = v.integerValue {
                        out += try identity(of: try concrete(ObjectID(entity: destination, rowID: row)))
                    } else {
                        out += Array(repeating: DiffValue.null, count: try recorder.schema.arity(destination))
                    }
                } else {
                    out.append(DiffValue(v))
                }
            }
            if overriding.isEmpty { recorder.identities[id] = out }
            return out
        }
    }
}
