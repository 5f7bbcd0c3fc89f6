import GRDB
import GRDBSQLite

/// Binds `Value`s straight to a prepared statement and steps it. Bulk imports insert millions of
/// rows; GRDB's `StatementArguments` boxes every value through a key path first, which profiling
/// showed to cost more than SQLite's own work.
enum RawStatement {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func execute(_ statement: Statement, in db: Database, values: ArraySlice<Value>) throws {
        var binder = Binder(statement, valueCount: values.count)
        defer { binder.unbind() }
        for v in values { binder.bind(v) }
        try binder.step(db)
    }

    /// Binds `values` and returns the first column of the statement's first row as an integer
    /// (a `SELECT COUNT(*)`), nil for none or a null. Bound here, as every query of a context is:
    /// GRDB's arguments bind a string only up to its first NUL, so a count would have matched
    /// other objects than a fetch with the same predicate.
    static func integer(_ statement: Statement, in db: Database, values: [Value]) throws -> Int64? {
        let handle = statement.sqliteStatement
        rebind(handle, to: values)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return sqlite3_column_type(handle, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, 0)
        case SQLITE_DONE: return nil
        default:
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
    }

    /// Resets a statement and binds copies of `values` as its parameters, from the first (a
    /// cursor's or a count's: they step after the values are gone).
    static func rebind(_ handle: OpaquePointer, to values: [Value]) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() { bind(value, handle, Int32(i + 1)) }
    }

    /// Binds the rows' values, each row's row id and entity (for a table that stores several)
    /// before its own, and runs the statement once: a multi-row INSERT of rows kept as they were made.
    static func execute(_ statement: Statement, in db: Database, rows: ArraySlice<PendingRow>, lead leadCount: Int) throws {
        try rows.withUnsafeBufferPointer { rows in
            var valueCount = 0
            for r in rows.indices { valueCount += leadCount + rows[r].values.count }
            var binder = Binder(statement, valueCount: valueCount)
            // Nulls are not bound: a multi-row INSERT is run by this function only, which leaves
            // every parameter null after each run (`unbind`), as a new statement has them. (Rows
            // are mostly nulls: clearing every parameter at once costs a fraction of binding each.)
            defer { binder.unbind() }
            // Rows and values read where they are: copying each out would retain and release
            // its storage, allocated on the thread that read the guide.
            for r in rows.indices {
                binder.bind(integer: rows[r].rowID)
                if let entityName = rows[r].entityName { binder.bind(.string(entityName)) }
                rows[r].values.withUnsafeBufferPointer { values in
                    for i in values.indices {
                        if values[i].isNull { binder.skip() } else { binder.bind(values[i]) }
                    }
                }
            }
            try binder.step(db)
        }
    }

    /// One row of a multi-row INSERT: the row id, the entity (for a table that stores several),
    /// and the row's values.
    struct PendingRow {
        var rowID: Int64
        var entityName: String?
        var values: [Value]
    }

    /// Binds values in order to a statement. Every string is bound where it is (SQLITE_STATIC),
    /// so SQLite copies none: a long one in its own storage, which the caller's values keep; a
    /// short one (stored inside its value) copied into `shortStrings`. `unbind` must run before
    /// those go away, as SQLite asks.
    private struct Binder {
        let statement: Statement
        let handle: OpaquePointer
        let shortStrings: UnsafeMutableRawBufferPointer
        var index: Int32 = 1
        var shortStringsUsed = 0

        init(_ statement: Statement, valueCount: Int) {
            self.statement = statement
            handle = statement.sqliteStatement
            sqlite3_reset(handle)
            shortStrings = .allocate(byteCount: max(1, valueCount * smallStringCapacity), alignment: 1)
        }

        /// Leaves the next parameter as it is (null, after `unbind`).
        @inline(__always)
        mutating func skip() { index += 1 }

        @inline(__always)
        mutating func bind(integer: Int64) {
            sqlite3_bind_int64(handle, index, integer)
            index += 1
        }

        @inline(__always)
        mutating func bind(_ value: Value) {
            defer { index += 1 }
            guard case .string(let text) = value else { return RawStatement.bind(value, handle, index) }
            if text.utf8.count <= smallStringCapacity {
                bindShort(text, handle, index, into: shortStrings, at: &shortStringsUsed)
            } else if text.utf8.withContiguousStorageIfAvailable({ buffer in
                sqlite3_bind_text(handle, index, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(buffer.count), nil)
            }) == nil {
                RawStatement.bind(value, handle, index)   // not contiguous UTF-8 (a bridged string): a copy
            }
        }

        func step(_ db: Database) throws {
            let code = sqlite3_step(handle)
            if code != SQLITE_DONE {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
            }
        }

        func unbind() {
            sqlite3_clear_bindings(handle)
            shortStrings.deallocate()
        }
    }

    /// The most UTF-8 bytes a Swift string holds inside its value (on 64-bit platforms).
    private static let smallStringCapacity = 15

    @inline(__always)
    private static func bindShort(_ text: String, _ s: OpaquePointer, _ i: Int32,
                                  into buffer: UnsafeMutableRawBufferPointer, at used: inout Int) {
        var text = text
        let start = buffer.baseAddress! + used
        let count = text.withUTF8 { utf8 -> Int in
            if utf8.count > 0 { start.copyMemory(from: utf8.baseAddress!, byteCount: utf8.count) }
            return utf8.count
        }
        used += count
        // A zero length with a non-NULL pointer: the empty string, not NULL.
        sqlite3_bind_text(s, i, start.assumingMemoryBound(to: CChar.self), Int32(count), nil)
    }

    /// Binds a copy of the value (SQLITE_TRANSIENT): for a cursor, which steps after its
    /// arguments are gone. `Binder` binds strings where they are.
    @inline(__always)
    static func bind(_ value: Value, _ s: OpaquePointer, _ i: Int32) {
        switch value {
        case .null: sqlite3_bind_null(s, i)
        case .integer(let n), .date(let n): sqlite3_bind_int64(s, i, n)
        case .bool(let b): sqlite3_bind_int64(s, i, b ? 1 : 0)
        case .double(let d): sqlite3_bind_double(s, i, d)
        case .string(var text):
            text.withUTF8 { buffer in
                if let base = buffer.baseAddress, buffer.count > 0 {
                    _ = sqlite3_bind_text(s, i, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(buffer.count), transient)
                } else {
                    // SQLite reads a NULL pointer as NULL, not as the empty string.
                    _ = sqlite3_bind_text(s, i, "", 0, transient)
                }
            }
        case .data(let bytes):
            bytes.withUnsafeBytes { buffer in
                _ = sqlite3_bind_blob(s, i, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
            }
        }
    }
}
