import Foundation
import CSQLiteSettings
import GRDB

/// A SQLite database whose schema is derived from an `ObjectModel`.
///
/// Opening a store creates the schema, or migrates it additively when modules added entities or
/// attributes, and refuses a database made by an incompatible model (a removed attribute, a
/// changed type) with a message listing why: data is never dropped silently.
public final class Store: Sendable {
    /// The model the store's schema is derived from.
    public let model: ObjectModel
    /// The file path, or `:memory:`.
    public let path: String
    let queue: DatabaseQueue
    let schema: Schema
    private let observerBox = ObserverBox()

    static let busyTimeoutMilliseconds = 30_000

    /// SQLite counts every allocation it makes under a process-wide mutex, for statistics nothing
    /// here reads: a bulk import makes millions. Must run before the first connection opens.
    private static let memoryStatisticsOff: Void = { _ = tv_sqlite_turn_off_memory_statistics() }()

    /// Opens (creating if needed) the database at `path`. `readOnly` opens an existing database of
    /// this very model for reading only (`serve`'s connection, beside a nightly writer: with WAL
    /// each read sees the last commit); it neither creates nor migrates anything.
    public convenience init(path: String, model: ObjectModel, readOnly: Bool = false) throws {
        _ = Self.memoryStatisticsOff
        var config = Configuration()
        config.foreignKeysEnabled = true
        // `dryRun(_:)` keeps a transaction open across accesses; `write` refuses to begin inside any other.
        config.allowsUnsafeTransactions = true
        // A reader (`status`) waits for a nightly write instead of failing at once.
        config.busyMode = .timeout(TimeInterval(Self.busyTimeoutMilliseconds) / 1000)
        config.readonly = readOnly
        if readOnly {
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -8192") }
        } else { config.prepareDatabase { db in
            Self.leaveTriggersToOthers(db)
            // Defaults are tuned for safety on phones; a nightly batch job wants WAL, fewer fsyncs,
            // a larger cache and no zero-filling of freed pages. 8 MiB of cache: 32 MiB bought no
            // speed in alternating runs of first imports, re-imports and shared re-imports of
            // 200 x 7 and 1000 x 14 (scripts/bench's guides), and cost 30 to 40 MB more peak RSS.
            // 2 KiB pages for a new database (an existing one keeps its own): a night's re-import
            // changes programmes scattered over the whole file, and every change writes its whole
            // page twice (log, then checkpoint). Half the page, half those bytes: the re-import of
            // a 200-channel week takes a tenth less; its first import a sixth more (more pages).
            if try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 { try db.execute(sql: "PRAGMA page_size = 2048") }
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -8192")
            try db.execute(sql: "PRAGMA secure_delete = OFF")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        } }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        try self.init(queue: queue, path: path, model: model, readOnly: readOnly)
    }

    /// An in-memory store, for tests (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed); `pageSize` when it must match another database's
    /// (SQLite's backup API copies only between equal page sizes into memory).
    public static func inMemory(model: ObjectModel, pageSize: Int? = nil) throws -> Store {
        _ = memoryStatisticsOff
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.allowsUnsafeTransactions = true   // `dryRun(_:)`
        config.prepareDatabase { db in
            Self.leaveTriggersToOthers(db)
            if let pageSize { try db.execute(sql: "PRAGMA page_size = \(pageSize)") }
        }
        return try Store(queue: DatabaseQueue(configuration: config), path: ":memory:", model: model)
    }

    private init(queue: DatabaseQueue, path: String, model: ObjectModel, readOnly: Bool = false) throws {
        self.queue = queue
        self.path = path
        self.model = model
        self.schema = Schema(model: model)
        try migrate(readOnly: readOnly)
        sameRowFingerprints.value = Set(try queue.read { db in try Self.storedSameRowFingerprints(in: db) })
    }

    // MARK: Writes since

    // `undo` checks every object a change wrote against the change file before reverting it,
    // unless nothing wrote since: then the store is as the change left it (issue 33). What wrote
    // last is a token in the meta table: each `write` (and `withDatabase`) of this library sets a
    // new one in its transaction, and triggers on every table of the model set one when anything
    // else (sqlite3, an older tvimport) writes a row. The library's own connections do not fire
    // the triggers, so that an import pays nothing for them.

