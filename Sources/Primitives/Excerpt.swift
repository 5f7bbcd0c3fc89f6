extension String {
    /// The string as a message may quote it: whole when short, otherwise its first `limit`
    /// Unicode scalars and "… (N bytes)". Scalars, not characters: one character can hold any
    /// number of combining marks. Values come from the input and may be megabytes long.
    ///
    /// ```swift
    /// String(repeating: "x", count: 100).excerpt(limit: 3)   // "xxx… (100 bytes)"
    /// ```
    public func excerpt(limit: Int = 80) -> String {
        let scalars = unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
              end != scalars.endIndex else { return self }
        return String(scalars[..<end]) + "… (\(utf8.count) bytes)"
    }
}
