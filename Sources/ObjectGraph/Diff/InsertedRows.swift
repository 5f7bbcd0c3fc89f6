import Primitives

extension ChangeRecorder {
    /// A batch of inserts written straight as compact rows, in the order they came: a first
    /// import's batches (a channel, each programme after it, each programme's members after the
    /// programme). It writes what `BatchTree` and `Node` write for such a batch, byte for byte,
    /// without a node, an entry by id or a kept row per object.
    ///
    /// A batch fits when it holds inserts only, each written as a compact row with no reference
    /// but the one to its owner, and each member's owner is one of the objects still open: the
    /// last root, or an object on the chain of owners that leads to the last insert. Whether it
    /// fits is decided on the import's thread (`fits`, which reads nothing); the rows are written
    /// on the recorder's queue (`render`).
    ///
    /// Each row is written once, where it ends up: a root's into the document's text, a member's
    /// into its owner's text for that relationship, which is appended after the owner's row when
    /// the owner closes (relationships in name order, as the document's sorted keys want them).
    ///
    /// Entities and relationships are numbered once (`Kind`), so that the walk over a batch
    /// compares integers, not names (`fits` runs on the merge's thread, where every instruction
    /// delays the import).
    struct InsertedRows: Sendable {
        /// What the walk needs of an entity, by number.
        fileprivate struct Kind: @unchecked Sendable {   // EntityPlan is not changed once made
            let name: String
            let plan: EntityPlan
            let rowKeys: [String]
            /// The number of the entity that owns it (by the relationship `plan.owner` names), or
            /// -1: it is only ever a root.
            let owner: Int
            /// The position of the key to the owner in a row, or -1.
            let ownerColumn: Int
            /// The number of its owner's relationship that holds it, or -1.
            let relationship: Int
            /// The positions of the references written as such.
            let references: [Int]
            let isCompactNested: Bool
            let isCompactAtRoot: Bool
        }

        private let kinds: [Kind]
        /// `"name":{"members":[` of each relationship, by number (numbered in name order).
        private let memberHeads: [JSONText]

