import Foundation
import ObjectGraph

extension ApplyCommand {
    /// Re-applies the change most recently undone (`serve`'s Redo), and marks it applied again.
    ///
    /// `undo` always reverts this database's newest change not undone yet (its register,
    /// `ChangeRegister`), so the undone changes newer than the newest remaining one form a stack
    /// whose top, the last one undone, is the oldest of them. A new change after an undo leaves
    /// nothing to redo (none is newer than it). Like an undo, all or nothing in one transaction,
    /// which also marks the change applied, puts back the priorities it had set and forgets each
    /// source's last download (docs/design.md#one-truth).
    public static func redo(database: String) throws -> (output: String, status: ExitStatus) {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let lock = try RunLock(path: database + ".lock")
        defer { lock.release() }
        let rows = try store.rows(in: ChangeRegister.table)
        let dropped = Set(try store.rows(in: ChangeRegister.notRedoable).keys)
        let active = rows.filter { $0.value["undone"]?.boolValue != true }.keys.max()
        let undone = rows.filter { row in
            row.value["undone"]?.boolValue == true && !dropped.contains(row.key) && active.map { row.key > $0 } ?? true
        }.keys.sorted()
        guard let runID = undone.first, let path = rows[runID]?["path"]?.stringValue.map({ ChangeRegister.resolved($0, store: store) }) else {
            throw JobError(.noInput, "nothing to redo in \(database)")
        }
        let entry = ChangeRegister.Entry(runID: runID, path: path)
        let what = "redo of \(try ChangeRegister.describe(entry, in: store).about), made \(runID)"
        let undonePath = String(path.dropLast(".json".count)) + ".undone.json"
        let document: ChangeDocument
        do { document = try ChangeDocument(contentsOfFile: undonePath) } catch {
            throw JobError(FileManager.default.fileExists(atPath: undonePath) ? .dataError : .noInput, "cannot redo: \(undonePath): \(error)")
        }
        let priorities = try ChangeRegister.priorities(of: runID, after: true, in: store)
        let report: ApplyReport
        do {
            report = try UndoTransaction.run(document, on: store) { context in
                try ChangeRegister.markUndone(entry, undone: false, in: context)
                try ChangeRegister.restorePriorities(priorities, in: context)
                try FetchState.forgetAll(in: context)
            }
        } catch let error as DiffError {
            throw JobError(.dataError, "\(what): \(error); nothing changed")
        }
        if !report.conflicts.isEmpty {
            var lines = ["\(what) refused: \(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s"); nothing changed"]
            lines += report.conflicts.prefix(50).map { "  conflict: \($0)" }
            return (lines.joined(separator: "\n"), .dataError)
        }
        try? FileManager.default.moveItem(atPath: undonePath, toPath: path)
        return ("\(what): \(report.applied) change\(report.applied == 1 ? "" : "s") applied again", .success)
    }
}
