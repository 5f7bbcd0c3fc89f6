import Primitives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The type of an attribute, and of the SQLite column it is stored in.
public enum AttributeType: String, Sendable, Codable, CaseIterable {
    /// Text, compared by UTF-8 bytes (SQLite `TEXT`).
    case string
    /// A 64-bit signed integer (SQLite `INTEGER`).
    case integer
    /// A double (SQLite `REAL`).
    case double
    /// A boolean, stored as 0 or 1 (SQLite `INTEGER`).
    case bool
    /// A UTC instant in whole seconds since 1970 (SQLite `INTEGER`).
    case date
    /// Bytes (SQLite `BLOB`).
    case data

    /// The SQLite column affinity.
    var sqlType: String {
        switch self {
        case .string: "TEXT"
        case .integer, .bool, .date: "INTEGER"
        case .double: "REAL"
        case .data: "BLOB"
        }
    }
}

/// One attribute value. Dates are UTC instants in whole seconds since 1970 (XMLTV has no finer
/// resolution), which keeps them exact, cheap to compare and identical in SQL.
///
/// Strings compare and hash by their UTF-8 bytes, not by Swift's canonical equivalence: that is how
/// SQLite's BINARY collation compares them, and a merge that mixed the two would see "é" and
/// "e\u{301}" as one identifier in Swift and two in the store (see docs/design.md#identifiers-are-bytes).
///
/// ```swift
/// try context.update(id, ["title": .string("News"), "start": .date(1_780_000_000), "length": .null])
/// ```
public enum Value: Sendable, CustomStringConvertible {
    /// No value (SQL `NULL`).
    case null
    /// Text.
    case string(String)
    /// A 64-bit integer.
    case integer(Int64)
    /// A double.
    case double(Double)
    /// A boolean.
    case bool(Bool)
    /// A UTC instant, whole seconds since 1970.
    case date(Int64)
    /// Bytes.
    case data([UInt8])

    /// True for `.null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The text of a `.string`, else nil.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The number of an `.integer` or `.date` (and a `.bool` as 0 or 1), else nil.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i), .date(let i): i
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }
    /// The truth of a `.bool` (or a non-zero `.integer`), else nil.
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): b
        case .integer(let i): i != 0
        default: nil
        }
    }
    /// The number of a `.double` or an `.integer`, else nil.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .string(let s): s
        case .integer(let i): String(i)
        case .double(let d): String(d)
        case .bool(let b): String(b)
        case .date(let d): UTCTime.iso8601(d)
        case .data(let d): "<\(d.count) bytes>"
        }
    }

    /// Whether this value may be stored in an attribute of `type`.
    public func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _), (.string, .string), (.integer, .integer), (.double, .double),
             (.bool, .bool), (.date, .date), (.data, .data):
            true
        default:
            false
        }
    }
}

/// Byte equality of UTF-8 (canonically equal NFC and NFD spellings differ, as in SQLite).
@inline(__always)
func sameUTF8(_ a: String, _ b: String) -> Bool {
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in Bytes.equal(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
}

extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.string(a), .string(b)): sameUTF8(a, b)
        case let (.integer(a), .integer(b)): a == b
        case let (.double(a), .double(b)): a == b || (a.isNaN && b.isNaN)
        case let (.bool(a), .bool(b)): a == b
        case let (.date(a), .date(b)): a == b
        case let (.data(a), .data(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .string(var s):
            hasher.combine(1)
            s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .integer(let i): hasher.combine(2); hasher.combine(i)
        case .double(let d): hasher.combine(3); hasher.combine(d)
        case .bool(let b): hasher.combine(4); hasher.combine(b)
        case .date(let d): hasher.combine(5); hasher.combine(d)
        case .data(let d): hasher.combine(6); hasher.combine(d)
        }
    }
}

extension Value {
    /// Total order used by the merge: the order of SQLite's `ORDER BY` with BINARY collation
    /// (NULL < numbers < text < blobs; text by UTF-8 bytes).
    public static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        func rank(_ v: Value) -> Int {
            switch v {
            case .null: 0
            case .integer, .double, .bool, .date: 1
            case .string: 2
            case .data: 3
            }
        }
        let (lr, rr) = (rank(lhs), rank(rhs))
        if lr != rr { return lr < rr ? -1 : 1 }
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return compareUTF8(a, b)
        case let (.data(a), .data(b)): return compareBytes(a, b)
        case (.null, .null): return 0
        default:
            if let a = lhs.integerValue, let b = rhs.integerValue, !(lhs.isDouble || rhs.isDouble) {
                return a < b ? -1 : (a == b ? 0 : 1)
            }
            let a = lhs.doubleValue ?? Double(lhs.integerValue ?? 0)
            let b = rhs.doubleValue ?? Double(rhs.integerValue ?? 0)
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    private var isDouble: Bool { if case .double = self { true } else { false } }
}

/// Compares two strings by their UTF-8 bytes, like memcmp: SQLite's BINARY collation.
public func compareUTF8(_ a: String, _ b: String) -> Int {
    var a = a, b = b
    return a.withUTF8 { ab in b.withUTF8 { bb in compareBuffers(ab, bb) } }
}

func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBufferPointer { ab in b.withUnsafeBufferPointer { bb in compareBuffers(ab, bb) } }
}

private func compareBuffers(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    let n = min(a.count, b.count)
    var i = 0
    while i < n {
        if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        i += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
