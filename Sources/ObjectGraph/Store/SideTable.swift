import Foundation
import GRDB

/// A table of the application's own kept beside the model's entities in the same database file,
/// one row per text key: settings, HTTP validators, anything that is not an object of the model
/// but must commit or roll back with the database. Its name starts with `_`, so the schema
/// migration neither creates, checks nor reports it.
///
/// ```swift
/// let settings = SideTable(name: "_app_settings", key: "key",
///                          columns: [AttributeDescription("value", .string, optional: false)])
/// try store.create(settings)
/// try store.save(["value": .string("[]")], forKey: "modules", in: settings)
/// let modules = try store.row(forKey: "modules", in: settings)?["value"]?.stringValue
/// ```
public struct SideTable: Sendable, Hashable {
    /// The table's name: it must start with `_`.
    public let name: String
    /// The primary key column (text).
    public let key: String
    /// The other columns; a non-optional one is declared `NOT NULL`.
    public let columns: [AttributeDescription]

    /// A side table named `name` (starting with `_`), keyed by the text column `key`.
    public init(name: String, key: String, columns: [AttributeDescription]) {
        precondition(name.hasPrefix("_"), "a side table's name starts with _ (the schema migration leaves those alone)")
        self.name = name
        self.key = key
        self.columns = columns
    }

    var createSQL: String {
        let declarations = ["\(quote(key)) TEXT PRIMARY KEY"]
            + columns.map { "\(quote($0.name)) \($0.type.sqlType)\($0.isOptional ? "" : " NOT NULL")" }
        return "CREATE TABLE IF NOT EXISTS \(quote(name)) (\(declarations.joined(separator: ", ")))"
    }

    var selectSQL: String {
        // A table of keys alone selects a constant: whether the row is there.
        "SELECT \(columns.isEmpty ? "1" : columns.map { quote($0.name) }.joined(separator: ", ")) FROM \(quote(name)) WHERE \(quote(key)) = ?"
    }

    /// An upsert that writes nothing when the row already holds these values.
    var saveSQL: String {
        let names = [key] + columns.map(\.name)
        let updates = columns.map { "\(quote($0.name)) = excluded.\(quote($0.name))" }.joined(separator: ", ")
        let differs = columns.map { "\(quote($0.name)) IS NOT excluded.\(quote($0.name))" }.joined(separator: " OR ")
        return "INSERT INTO \(quote(name)) (\(names.map(quote).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
            + (columns.isEmpty ? " ON CONFLICT DO NOTHING" : " ON CONFLICT(\(quote(key))) DO UPDATE SET \(updates) WHERE \(differs)")
    }

    func row(forKey keyValue: String, in db: Database) throws -> [String: Value]? {
        guard try db.tableExists(name), let row = try Row.fetchOne(db, sql: selectSQL, arguments: [keyValue]) else { return nil }
        var values: [String: Value] = [:]
        for (i, column) in columns.enumerated() {
            values[column.name] = Value(row[i] as DatabaseValue, type: column.type)
        }
        return values
    }
}

extension Store {
    /// Creates `table` unless the database has it already.
    public func create(_ table: SideTable) throws {
        try queue.writeWithoutTransaction { db in try db.execute(sql: table.createSQL) }
    }

    /// The row of `table` with this key, by column name; nil when there is no such row (or table).
    public func row(forKey key: String, in table: SideTable) throws -> [String: Value]? {
        try queue.read { db in try table.row(forKey: key, in: db) }
    }

    /// Inserts or updates the row with this key; a column left out of `values` is stored as null.
    public func save(_ values: [String: Value], forKey key: String, in table: SideTable) throws {
        let arguments = [key.databaseValue] + table.columns.map { (values[$0.name] ?? .null).databaseValue }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: table.saveSQL, arguments: StatementArguments(arguments))
        }
    }

    /// Reads one row of a side table of the database file at `path` without opening it as a store
    /// (no model needed: commands that take no config read what a config stored). Nil when the
    /// file, the table or the row does not exist.
    public static func row(forKey key: String, in table: SideTable, ofDatabaseAt path: String) throws -> [String: Value]? {
        guard access(path, F_OK) == 0 else { return nil }
        var config = Configuration()
        config.busyMode = .timeout(Double(busyTimeoutMilliseconds) / 1000)
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        return try queue.read { db in try table.row(forKey: key, in: db) }
    }
}

extension Value {
    /// A stored value read back as `type`.
    init(_ stored: DatabaseValue, type: AttributeType) {
        switch stored.storage {
        case .null: self = .null
        case .int64(let i):
            switch type {
            case .bool: self = .bool(i != 0)
            case .date: self = .date(i)
            case .double: self = .double(Double(i))
            default: self = .integer(i)
            }
        case .double(let d): self = type == .integer ? .integer(Int64(d)) : .double(d)
        case .string(let s): self = .string(s)
        case .blob(let data): self = .data(Array(data))
        }
    }
}

extension SideTable {
    func rows(in db: Database) throws -> [String: [String: Value]] {
        guard try db.tableExists(name) else { return [:] }
        var all: [String: [String: Value]] = [:]
        let sql = "SELECT \(([key] + columns.map(\.name)).map(quote).joined(separator: ", ")) FROM \(quote(name))"
        for row in try Row.fetchAll(db, sql: sql) {
            guard let keyValue = String.fromDatabaseValue(row[0] as DatabaseValue) else { continue }
            var values: [String: Value] = [:]
            for (i, column) in columns.enumerated() { values[column.name] = Value(row[i + 1] as DatabaseValue, type: column.type) }
            all[keyValue] = values
        }
        return all
    }
}

extension Store {
    /// Every row of a small side table, by key (for example a register of files).
    public func rows(in table: SideTable) throws -> [String: [String: Value]] {
        try queue.read { db in try table.rows(in: db) }
    }
}

extension ObjectContext {
    /// Inserts or updates a side table's row inside this context's transaction, so that it commits
    /// or rolls back with the objects (the table must exist: `Store.create(_:)`).
    public func save(_ values: [String: Value], forKey key: String, in table: SideTable) throws {
        let arguments = [key.databaseValue] + table.columns.map { (values[$0.name] ?? .null).databaseValue }
        try db.execute(sql: table.saveSQL, arguments: StatementArguments(arguments))
    }
}

extension ObjectContext {
    /// Removes every row of a side table inside this context's transaction (nothing when the
    /// table does not exist).
    public func removeAllRows(in table: SideTable) throws {
        guard try db.tableExists(table.name) else { return }
        try db.execute(sql: "DELETE FROM \(quote(table.name))")
    }
}
