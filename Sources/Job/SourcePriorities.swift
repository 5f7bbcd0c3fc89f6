import ObjectGraph

/// Each source's priority, remembered in the database (docs/design.md#several-sources-one-guide):
/// set by `sources[].priority` or `import --priority`, kept when later imports leave it out.
///
/// ```swift
/// try SourcePriorities.remember(10, for: "grabber", in: store)
/// let priorities = try SourcePriorities.all(in: store)   // ["grabber": 10]
/// ```
public enum SourcePriorities {
    static let table = SideTable(name: "_tvimport_sources", key: "source", columns: [
        AttributeDescription("priority", .integer, optional: false),
    ])

    /// Remembers `priority` for `source` (after its import committed: should this fail, the next
    /// import finds the priority changed again and resolves the source's channels again).
    public static func remember(_ priority: Int, for source: String, in store: Store) throws {
        try store.create(table)
        try store.save(["priority": .integer(Int64(priority))], forKey: source, in: table)
    }

    /// Every remembered priority; a source not listed has priority 0.
    public static func all(in store: Store) throws -> [String: Int] {
        try store.rows(in: table).compactMapValues { $0["priority"]?.integerValue.map { Int($0) } }
    }
}
