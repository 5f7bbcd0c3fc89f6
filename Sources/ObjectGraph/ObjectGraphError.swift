/// Errors of the object layer, each naming what the user can fix.
public enum ObjectGraphError: Error, Sendable, CustomStringConvertible, Equatable {
    case unknownEntity(String, known: [String])
    case unknownKey(entity: String, key: String, known: [String])
    case wrongType(entity: String, key: String, expected: String, got: String)
    case missingRequired(entity: String, key: String)
    case deleteDenied(entity: String, relationship: String, count: Int)
    case objectNotFound(entity: String, id: String)
    case incompatibleStore(path: String, reasons: [String])
    case notSorted(entity: String, previous: String, next: String, side: String)
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
