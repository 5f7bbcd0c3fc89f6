import Primitives

/// The SQL schema derived from a model: one table per inheritance tree (single-table
/// inheritance, as Core Data's SQLite store does), a column per attribute and per foreign key.
struct Schema: Sendable, Hashable {
    struct Column: Sendable, Hashable {
        var name: String
        var sqlType: String
        var defaultValue: Value
        var references: String?
    }
    struct Table: Sendable, Hashable {
        var name: String
        var columns: [Column]
        var hasEntityColumn: Bool
        var uniqueKeys: [String]
        var indexed: [String]
        /// The columns of the table's covering index (`UserInfoKey.coveringIndex`), or none.
        var covering: [String] = []
    }
    var tables: [Table]

    static let rowIDColumn = "_pk"
    static let entityColumn = "_entity"

    init(model: ObjectModel) {
        tables = model.roots.map { root in
            var columns: [Column] = []
            var seen = Set<String>()
            var indexed: [String] = []
            for entity in model.tree(of: root) {
                for a in entity.attributes where seen.insert(a.name).inserted {
                    columns.append(Column(name: a.name, sqlType: a.type.sqlType, defaultValue: a.defaultValue))
                    if a.userInfo[UserInfoKey.index] == "true" { indexed.append(a.name) }
                }
                for r in entity.foreignKeys where seen.insert(r.name).inserted {
                    let destinationRoot = model.entity(r.destination)?.rootName ?? r.destination
                    columns.append(Column(name: r.name, sqlType: "INTEGER", defaultValue: .null, references: destinationRoot))
                    indexed.append(r.name)
                }
            }
            let names = Set(columns.map(\.name))
            let covering = splitList(root.userInfo[UserInfoKey.coveringIndex])?.filter(names.contains) ?? []
            return Table(name: root.name, columns: columns, hasEntityColumn: root.descendants.count > 1,
                         uniqueKeys: root.identifier, indexed: indexed, covering: covering.count > 1 ? covering : [])
        }
    }

    /// A canonical text of everything that decides the on-disk layout.
    var canonicalText: String {
        tables.sorted { $0.name < $1.name }.map { t in
            "table \(t.name)\(t.hasEntityColumn ? " +entity" : "") unique(\(t.uniqueKeys.joined(separator: ","))) index(\(t.indexed.joined(separator: ",")))"
                + (t.covering.isEmpty ? "" : " covering(\(t.covering.joined(separator: ",")))") + "\n"
                + t.columns.sorted { $0.name < $1.name }.map { "  \($0.name) \($0.sqlType)\($0.references.map { " -> \($0)" } ?? "")\n" }.joined()
        }.joined()
    }

    var fingerprint: String { FNV1a.hex(canonicalText) }

    /// `canonicalText` (this model's or one stored by an earlier one) without the indexes: what
    /// decides the rows alone.
    static func rowsText(_ canonicalText: String) -> String {
        canonicalText.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            // A table's line ends with its index lists (entity names are identifiers: no " index(" in them).
            guard line.hasPrefix("table "), let indexes = line.ranges(of: " index(").last else { return line }
            return line[..<indexes.lowerBound]
        }.joined(separator: "\n")
    }

    static func createTableSQL(_ t: Table) -> String {
        // AUTOINCREMENT: a row id is never reused, so a change set that deletes one object and
        // inserts another in the same transaction can never mistake one for the other.
        var parts = ["\(quote(rowIDColumn)) INTEGER PRIMARY KEY AUTOINCREMENT"]
        if t.hasEntityColumn { parts.append("\(quote(entityColumn)) TEXT NOT NULL") }
        for c in t.columns { parts.append(columnSQL(c)) }
        return "CREATE TABLE \(quote(t.name)) (\(parts.joined(separator: ", ")))"
    }

    static func columnSQL(_ c: Column) -> String {
        var s = "\(quote(c.name)) \(c.sqlType)"
        if !c.defaultValue.isNull { s += " DEFAULT \(literal(c.defaultValue))" }
        if let r = c.references { s += " REFERENCES \(quote(r))(\(quote(rowIDColumn)))" }
        return s
    }

    static func indexSQL(_ t: Table) -> [String] {
        var sql: [String] = []
        if !t.uniqueKeys.isEmpty {
            sql.append("CREATE UNIQUE INDEX IF NOT EXISTS \(quote(identityIndexName(t))) ON \(quote(t.name)) (\(t.uniqueKeys.map(quote).joined(separator: ", ")))")
        }
        for c in columnIndexed(t) {
            sql.append("CREATE INDEX IF NOT EXISTS \(quote(indexName(t, c))) ON \(quote(t.name)) (\(quote(c)))")
        }
        if !t.covering.isEmpty {
            sql.append("CREATE INDEX IF NOT EXISTS \(quote(coveringIndexName(t))) ON \(quote(t.name)) (\(t.covering.map(quote).joined(separator: ", ")))")
        }
        return sql
    }

    /// The names of the indexes `indexSQL` makes: every index of a table named `TABLE_…` is
    /// the schema's, so one no longer among them is dropped by a migration.
    static func indexNames(_ t: Table) -> Set<String> {
        Set((t.uniqueKeys.isEmpty ? [] : [identityIndexName(t)]) + columnIndexed(t).map { indexName(t, $0) }
            + (t.covering.isEmpty ? [] : [coveringIndexName(t)]))
    }

    private static func identityIndexName(_ t: Table) -> String { "\(t.name)_identity" }
    private static func indexName(_ t: Table, _ column: String) -> String { "\(t.name)_\(column)" }
    /// Two underscores (no column's index is named so: names start with a letter), then the
    /// columns: a model that changes them makes a new index, and the migration drops the old one.
    private static func coveringIndexName(_ t: Table) -> String { "\(t.name)__" + t.covering.joined(separator: "_") }
    /// The identity index serves a column that leads it.
    private static func columnIndexed(_ t: Table) -> [String] { t.indexed.filter { t.uniqueKeys.first != $0 } }

    static func literal(_ v: Value) -> String {
        switch v {
        case .null: "NULL"
        case .string(let s): "'" + s.replacingAll("'", with: "''") + "'"
        case .integer(let i), .date(let i): String(i)
        case .bool(let b): b ? "1" : "0"
        case .double(let d): String(d)
        case .data(let d): "X'" + d.map { Hex.byte($0) }.joined() + "'"
        }
    }
}

/// An SQL identifier, quoted.
func quote(_ name: String) -> String { "\"" + name.replacingAll("\"", with: "\"\"") + "\"" }

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        // Names and most literals hold no quote: skip the walk over Characters.
        if let ascii = target.asciiValue, !utf8.contains(ascii) { return self }
        var out = ""
        out.reserveCapacity(utf8.count)
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
