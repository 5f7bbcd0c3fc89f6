import GRDB
import GRDBSQLite

/// Binds `Value`s straight to a prepared statement and steps it. Bulk imports insert millions of
/// rows; GRDB's `StatementArguments` boxes every value through a key path first, which profiling
/// showed to cost more than SQLite's own work.
enum RawStatement {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func execute(_ statement: Statement, in db: Database, values: ArraySlice<Value>) throws {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        // Every string is bound where it is (SQLITE_STATIC), so SQLite copies none: a long one in
        // its own storage, which the caller's array keeps; a short one (stored inside its value)
        // copied into `shortStrings`, which lives until the statement is unbound, as SQLite asks.
        try withUnsafeTemporaryAllocation(byteCount: values.count * smallStringCapacity, alignment: 1) { shortStrings in
            defer { sqlite3_clear_bindings(s) }
            var index: Int32 = 1
            var shortStringsUsed = 0
            for v in values {
                if case .string(let text) = v, text.utf8.count <= smallStringCapacity {
                    bindShort(text, s, index, into: shortStrings, at: &shortStringsUsed)
                } else {
                    bind(v, s, index, valuesOutliveStep: true)
                }
                index += 1
            }
            let code = sqlite3_step(s)
            if code != SQLITE_DONE {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(s)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
            }
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

    /// `valuesOutliveStep`: the value is kept (by the caller's array) until the statement has run
    /// and is unbound, so SQLite may read a long string where it is instead of copying it
    /// (SQLITE_STATIC; a cursor, which steps after its arguments are gone, binds copies).
    @inline(__always)
    static func bind(_ value: Value, _ s: OpaquePointer, _ i: Int32, valuesOutliveStep: Bool = false) {
        switch value {
        case .null: sqlite3_bind_null(s, i)
        case .integer(let n), .date(let n): sqlite3_bind_int64(s, i, n)
        case .bool(let b): sqlite3_bind_int64(s, i, b ? 1 : 0)
        case .double(let d): sqlite3_bind_double(s, i, d)
        case .string(var text):
            // A string longer than 15 bytes lives in its own storage, which the caller's array
            // keeps; a shorter one is stored inside the value, and this copy of it goes away.
            if valuesOutliveStep && text.utf8.count > 15,
               text.utf8.withContiguousStorageIfAvailable({ buffer in
                   sqlite3_bind_text(s, i, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(buffer.count), nil)
               }) != nil {
                return
            }
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
