import Primitives

/// A comparison operator of a predicate.
public enum Comparison: String, Sendable {
    /// Equal (`=`); compared with `.null`, SQL's `IS NULL`.
    case equal = "="
    /// Not equal, null included (`IS NOT`: a null key is not equal to a value).
    case notEqual = "IS NOT"
    /// Less than, by `Value`'s order (strings by UTF-8 bytes).
    case less = "<"
    /// Less than or equal.
    case lessOrEqual = "<="
    /// Greater than.
    case greater = ">"
    /// Greater than or equal.
    case greaterOrEqual = ">="
}

/// A filter on objects of one entity, compiled to SQL so that SQLite does the filtering (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed:
/// fetch no more than needed). Keys are attribute names or to-one relationship names; a to-one
/// relationship compares with the related object's row id.
///
/// ```swift
/// let tonight: ObjectPredicate = .and([.related("channel", channelID),
///                                      .compare("start", .greaterOrEqual, .date(evening))])
/// let count = try context.count("Programme", where: tonight)
/// ```
public indirect enum ObjectPredicate: Sendable {
    /// Every object of the entity.
    case all
    /// A key compared with a value: `.compare("title", .equal, .string("News"))`.
    case compare(String, Comparison, Value)
    /// A key equal to one of the values: `.isIn("xmltvId", ids.map(Value.string))`.
    case isIn(String, [Value])
    /// A to-one relationship pointing at an object (or, with `nil`, at none).
    case related(String, ObjectID?)
    /// Every predicate holds (an empty list: all objects).
    case and([ObjectPredicate])
    /// One predicate at least holds (an empty list: none).
    case or([ObjectPredicate])
    /// The predicate does not hold.
    case not(ObjectPredicate)
    /// The objects with one of these row ids (`ObjectID.rowID`).
    case rowIDs([Int64])
    /// One predicate at least holds, as `.or`; but a sorted fetch (`ObjectContext.fetch`) asks
    /// for each predicate's objects with a query of its own and merges them in SQL (`UNION`), so
    /// that each uses the index it can (disjoint start ranges of one channel: `.or` there is one
    /// scan of the whole channel, the terms sharing no index prefix with their ranges).
    case union([ObjectPredicate])

    func sql(_ entity: Entity, _ arguments: inout [Value]) throws -> String {
        switch self {
        case .all:
            return "1"
        case let .compare(key, op, value):
            try check(key, entity)
            if value.isNull {
                return op == .equal ? "\(quote(key)) IS NULL" : "\(quote(key)) IS NOT NULL"
            }
            arguments.append(value)
            return "\(quote(key)) \(op == .equal ? "=" : op == .notEqual ? "<>" : op.rawValue) ?"
        case let .isIn(key, values):
            try check(key, entity)
            if values.isEmpty { return "0" }
            if let list = Self.integerList(values.lazy.map(\.integerValue)) ?? Self.stringList(values) {
                arguments.append(.string(list))
                return "\(quote(key)) IN \(Self.listOfOneArgument)"
            }
            return "\(quote(key)) IN (\(Self.placeholders(for: values, into: &arguments)))"
        case let .related(key, id):
            guard let r = entity.relationship(key), r.storesForeignKey else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key, known: entity.foreignKeys.map(\.name))
            }
            guard let id else { return "\(quote(key)) IS NULL" }
            arguments.append(.integer(id.rowID))
            return "\(quote(key)) = ?"
        case let .and(ps):
            return ps.isEmpty ? "1" : "(" + (try ps.map { try $0.sql(entity, &arguments) }).joined(separator: " AND ") + ")"
        case let .or(ps), let .union(ps):
            return ps.isEmpty ? "0" : "(" + (try ps.map { try $0.sql(entity, &arguments) }).joined(separator: " OR ") + ")"
        case let .not(p):
            return "NOT (" + (try p.sql(entity, &arguments)) + ")"
        case let .rowIDs(ids):
            if ids.isEmpty { return "0" }
            arguments.append(.string(Self.integerList(ids.lazy.map { $0 }) ?? "[]"))
            return "\(quote(Schema.rowIDColumn)) IN \(Self.listOfOneArgument)"
        }
    }

    /// A list of integers or strings bound as one argument, a JSON array that SQLite's
    /// `json_each` reads: one statement whatever the list's length (a list of placeholders made a
    /// statement per length, or per power of two padded, and preparing one cost more than running
    /// it), and no limit of SQLite's on bound parameters (a search's matching titles).
    static let listOfOneArgument = "(SELECT value FROM json_each(?))"

    /// The JSON array of `values`, or nil when one of them is not a string, or holds a NUL
    /// (which SQLite's JSON functions would cut the text at).
    private static func stringList(_ values: [Value]) -> String? {
        var text = JSONText()
        text.raw("[")
        for (i, value) in values.enumerated() {
            guard let string = value.stringValue, !string.utf8.contains(0) else { return nil }
            text.append(string: string, after: i == 0 ? "" : ",")
        }
        text.raw("]")
        return text.string
    }

    /// The JSON array of `values`, or nil when one of them is not an integer (a date is one).
    private static func integerList<S: Sequence>(_ values: S) -> String? where S.Element == Int64? {
        var text = "[", separator = ""
        for value in values {
            guard let value else { return nil }
            text += separator
            text += String(value)
            separator = ","
        }
        return text + "]"
    }
    /// The placeholders of an `IN` list of `values`, which go to `arguments`. Their number is
    /// rounded up to a power of two, the first value repeated in the spare ones (the same list
    /// to SQL, `NOT IN` included): a statement is prepared once per power, not once per length,
    /// and a long list costs more to prepare than to run (a shared channel's re-import made a
    /// new statement for nearly every read).
    private static func placeholders(for values: [Value], into arguments: inout [Value]) -> String {
        var count = 1
        while count < values.count { count *= 2 }
        arguments += values
        arguments += repeatElement(values[0], count: count - values.count)
        return String(repeating: "?,", count: count - 1) + "?"
    }

    private func check(_ key: String, _ entity: Entity) throws {
        guard entity.attribute(key) != nil || entity.relationship(key)?.storesForeignKey == true else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key,
                                              known: entity.attributes.map(\.name) + entity.foreignKeys.map(\.name))
        }
    }
}

/// One sort key. Text sorts by UTF-8 bytes (SQLite's BINARY collation), exactly like
/// `Value.compare`, which the merge relies on.
public struct SortKey: Sendable {
    /// The attribute to sort by.
    public var key: String
    /// Smallest first when true.
    public var ascending: Bool
    /// Sorts by `key`.
    public init(_ key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}
