import Foundation
import ObjectGraph

extension ApplyCommand {
    /// Re-applies the change most recently undone (`serve`'s Redo), and marks it applied again.
    ///
    /// `undo` always reverts this database's newest change not undone yet (its register,
    /// `ChangeRegister`), so the undone changes newer than the newest remaining one form a stack
    /// whose top, the last one undone, is the oldest of them. A new change after an undo leaves
    /// nothing to redo (none is newer than it).
    public static func redo(database: String) throws -> (output: String, status: ExitStatus) {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let rows = try store.rows(in: ChangeRegister.table)
        let active = rows.filter { $0.value["undone"]?.boolValue != true }.keys.max()
        let undone = rows.filter { row in row.value["undone"]?.boolValue == true && active.map { row.key > $0 } ?? true }.keys.sorted()
        guard let runID = undone.first, let path = rows[runID]?["path"]?.stringValue.map({ ChangeRegister.resolved($0, store: store) }) else {
            throw JobError(.noInput, "nothing to redo in \(database)")
        }
        let undonePath = String(path.dropLast(".json".count)) + ".undone.json"
        let result = try apply(database: database, file: undonePath, dryRun: false)
        if result.status == .success {
            try FileManager.default.moveItem(atPath: undonePath, toPath: path)
            try store.save(["path": .string(path), "recorded": .integer(Int64(Date().timeIntervalSince1970)), "undone": .bool(false)],
                           forKey: runID, in: ChangeRegister.table)
        }
        return result
    }
}
