import Foundation
import GRDB

extension Store {
    /// An in-memory copy of this store, taken with SQLite's backup API in one read transaction:
    /// the "before" side of a run's change file (`GraphDiff.diff(from: snapshot, to: self)`).
    public func snapshot() throws -> Store {
        let pageSize = try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }
        let copy = try Store.inMemory(model: model, pageSize: pageSize)
        try queue.backup(to: copy.queue)
        return copy
    }

    /// A copy of this store in a new database file at `path`, which must not exist yet.
    public func copy(toPath path: String) throws -> Store {
        if FileManager.default.fileExists(atPath: path) {
            throw ObjectGraphError.invalidOperation("cannot copy the database to \(path): the file exists")
        }
        // VACUUM INTO keeps the page size and everything else of the file as it is (the backup
        // API refuses a destination in WAL mode whose page size differs).
        try queue.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
        return try Store(path: path, model: model)
    }
}

/// The store as it was when this view was taken, held by an open read transaction on a
/// connection of its own: in WAL mode the store can be written meanwhile, and this view keeps
/// seeing the old state. It is the "before" side of a run's change file without copying the
/// database (a copy of a guide of hundreds of MB costs seconds and as much disk).
///
/// The WAL cannot be checkpointed past the view while it is open: close it when done.
public final class FrozenStoreView {
    private let store: Store
    private let queue: DatabaseQueue
    private var isOpen = true

    /// Freezes the current state of `store` (a database file, not an in-memory store).
    ///
    /// ```swift
    /// let before = try FrozenStoreView(of: store)
    /// defer { before.close() }
    /// try store.write { context in /* ... */ }
    /// let old = try before.read { try $0.count("Programme") }
    /// ```
    public init(of store: Store) throws {
        guard store.path != ":memory:" else {
            throw ObjectGraphError.invalidOperation("an in-memory store has no second connection to freeze: copy it instead")
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(TimeInterval(Store.busyTimeoutMilliseconds) / 1000)
        // The point of this view: its read transaction stays open between accesses.
        config.allowsUnsafeTransactions = true
        self.store = store
        queue = try DatabaseQueue(path: store.path, configuration: config)
        try queue.inDatabase { db in
            try db.execute(sql: "BEGIN DEFERRED TRANSACTION")
            // A deferred transaction takes its snapshot at its first read.
            _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master")
        }
    }

    /// Reads the frozen state.
    public func read<T>(_ body: (ObjectContext) throws -> T) throws -> T {
        guard isOpen else { throw ObjectGraphError.invalidOperation("the frozen view of \(store.path) is closed") }
        return try queue.inDatabase { db in
            try body(ObjectContext(db: db, store: store, observers: [], recordChanges: false))
        }
    }

    /// Ends the read transaction; the view can no longer be read.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        try? queue.inDatabase { db in try db.execute(sql: "ROLLBACK") }
    }

    deinit { close() }
}
