/// Values a merge adds to each update it makes of one entity, in the same write: revision stamps,
/// for example, that must move exactly when the merge changes something that readers see. Declared
/// here, beside the objects it reads, so that whoever defines stamps (the feeds) need not depend
/// on the merge that applies them (the Merge module's `SortedMerge`).
///
/// ```swift
/// let stamp = UpdateStamp(keys: ["revision"]) { changed, current in
///     changed.contains("title") ? ["revision": .integer((current["revision"].integerValue ?? 0) + 1)] : [:]
/// }
/// let merge = SortedMerge(context: context, stamps: ["Note": stamp])
/// ```
public struct UpdateStamp: Sendable {
    /// The keys `values` reads from the stored object and may write: read with the object the
    /// update reads anyway, so that stamping costs no second read and no second write.
    public let keys: [String]
    /// The values to write beside the update, given the names of the attributes and owned to-many
    /// relationships the update changes and the stored object as it was.
    public let values: @Sendable (_ changed: Set<String>, _ current: FetchedObject) -> [String: Value]

    /// A stamp that reads and may write `keys`, with `values` deciding what to write.
    public init(keys: [String], values: @escaping @Sendable (_ changed: Set<String>, _ current: FetchedObject) -> [String: Value]) {
        self.keys = keys
        self.values = values
    }
}
