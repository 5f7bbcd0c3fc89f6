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
    struct InsertedRows {
        private let plans: [String: EntityPlan]

        init(plans: [String: EntityPlan]) { self.plans = plans }

        /// Whether `render` can write the batch.
        func fits(_ changes: ChangeBatch) -> Bool {
            walk(changes, writing: false) != nil
        }

        /// The batch's elements of the document's `changes` array: one per run of roots of one entity.
        func render(_ changes: ChangeBatch) throws -> [[UInt8]] {
            guard let elements = walk(changes, writing: true) else {
                throw ObjectGraphError.invalidOperation("a batch of inserts did not fit the form it was checked for")
            }
            return elements
        }

        /// An object whose members may still come.
        private struct Open {
            let entity: String
            let rowID: Int64
            let plan: EntityPlan
            /// Its row so far (after `[` and its values), and where its last non-null value ends.
            var text: JSONText
            var written: Int
            /// Its members' runs by relationship, in the order they came.
            var members: [(relationship: String, runs: [Run])] = []
        }

        /// Rows of one entity, one after another.
        private struct Run {
            let plan: EntityPlan
            var text: JSONText
        }

        /// Walks the batch keeping the chain of open objects; returns nil when it does not fit.
        /// Without `writing` it only checks.
        private func walk(_ changes: ChangeBatch, writing: Bool) -> [[UInt8]]? {
            guard changes.updated.isEmpty, changes.deleted.isEmpty, !changes.inserted.isEmpty else { return nil }
            var open: [Open] = []
            var roots: [Run] = []
            var plan: EntityPlan?
            for change in changes.inserted {
                if plan?.entity.name != change.id.entity { plan = plans[change.id.entity] }
                guard let plan else { continue }
                let row = plan.row(change.new, of: change)
                if plan.references.contains(where: { !row[$0.index].isNull }) { return nil }
                if let link = plan.owner, let ownerRow = row[link.index].integerValue {
                    guard plan.isCompactNested,
                          let depth = open.lastIndex(where: { $0.rowID == ownerRow && $0.entity == link.entity }) else { return nil }
                    while open.count > depth + 1 { close(&open, into: &roots, writing: writing) }
                } else {
                    guard plan.isCompactAtRoot else { return nil }
                    while !open.isEmpty { close(&open, into: &roots, writing: writing) }
                }
                var text = JSONText()
                var written = 0
                if writing {
                    text.raw("[")
                    written = plan.writeValues(of: row, into: &text)
                }
                open.append(Open(entity: change.id.entity, rowID: change.id.rowID, plan: plan, text: text, written: written))
            }
            while !open.isEmpty { close(&open, into: &roots, writing: writing) }
            guard writing else { return [] }
            return roots.map { run in
                var element = run.text
                element.raw("]}")
                return element.bytes
            }
        }

        /// Ends the last open object's row and appends it to its owner's members, or to the roots.
        private func close(_ open: inout [Open], into roots: inout [Run], writing: Bool) {
            var object = open.removeLast()
            guard writing else { return }
            if object.members.isEmpty {
                object.text.truncate(to: object.written)
            } else {
                object.text.raw(",{")
                for (i, (relationship, runs)) in object.members.sorted(by: { $0.relationship < $1.relationship }).enumerated() {
                    if i > 0 { object.text.raw(",") }
                    object.text.key(relationship)
                    object.text.raw("{\"members\":[")
                    for (j, run) in runs.enumerated() {
                        if j > 0 { object.text.raw(",") }
                        object.text.append(json: run.text.bytes)
                        object.text.raw("]}")
                    }
                    object.text.raw("]}")
                }
                object.text.raw("}")
            }
            object.text.raw("]")
            if let link = object.plan.owner, !open.isEmpty {
                let owner = open.count - 1
                let i = open[owner].members.firstIndex { $0.relationship == link.relationship } ?? open[owner].members.endIndex
                if i == open[owner].members.endIndex { open[owner].members.append((link.relationship, [])) }
                Self.append(object, to: &open[owner].members[i].runs)
            } else {
                Self.append(object, to: &roots)
            }
        }

        /// A row joins the last run when it is of the same entity, else starts one.
        private static func append(_ object: Open, to runs: inout [Run]) {
            if let last = runs.indices.last, runs[last].plan === object.plan {
                runs[last].text.raw(",")
                runs[last].text.append(json: object.text.bytes)
            } else {
                var text = JSONText()
                object.plan.writeRunHead(.insert, into: &text)
                text.append(json: object.text.bytes)
                runs.append(Run(plan: object.plan, text: text))
            }
        }
    }
}
