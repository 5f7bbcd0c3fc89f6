import ObjectGraph

/// An object coming from a feed, shaped for the merge: values in the order of its layout's keys,
/// and the members of each owned to-many relationship the layout carries.
public struct IncomingObject: Sendable {
    public var values: [Value]
    public var children: [[IncomingObject]]
    /// A hash of everything above: an unchanged object is recognised without reading it back.
    public var contentHash: Int64?
    /// Set when `values` holds only the identifier (in its positions) and the rest is made when
    /// the merge needs it (an insert, or a stored object with another hash); see `resolved()`.
    /// It throws when what it is made from cannot be read (a resolution reading stored rows).
    public var resolve: (@Sendable () throws -> IncomingObject)?

    public init(values: [Value], children: [[IncomingObject]] = [], contentHash: Int64? = nil,
                resolve: (@Sendable () throws -> IncomingObject)? = nil) {
        self.values = values
        self.children = children
        self.contentHash = contentHash
        self.resolve = resolve
    }

    /// The object with all its values and members.
    public func resolved() throws -> IncomingObject { try resolve?() ?? self }
}
