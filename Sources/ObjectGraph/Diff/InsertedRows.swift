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
    /// Each row is written once, where it ends up: a root's into the batch's text, a member's into
    /// its owner's text for that relationship, which is appended after the owner's row when the
    /// owner closes (relationships in name order, as the document's sorted keys want them).
    struct InsertedRows {
        private let plans: [String: EntityPlan]

        init(plans: [String: EntityPlan]) { self.plans = plans }

        /// Whether `render` can write the batch.
        func fits(_ changes: ChangeBatch) -> Bool {
            guard changes.updated.isEmpty, changes.deleted.isEmpty, !changes.inserted.isEmpty else { return false }
            // The chain of open objects, by entity and row id.
            var open: [(entity: String, rowID: Int64)] = []
            return forEachInsert(changes) { id, plan, row in
                if plan.references.contains(where: { !row[$0.index].isNull }) { return false }
                if let link = plan.owner, let ownerRow = row[link.index].integerValue {
                    guard plan.isCompactNested,
                          let depth = open.lastIndex(where: { $0.rowID == ownerRow && $0.entity == link.entity }) else { return false }
                    open.removeSubrange((depth + 1)...)
                } else {
                    guard plan.isCompactAtRoot else { return false }
                    open.removeAll(keepingCapacity: true)
                }
                open.append((id.entity, id.rowID))
                return true
            }
        }

        /// The batch's elements of the document's `changes` array (one per run of roots of one
        /// entity), joined by commas, and how many there are. Only for a batch that `fits`.
        func render(_ changes: ChangeBatch) throws -> (text: [UInt8], elements: Int) {
            var writing = Writing()
            let fitted = forEachInsert(changes) { id, plan, row in
                if let link = plan.owner, let ownerRow = row[link.index].integerValue {
                    guard let depth = writing.open.lastIndex(where: { $0.rowID == ownerRow && $0.entity == link.entity }) else { return false }
                    while writing.open.count > depth + 1 { writing.close() }
                    writing.openMember(id, plan, row, relationship: link.relationship)
                } else {
                    while !writing.open.isEmpty { writing.close() }
                    writing.openRoot(id, plan, row)
                }
                return true
            }
            guard fitted else { throw ObjectGraphError.invalidOperation("a batch of inserts did not fit the form it was checked for") }
            while !writing.open.isEmpty { writing.close() }
            return writing.finished()
        }

        /// Calls `body` with each insert's id, plan and row (in `rowKeys` order), read in place
        /// rather than copied; stops and returns false when `body` does.
        private func forEachInsert(_ changes: ChangeBatch, _ body: (ObjectID, EntityPlan, [Value]) -> Bool) -> Bool {
            var plan: EntityPlan?
            for i in changes.inserted.indices {
                let id = changes.inserted[i].id
                if plan?.entity.name != id.entity { plan = plans[id.entity] }
                guard let plan else { continue }
                if !body(id, plan, plan.row(changes.inserted[i].new, keys: changes.inserted[i].changedKeys)) { return false }
            }
            return true
        }

        /// Rows written so far, the objects whose members may still come, and spare buffers.
        private struct Writing {
            /// The roots' runs, each an element of the document's `changes` array.
            var roots = Rows()
            var open: [Open] = []
            /// Emptied member texts, kept for the next objects' members.
            var spare: [JSONText] = []

            /// An object whose members may still come.
            struct Open {
                let entity: String
                let rowID: Int64
                /// Which of its owner's member texts holds its row (a root's is in `roots`).
                var slot = -1
                /// Where its row's last non-null value ends in its container's text: a row that
                /// gets no members stops there.
                let written: Int
                /// Its members' rows by relationship, in the order they came.
                var members: [(relationship: String, rows: Rows)] = []
            }

            /// Rows of one container, in runs of one entity: `{"change":"insert","entityName":E,"rows":[` row, row...
            struct Rows {
                var text = JSONText()
                var lastPlan: EntityPlan?
                var runs = 0

                /// Writes a row of `plan`'s entity up to its values (after the last row of its run,
                /// or in a new run); returns where its last non-null value ends.
                mutating func write(_ plan: EntityPlan, _ row: [Value]) -> Int {
                    if lastPlan === plan {
                        text.raw(",")
                    } else {
                        if runs > 0 { text.raw("]},") }
                        plan.writeRunHead(.insert, into: &text)
                        lastPlan = plan
                        runs += 1
                    }
                    text.raw("[")
                    return plan.writeValues(of: row, into: &text)
                }

                /// Ends the last run.
                mutating func finish() { if runs > 0 { text.raw("]}") } }
            }

            mutating func openRoot(_ id: ObjectID, _ plan: EntityPlan, _ row: [Value]) {
                open.append(Open(entity: id.entity, rowID: id.rowID, written: roots.write(plan, row)))
            }

            /// A member of the last open object.
            mutating func openMember(_ id: ObjectID, _ plan: EntityPlan, _ row: [Value], relationship: String) {
                let owner = open.count - 1
                var m = open[owner].members.firstIndex { $0.relationship == relationship } ?? -1
                if m < 0 {
                    var rows = Rows()
                    if let text = spare.popLast() { rows.text = text }
                    open[owner].members.append((relationship, rows))
                    m = open[owner].members.count - 1
                }
                let written = open[owner].members[m].rows.write(plan, row)
                open.append(Open(entity: id.entity, rowID: id.rowID, slot: m, written: written))
            }

            /// Ends the last open object's row: its members' runs after its values, or its values
            /// cut after the last non-null one when it has none.
            mutating func close() {
                var object = open.removeLast()
                if open.isEmpty {
                    Self.end(&object, in: &roots.text, spare: &spare)
                } else {
                    Self.end(&object, in: &open[open.count - 1].members[object.slot].rows.text, spare: &spare)
                }
            }

            private static func end(_ object: inout Open, in text: inout JSONText, spare: inout [JSONText]) {
                if object.members.isEmpty {
                    text.truncate(to: object.written)
                } else {
                    text.raw(",{")
                    object.members.sort { $0.relationship < $1.relationship }
                    for i in object.members.indices {
                        if i > 0 { text.raw(",") }
                        text.key(object.members[i].relationship)
                        text.raw("{\"members\":[")
                        object.members[i].rows.finish()
                        text.append(json: object.members[i].rows.text.bytes)
                        text.raw("]}")
                        object.members[i].rows.text.removeAll()
                        spare.append(object.members[i].rows.text)
                    }
                    text.raw("}")
                }
                text.raw("]")
            }

            mutating func finished() -> (text: [UInt8], elements: Int) {
                roots.finish()
                return (roots.text.bytes, roots.runs)
            }
        }
    }
}