        init(plans: [String: EntityPlan]) {
            let sorted = plans.values.sorted { $0.entity.name < $1.entity.name }
            let number = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($1.entity.name, $0) })
            let relationships = Set(sorted.compactMap { $0.owner?.relationship }).sorted()
            let relationshipNumber = Dictionary(uniqueKeysWithValues: relationships.enumerated().map { ($1, $0) })
            kinds = sorted.map { plan in
                Kind(name: plan.entity.name, plan: plan, rowKeys: plan.rowKeys, owner: plan.owner.flatMap { number[$0.entity] } ?? -1,
                     ownerColumn: plan.owner?.index ?? -1,
                     relationship: plan.owner.flatMap { relationshipNumber[$0.relationship] } ?? -1,
                     references: plan.references.map(\.index), isCompactNested: plan.isCompactNested, isCompactAtRoot: plan.isCompactAtRoot)
            }
            memberHeads = relationships.map { name in
                var head = JSONText()
                head.key(name)
                head.raw("{\"members\":[")
                return head
            }
        }

        /// Whether `render` can write the batch.
        func fits(_ changes: ChangeBatch) -> Bool {
            guard changes.updated.isEmpty, changes.deleted.isEmpty, !changes.inserted.isEmpty else { return false }
            // The chain of open objects: its first `depth` entries.
            var chain: [OpenObject] = [], depth = 0
            return forEachInsert(changes) { k, rowID, row in
                for index in kinds[k].references where !row[index].isNull { return false }
                let ownerColumn = kinds[k].ownerColumn
                if ownerColumn >= 0, let ownerRow = row[ownerColumn].integerValue {
                    guard kinds[k].isCompactNested, let at = Self.depth(of: kinds[k].owner, ownerRow, in: chain, below: depth) else { return false }
                    depth = at + 1
                } else {
                    guard kinds[k].isCompactAtRoot else { return false }
                    depth = 0
                }
                if depth < chain.count { chain[depth] = OpenObject(kind: k, rowID: rowID) } else { chain.append(OpenObject(kind: k, rowID: rowID)) }
                depth += 1
                return true
            }
        }

        /// Writes the batch's elements of the document's `changes` array (one per run of roots of
        /// one entity), joined by commas, at the end of `text`; returns how many there are. Only
        /// for a batch that `fits`. `scratch` keeps the open objects' buffers from batch to batch.
        func render(_ changes: ChangeBatch, into text: inout JSONText, scratch: inout Scratch) throws -> Int {
            var writing = Writing(kinds: kinds, memberHeads: memberHeads)
            swap(&writing.roots.text, &text)
            swap(&writing.open, &scratch.open)
            defer {
                swap(&writing.roots.text, &text)
                swap(&writing.open, &scratch.open)
            }
            let fitted = forEachInsert(changes) { k, rowID, row in
                let ownerColumn = kinds[k].ownerColumn
                if ownerColumn >= 0, let ownerRow = row[ownerColumn].integerValue {
                    guard let depth = Self.depth(of: kinds[k].owner, ownerRow, in: writing.chain, below: writing.depth) else { return false }
                    while writing.depth > depth + 1 { writing.close() }
                    writing.openMember(k, rowID, row)
                } else {
                    while writing.depth > 0 { writing.close() }
                    writing.openRoot(k, rowID, row)
                }
                return true
            }
            guard fitted else {
                writing.depth = 0
                for i in writing.open.indices { writing.open[i].memberCount = 0 }
                throw ObjectGraphError.invalidOperation("a batch of inserts did not fit the form it was checked for")
            }
            while writing.depth > 0 { writing.close() }
            writing.roots.finish()
            return writing.roots.runs
        }

        /// Buffers of open objects and their members, kept from one batch to the next.
        struct Scratch {
            fileprivate var open: [Writing.Open] = []
        }

        /// Where the object of entity `kind` and row `rowID` is on the chain of open objects.
        private static func depth(of kind: Int, _ rowID: Int64, in open: [OpenObject], below count: Int) -> Int? {
            var i = count
            while i > 0 {
                i -= 1
                if open[i].rowID == rowID && open[i].kind == kind { return i }
            }
            return nil
        }

        /// Calls `body` with each insert's entity number, row id and row (in `rowKeys` order),
        /// read in place rather than copied; stops and returns false when `body` does.
        private func forEachInsert(_ changes: ChangeBatch, _ body: (Int, Int64, [Value]) -> Bool) -> Bool {
            var k = -1
            for i in changes.inserted.indices {
                let entity = changes.inserted[i].id.entity
                // Changes come grouped by entity, members after their owner: the entity is mostly
                // the last one's, or one of a few (comparing names is cheaper than hashing them).
                if k < 0 || kinds[k].name != entity {
                    guard let found = kinds.firstIndex(where: { $0.name == entity }) else { continue }
                    k = found
                }
                let values = changes.inserted[i].new, keys = changes.inserted[i].changedKeys
                let row = values.count == kinds[k].rowKeys.count && keys == kinds[k].rowKeys ? values : kinds[k].plan.row(values, keys: keys)
                if !body(k, changes.inserted[i].id.rowID, row) { return false }
            }
            return true
        }

        /// Rows written so far and the objects whose members may still come.
        fileprivate struct Writing {
            let kinds: [Kind]
            let memberHeads: [JSONText]
            /// The roots' runs, each an element of the document's `changes` array.
            var roots = Rows()
            /// The objects whose members may still come are the first `depth`; the entries after
            /// them are kept for their buffers.
            var open: [Open] = []
            var depth = 0
            /// Each open entry's entity and row, where owners are looked up.
            var chain: [OpenObject] = []

            init(kinds: [Kind], memberHeads: [JSONText]) {
                self.kinds = kinds
                self.memberHeads = memberHeads
            }

            /// An object whose members may still come.
            struct Open {
                /// Which of its owner's member texts holds its row (a root's is in `roots`).
                var slot: Int
                /// Where its row's last non-null value ends in its container's text: a row that
                /// gets no members stops there.
                var written: Int
                /// Its members' rows by relationship number, in the order they came: the first
                /// `memberCount`; the rest are emptied texts kept for the next object here.
                var members: [Rows] = []
                /// The relationship of each of `members`, by number (apart, so that looking one up
                /// copies no member).
                var relationships: [Int] = []
                var memberCount = 0
            }

            /// Rows of one container, in runs of one entity: `{"change":"insert","entityName":E,"rows":[` row, row...
            struct Rows {
                var text = JSONText()
                var lastKind = -1
                var runs = 0

                /// Writes a row of `plan`'s entity up to its values (after the last row of its run,
                /// or in a new run); returns where its last non-null value ends.
                mutating func write(_ kind: Int, _ plan: EntityPlan, _ row: [Value]) -> Int {
                    if lastKind == kind {
                        text.raw(",[")
                    } else {
                        if runs > 0 { text.raw("]},") }
                        text.append(json: plan.insertRunHead)
                        text.raw("[")
                        lastKind = kind
                        runs += 1
                    }
                    return plan.writeValues(of: row, into: &text)
                }

                /// Ends the last run.
                mutating func finish() { if runs > 0 { text.raw("]}") } }

                /// Empty again, keeping the buffer.
                mutating func removeAll() {
                    text.removeAll()
                    lastKind = -1
                    runs = 0
                }
            }

            /// Opens an object at `depth`, reusing the entry left there.
            private mutating func push(_ kind: Int, _ rowID: Int64, slot: Int, written: Int) {
                if depth < open.count {
                    open[depth].slot = slot
                    open[depth].written = written
                } else {
                    open.append(Open(slot: slot, written: written))
                }
                if depth < chain.count { chain[depth] = OpenObject(kind: kind, rowID: rowID) } else { chain.append(OpenObject(kind: kind, rowID: rowID)) }
                depth += 1
            }

            mutating func openRoot(_ k: Int, _ rowID: Int64, _ row: [Value]) {
                push(k, rowID, slot: -1, written: roots.write(k, kinds[k].plan, row))
            }

            /// A member of the last open object.
            mutating func openMember(_ k: Int, _ rowID: Int64, _ row: [Value]) {
                let owner = depth - 1, relationship = kinds[k].relationship
                var m = 0
                let count = open[owner].memberCount
                while m < count && open[owner].relationships[m] != relationship { m += 1 }
                if m == count {
                    if m < open[owner].members.count {
                        open[owner].relationships[m] = relationship
                        open[owner].members[m].removeAll()   // emptied already, unless a batch failed
                    } else {
                        open[owner].relationships.append(relationship)
                        open[owner].members.append(Rows())
                    }
                    open[owner].memberCount += 1
                }
                let written = open[owner].members[m].write(k, kinds[k].plan, row)
                push(k, rowID, slot: m, written: written)
            }

            /// Ends the last open object's row: its values cut after the last non-null one, then its
            /// members' runs (after every column when its plan says they must be).
            mutating func close() {
                depth -= 1
                // The container's text is taken out while it is written to (no copy is made).
                var text = JSONText()
                if depth == 0 {
                    swap(&text, &roots.text)
                    end(depth, in: &text)
                    swap(&text, &roots.text)
                } else {
                    let owner = depth - 1, slot = open[depth].slot
                    swap(&text, &open[owner].members[slot].text)
                    end(depth, in: &text)
                    swap(&text, &open[owner].members[slot].text)
                }
            }

            private mutating func end(_ object: Int, in text: inout JSONText) {
                let count = open[object].memberCount
                if count == 0 || kinds[chain[object].kind].plan.endsBeforeRelationships {
                    text.truncate(to: open[object].written)
                }
                if count > 0 {
                    text.raw(text.lastByte == UInt8(ascii: "[") ? "{" : ",{")
                    // Relationships are numbered in name order.
                    // A few relationships at most: sorted in place by insertion.
                    var i = 1
                    while i < count {
                        var j = i
                        while j > 0 && open[object].relationships[j - 1] > open[object].relationships[j] {
                            open[object].relationships.swapAt(j - 1, j)
                            open[object].members.swapAt(j - 1, j)
                            j -= 1
                        }
                        i += 1
                    }
                    for i in 0..<count {
                        if i > 0 { text.raw(",") }
                        text.append(json: memberHeads[open[object].relationships[i]])
                        open[object].members[i].finish()
                        text.append(json: open[object].members[i].text)
                        text.raw("]}")
                        open[object].members[i].removeAll()
                    }
                    open[object].memberCount = 0
                    text.raw("}")
                }
                text.raw("]")
            }
        }
    }
}

/// An object on the chain of open objects: its entity's number and its row.
private struct OpenObject {
    let kind: Int
    let rowID: Int64
}
