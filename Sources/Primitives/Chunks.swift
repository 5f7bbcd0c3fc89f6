extension Array {
    /// The array in consecutive pieces of at most `size` elements: queries that list row ids
    /// stay under SQLite's limit of bound parameters.
    ///
    /// ```swift
    /// for ids in rowIDs.chunks(of: 4096) { try context.fetch("Programme", where: .rowIDs(ids)) }
    /// ```
    public func chunks(of size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