    private static let writeTokenKey = "writes"
    private let lastToken = Locked<String?>(nil)

    /// The token of the last transaction this store committed (nil before the first one).
    public var lastWriteToken: String? { lastToken.value }

    /// The token of the database's last write, by whatever wrote it (nil if none was recorded),
    /// read on `db` (inside a transaction, so that nothing writes between reading and acting).
    public static func writeToken(in db: Database) throws -> String? {
        try metaValue(writeTokenKey, in: db)
    }

    /// `writeToken(in:)` on this store's connection.
    public func writeToken() throws -> String? {
        try queue.read { db in try Self.writeToken(in: db) }
    }

    private static func setNewWriteToken(_ db: Database) throws -> String {
        let token = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        try db.execute(sql: "INSERT OR REPLACE INTO \(quote(metaTable)) (key, value) VALUES (?, ?)", arguments: [writeTokenKey, token])
        return token
    }

    /// This library's connections write without firing the triggers: it sets the token itself.
    private static func leaveTriggersToOthers(_ db: Database) {
        _ = tv_sqlite_enable_triggers(db.sqliteConnection, 0)
    }

    /// The triggers of a table: any write of a row by another writer sets a new token.
    static func writeTriggerSQL(_ table: String) -> [String] {
        ["INSERT", "UPDATE", "DELETE"].map { operation in
            "CREATE TRIGGER IF NOT EXISTS \(quote("_tvimport_written_\(table)_\(operation.lowercased())")) AFTER \(operation) ON \(quote(table)) "
                + "BEGIN INSERT OR REPLACE INTO \(quote(metaTable)) (key, value) VALUES ('\(writeTokenKey)', 'outside ' || hex(randomblob(8))); END"
        }
    }

    /// Whether every table of the model has its triggers (a database made before them gets them
    /// when a writer opens it).
    private func hasWriteTriggers(_ db: Database) throws -> Bool {
        let names = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '\\_tvimport\\_written\\_%' ESCAPE '\\'"))
        return schema.tables.allSatisfy { table in
            ["insert", "update", "delete"].allSatisfy { names.contains("_tvimport_written_\(table.name)_\($0)") }
        }
    }

    /// The fingerprint of the model's schema, as stored in the database.
    public var fingerprint: String { schema.fingerprint }

    /// The fingerprints whose change files apply to this store: its own and those of the earlier
    /// models it was migrated from that differed from it in indexes only (their rows are the
    /// same: a release that drops or adds an index leaves the last night's undo working).
    public var acceptedFingerprints: Set<String> { sameRowFingerprints.value.union([schema.fingerprint]) }
    private let sameRowFingerprints = Locked<Set<String>>([])

    // MARK: Observers

    /// Registers an observer for every context this store creates from now on.
    public func addObserver(_ observer: any ContextObserver) {
        observerBox.add(observer)
    }

    // MARK: Transactions

    /// How a write transaction survives a crash; either way a crash leaves the state before or after it.
    ///
    /// ```swift
    /// let journal: Store.Journal = try store.holdsNoObjects() ? .rollback : .writeAhead
    /// try store.write(journal: journal) { context in
    ///     try context.insert("Channel", ["id": .string("bbc1")])
    /// }
    /// ```
    public enum Journal: Sendable {
        /// The write-ahead log (the store's mode): readers in other processes go on reading the last
        /// commit while the transaction runs. Every page it writes is written twice: to the log,
        /// then, at the checkpoint, to the database.
        case writeAhead
        /// A rollback journal, for a transaction that fills a store holding (next to) nothing:
        /// pages are written once, and only those that existed before are copied to the journal
        /// (`holdsNoObjects()`). Readers cannot read while it writes, so it is used only when no
        /// other connection has the database open (SQLite cannot leave the log otherwise): else
        /// the log is. Foreign keys are not checked meanwhile: for a transaction whose every row
        /// is its own, parents first (docs/design.md, "The first import"). The store is back in
        /// write-ahead mode, with foreign keys checked, once the transaction ends.
        case rollback
    }

