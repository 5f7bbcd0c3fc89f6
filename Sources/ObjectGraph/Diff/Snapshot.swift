import Foundation
import GRDB

extension Store {
    /// An in-memory copy of this store, taken with SQLite's backup API in one read transaction:
    /// the "before" side of a run's change file (`GraphDiff.diff(from: snapshot, to: self)`).
    public func snapshot() throws -> Store {
        let copy = try Store.inMemory(model: model)
        try queue.backup(to: copy.queue)
        return copy
    }

    /// A copy of this store in a new database file at `path`, which must not exist yet.
    public func copy(toPath path: String) throws -> Store {
        if FileManager.default.fileExists(atPath: path) {
            throw ObjectGraphError.invalidOperation("cannot copy the database to \(path): the file exists")
        }
        let copy = try Store(path: path, model: model)
        try queue.backup(to: copy.queue)
        return copy
    }
}
