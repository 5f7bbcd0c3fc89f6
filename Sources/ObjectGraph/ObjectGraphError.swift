/// Errors of the object layer, each naming what the user can fix.
public enum ObjectGraphError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The model has no entity of this name; `known` lists those it has.
    case unknownEntity(String, known: [String])
    /// The entity has no attribute or relationship `key`; `known` lists its keys.
    case unknownKey(entity: String, key: String, known: [String])
    /// A value of the wrong type for the attribute (`expected` and `got` name the types).
    case wrongType(entity: String, key: String, expected: String, got: String)
    /// A required attribute or to-one relationship was left null.
    case missingRequired(entity: String, key: String)
    /// The delete rule `deny` refused: the object still has `count` objects in `relationship`.
    case deleteDenied(entity: String, relationship: String, count: Int)
    /// No stored object with this id.
    case objectNotFound(entity: String, id: String)
    /// The database at `path` was made for another model, or is not one of ours.
    case incompatibleStore(path: String, reasons: [String])
    /// A merge's input (`side`: incoming or stored) was not sorted by identifier.
    case notSorted(entity: String, previous: String, next: String, side: String)
    /// An operation the store or context cannot do in its state; the message says which.
    case invalidOperation(String)

    public var description: String {
        switch self {
        case let .unknownEntity(name, known):
            "unknown entity '\(name)' (known: \(known.joined(separator: ", ")))"
        case let .unknownKey(entity, key, known):
            "entity '\(entity)' has no attribute or relationship '\(key)' (known: \(known.joined(separator: ", ")))"
        case let .wrongType(entity, key, expected, got):
            "\(entity).\(key) expects \(expected), got '\(got)'"
        case let .missingRequired(entity, key):
            "\(entity).\(key) is required"
        case let .deleteDenied(entity, relationship, count):
            "cannot delete this \(entity): its relationship '\(relationship)' denies deletion while it has \(count) object\(count == 1 ? "" : "s")"
        case let .objectNotFound(entity, id):
            "no \(entity) with identifier '\(id)'"
        case let .incompatibleStore(path, reasons):
            "the database \(path) was made by an incompatible model:\n" + reasons.map { "  - \($0)" }.joined(separator: "\n")
        case let .notSorted(entity, previous, next, side):
            "\(side) stream of \(entity) is not strictly increasing: '\(previous)' then '\(next)'"
        case let .invalidOperation(message):
            message
        }
    }
}
