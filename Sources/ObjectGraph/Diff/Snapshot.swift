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

    /// Runs `body` with a read context and up to `count` frozen views that see exactly what it
    /// sees, each on a connection of its own: one consistent read split across threads (the XMLTV
    /// export writes channels on every core). No views for an in-memory store, when a view cannot
    /// be opened, or when writes kept landing while they were opened (the caller reads alone
    /// then); the views are closed when `body` returns.
    ///
    /// ```swift
    /// try store.read(withViews: 2) { context, views in
    ///     let counts = try views.map { view in try view.read { try $0.count("Programme") } }   // on other threads
    /// }
    /// ```
    public func read<T>(withViews count: Int, _ body: (ObjectContext, [FrozenStoreView]) throws -> T) throws -> T {
        guard count > 0, path != ":memory:" else { return try read { try body($0, []) } }
        return try queue.read { db in
            // The snapshot is taken here; views opened after it see the same rows when no write
            // (by this library or, through the triggers, anything else) landed in between.
            let token = try Self.writeToken(in: db)
            var views: [FrozenStoreView] = []
            defer { views.forEach { $0.close() } }
            for _ in 0..<3 {
                views = (try? (0..<count).map { _ in try FrozenStoreView(of: self) }) ?? []
                if !views.isEmpty, (try? views.allSatisfy({ try $0.writeToken() == token })) == true { break }
                views.forEach { $0.close() }
                views = []
            }
            return try body(ObjectContext(db: db, store: self, observers: [], recordChanges: false), views)
        }
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

    /// The token of the last write this view sees (`Store.writeToken(in:)`).
    func writeToken() throws -> String? {
        try queue.inDatabase { db in try Store.writeToken(in: db) }
    }

    /// Ends the read transaction; the view can no longer be read.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        try? queue.inDatabase { db in try db.execute(sql: "ROLLBACK") }
    }

    deinit { close() }
}