    /// Whether no entity of the model has a stored object (side tables aside).
    public func holdsNoObjects() throws -> Bool {
        try queue.read { db in
            try schema.tables.allSatisfy { table in
                try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quote(table.name)))")!
            }
        }
    }

    /// Runs `body` in one write transaction and commits it, or rolls it back when `dryRun` is true
    /// or `body` throws. Observers see every change as it is processed and, after a commit, the save.
    /// `journal` is how the transaction is kept safe (`Journal`).
    ///
    /// `checkingForeignKeys: false` is for a transaction that deletes every object
    /// (`ObjectContext.deleteEveryObject()`): no row can be left referring to one gone, and
    /// unchecked, SQLite clears each table at once. Checked, it deletes row by row and keeps every
    /// page it changes in a statement journal, in memory (`temp_store`): 216 MB for the undo of a
    /// 1000-channel fortnight. Foreign keys are checked again once the transaction ends.
    @discardableResult
    public func write<T>(dryRun: Bool = false, recordChanges: Bool = true, journal: Journal = .writeAhead,
                         checkingForeignKeys: Bool = true,
                         _ body: (ObjectContext) throws -> T) throws -> (result: T, summary: ChangeSummary) {
        var outcome: (T, ChangeSummary)?
        var token: String?
        let observers = observerBox.all
        do {
        try queue.writeWithoutTransaction { db in
            func runBody() throws {
                let context = ObjectContext(db: db, store: self, observers: observers, recordChanges: recordChanges)
                let result = try body(context)
                try context.processPendingChanges()
                outcome = (result, context.summary)
            }
            if dryRunOpen.value {
                // Inside `dryRun(_:)`: kept for the writes after this one, rolled back with it.
                guard dryRun else { throw ObjectGraphError.invalidOperation("a write inside a dry run must be a dry run") }
                try db.inSavepoint { try runBody(); return .commit }
                return
            }
            guard !db.isInsideTransaction else { throw ObjectGraphError.invalidOperation("a transaction was left open") }
            let rollbackJournal = journal == .rollback && !dryRun && leaveWriteAheadLog(db)
            defer { if rollbackJournal { returnToWriteAheadLog(db) } }
            let uncheckedKeys = !checkingForeignKeys && !dryRun
            if uncheckedKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if uncheckedKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try db.inTransaction(.immediate) {
                let changesBefore = db.totalChangesCount
                try runBody()
                if dryRun { return .rollback }
                // A transaction that wrote no row leaves the database as it was, byte for byte.
                if db.totalChangesCount != changesBefore { token = try Self.setNewWriteToken(db) }
                return .commit
            }
        }
        } catch {
            for observer in observers { observer.contextDidRollBack() }
            throw namingBusy(error)
        }
        let (result, summary) = outcome!
        if let token { lastToken.value = token }
        for observer in observers {
            if dryRun { observer.contextDidRollBack() } else { observer.contextDidSave(summary) }
        }
        return (result, summary)
    }

    /// SQLite's "database is locked" after the busy timeout, as `StoreError.busy`: what to do
    /// about it (wait for the other writer) is not what to do about a broken file.
    private func namingBusy(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError, error.resultCode == .SQLITE_BUSY else { return error }
        return StoreError.busy(path: path, seconds: Self.busyTimeoutMilliseconds / 1000)
    }

    // MARK: Dry runs of several steps

    private let dryRunOpen = Locked(false)

    /// Whether `dryRun(_:)` is running: what is written now goes with its rollback.
    public var isInDryRun: Bool { dryRunOpen.value }

    /// Runs `body` in one transaction that is always rolled back. Every write in it must be a dry
    /// run (`write(dryRun: true)`), and each keeps its changes there (a savepoint) for the reads and
    /// writes after it: a dry run of several steps (a night's sources, then retention) sees what
    /// each step before it would have done, as the real run would, and leaves the database as it
    /// was. The transaction holds the write lock from its start to its end: taken later, it could
    /// meet a commit made since its first read, and fail.
    public func dryRun<T>(_ body: () throws -> T) throws -> T {
        do {
            try queue.writeWithoutTransaction { db in
                guard !db.isInsideTransaction else { throw ObjectGraphError.invalidOperation("a dry run inside a transaction") }
                try db.beginTransaction(.immediate)
            }
        } catch {
            throw namingBusy(error)
        }
        dryRunOpen.value = true
        defer {
            dryRunOpen.value = false
            try? queue.writeWithoutTransaction { db in if db.isInsideTransaction { try db.rollback() } }
        }
        return try body()
    }

    /// Runs `body` with a read-only context.
    public func read<T>(_ body: (ObjectContext) throws -> T) throws -> T {
        try queue.read { db in
            try body(ObjectContext(db: db, store: self, observers: [], recordChanges: false))
        }
    }

    /// Copies the write-ahead log into the database file and empties it (after a long-lived
    /// reader, such as a `FrozenStoreView`, held it back). Best effort, and without waiting: a
    /// truncating checkpoint holds the write lock while it waits for readers, and a reader in
    /// another process that then wants to write would wait for this one: a deadlock until the
    /// busy timeout. A busy log stays for the next checkpoint.
    public func checkpoint() {
        _ = try? queue.writeWithoutTransaction { db in
            try Self.withoutWaiting(db) { try db.checkpoint(.truncate) }
        }
    }

    /// Rebuilds the database file without its free pages (`VACUUM`), then empties the log. For a
    /// store just emptied: its pages would otherwise stay in the file as free pages, as large as
    /// the guide was. Best effort, and without waiting: another connection (`serve`) reading or
    /// writing leaves the file as it is, for the next import to reuse its free pages.
    public func compact() {
        _ = try? queue.writeWithoutTransaction { db in
            try Self.withoutWaiting(db) {
                try db.execute(sql: "VACUUM")
                try db.checkpoint(.truncate)
            }
        }
    }

    /// Runs `body` with SQLite's busy timeout off: what another connection holds fails at once,
    /// instead of waiting (and maybe deadlocking, `checkpoint()`).
    private static func withoutWaiting<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "PRAGMA busy_timeout = 0")
        defer { try? db.execute(sql: "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)") }
        return try body()
    }

    /// Switches to a rollback journal if no other connection has the database open (without
    /// waiting: SQLite refuses at once then, and the log is used). Full syncs while it is on: the
    /// journal must be on disk before the database is written over. Foreign keys unchecked (`Journal.rollback`).
    private func leaveWriteAheadLog(_ db: Database) -> Bool {
        do {
            guard try Self.withoutWaiting(db, { try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }) == "delete" else { return false }
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            return true
        } catch {
            return false
        }
    }

    /// Back to the store's own mode (`init(path:model:readOnly:)`). Should it fail (a reader
    /// opened the database meanwhile), the next connection that opens the store switches.
    private func returnToWriteAheadLog(_ db: Database) {
        try? db.execute(sql: "PRAGMA journal_mode = WAL")
        try? db.execute(sql: "PRAGMA synchronous = NORMAL")
        try? db.execute(sql: "PRAGMA foreign_keys = ON")
    }

    /// Direct access for code below the object layer (benchmarks, run records, raw checks).
    public func withDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.writeWithoutTransaction { db in
            let changesBefore = db.totalChangesCount
            // It may have written rows (not read by the triggers: a connection of this library).
            defer { if db.totalChangesCount != changesBefore { _ = try? Self.setNewWriteToken(db) } }
            return try body(db)
        }
    }

    // MARK: Schema

    private static let metaTable = "_tvimport_meta"
    /// The meta key of `acceptedFingerprints`' earlier ones, space-separated.
    private static let sameRowsKey = "sameRowsAs"

    /// A value of the meta table, nil when it has none.
    private static func metaValue(_ key: String, in db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM \(quote(metaTable)) WHERE key = ?", arguments: [key])
    }

    /// The fingerprints of earlier models with the same rows, as the meta table lists them.
    private static func storedSameRowFingerprints(in db: Database) throws -> [String] {
        (try metaValue(sameRowsKey, in: db) ?? "").split(separator: " ").map(String.init)
    }

    private func migrate(readOnly: Bool) throws {
        let schema = self.schema
        // The usual case, a database of this very model, needs no write (and so no write lock).
        let current = try queue.read { db -> Bool in
            guard try db.tableExists(Self.metaTable) else { return false }
            return try Self.metaValue("fingerprint", in: db) == schema.fingerprint
                && (readOnly || hasWriteTriggers(db))
        }
        if current { return }
        try queue.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(quote(Self.metaTable)) (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                let stored = try Self.metaValue("fingerprint", in: db)
                if stored == schema.fingerprint {
                    for table in schema.tables { for sql in Self.writeTriggerSQL(table.name) { try db.execute(sql: sql) } }
                    return .commit
                }

                var reasons: [String] = []
                var statements: [String] = []
                for table in schema.tables {
                    let exists = try db.tableExists(table.name)
                    let existing = exists
                        ? try db.columns(in: table.name).reduce(into: [String: String]()) { $0[$1.name] = $1.type.uppercased() }
                        : [:]
                    if !exists {
                        statements.append(Schema.createTableSQL(table))
                    } else {
                        for column in table.columns {
                            if let type = existing[column.name] {
                                if type != column.sqlType {
                                    reasons.append("\(table.name).\(column.name) is \(type) in the database but \(column.sqlType) in the model")
                                }
                            } else {
                                statements.append("ALTER TABLE \(quote(table.name)) ADD COLUMN \(Schema.columnSQL(column))")
                            }
                        }
                        let modelColumns = Set(table.columns.map(\.name) + [Schema.rowIDColumn, Schema.entityColumn])
                        for name in existing.keys.sorted() where !modelColumns.contains(name) {
                            reasons.append("\(table.name).\(name) exists in the database but no module of the model declares it (was a module removed from the config?)")
                        }
                    }
                    if exists {
                        // An index the model no longer declares (an attribute that lost its index) costs every write.
                        let kept = Schema.indexNames(table)
                        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", arguments: [table.name])
                        where name.hasPrefix(table.name + "_") && !kept.contains(name) {
                            statements.append("DROP INDEX \(quote(name))")
                        }
                    }
                    statements += Schema.indexSQL(table)
                }
                let modelTables = Set(schema.tables.map(\.name))
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\'")
                where !modelTables.contains(name) {
                    reasons.append("table \(name) exists in the database but no module of the model declares that entity")
                }
                if !reasons.isEmpty { throw ObjectGraphError.incompatibleStore(path: path, reasons: reasons) }
                for table in schema.tables { statements += Self.writeTriggerSQL(table.name) }
                for sql in statements { try db.execute(sql: sql) }
                // The model before this one had the same rows when only indexes differ: its change
                // files (and those of the models it had the same rows as) still apply.
                var sameRows: [String] = []
                if let stored, let storedText = try Self.metaValue("schema", in: db),
                   Schema.rowsText(storedText) == Schema.rowsText(schema.canonicalText) {
                    sameRows = try Self.storedSameRowFingerprints(in: db).filter { $0 != schema.fingerprint } + [stored]
                }
                try db.execute(sql: "INSERT OR REPLACE INTO \(quote(Self.metaTable)) (key, value) VALUES ('fingerprint', ?), ('schema', ?), (?, ?)",
                               arguments: [schema.fingerprint, schema.canonicalText, Self.sameRowsKey, sameRows.joined(separator: " ")])
                return .commit
            }
        }
    }
}

/// Errors opening a store.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// SQLite could not open (or create) the database at `path`; `reason` is SQLite's message.
    case cannotOpen(path: String, reason: String)
    /// Another connection (another tvimport: a run, an import, a dry run) held the write lock
    /// for `seconds`, the busy timeout; nothing was written.
    case busy(path: String, seconds: Int)
    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open database \(path): \(reason)"
        case let .busy(path, seconds):
            "database \(path) is busy: another writer (a tvimport run, import or dry run?) held it for \(seconds) s; nothing was changed, try again when it is done"
        }
    }
}

/// A value that several threads read and set.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

private final class ObserverBox: @unchecked Sendable {
    private let lock = NSLock()
    private var observers: [any ContextObserver] = []
    func add(_ o: any ContextObserver) { lock.withLock { observers.append(o) } }
    var all: [any ContextObserver] { lock.withLock { observers } }
}
