/// A JSON value of a patch: a scalar (encoded like `DiffValue`), an array or an object.
public indirect enum PatchValue: Sendable, Codable, Equatable {
    /// A scalar: `"BBC One"`, `3`, `{"date": "2026-11-22T03:00:00Z"}`.
    case value(DiffValue)
    /// A JSON array.
    case array([PatchValue])
    /// A JSON object.
    case object([String: PatchValue])

    public init(from decoder: any Decoder) throws {
        if let v = try? DiffValue(from: decoder) { self = .value(v); return }
        if let a = try? [PatchValue](from: decoder) { self = .array(a); return }
        self = .object(try [String: PatchValue](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .value(let v): try v.encode(to: encoder)
        case .array(let a): try a.encode(to: encoder)
        case .object(let o): try o.encode(to: encoder)
        }
    }
}

/// One RFC 6902 operation.
///
/// ```swift
/// let op = PatchOperation(.replace, "/Channel/bbc1/displayName", .value(DiffValue(.string("BBC One"))))
/// ```
public struct PatchOperation: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The operations a change document turns into.
    public enum Op: String, Sendable, Codable {
        /// Adds the value at the path (a new object or attribute).
        case add
        /// Removes what is at the path.
        case remove
        /// Replaces the value at the path.
        case replace
    }
    /// The operation.
    public var op: Op
    /// An RFC 6901 JSON Pointer.
    public var path: String
    /// The value, for `add` and `replace`.
    public var value: PatchValue?

    /// An operation `op` at `path`, with `value` for an add or a replace.
    public init(_ op: Op, _ path: String, _ value: PatchValue? = nil) {
        self.op = op
        self.path = path
        self.value = value
    }

    public var description: String { "\(op.rawValue) \(path)" }
}

/// Escapes one reference token of a JSON Pointer (RFC 6901): `~` as `~0`, `/` as `~1`.
public func escapeJSONPointerToken(_ token: String) -> String {
    var out = ""
    for c in token.unicodeScalars {
        switch c {
        case "~": out += "~0"
        case "/": out += "~1"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

extension ChangeDocument {
    /// The document as an RFC 6902 JSON Patch over a JSON view of the stores, in which each root
    /// object lives at `/<Entity>/<canonical id>`, its attributes and to-one references at
    /// `…/<key>`, and an owned member at `…/<relationship>/<member's canonical id>`. Inserts are
    /// `add` of the whole object, deletes `remove`, updates one `add`/`replace`/`remove` per key
    /// (add when the old value was null, remove when the new one is).
    public func jsonPatch() -> [PatchOperation] {
        var ops: [PatchOperation] = []
        for change in ObjectDiff.squash(changes) {
            let path = "/" + escapeJSONPointerToken(change.entityName) + "/" + escapeJSONPointerToken(change.canonicalID)
            appendPatch(change, at: path, to: &ops)
        }
        return ops
    }

    private func appendPatch(_ node: ObjectDiff, at path: String, to ops: inout [PatchOperation]) {
        switch node.change {
        case .insert:
            ops.append(PatchOperation(.add, path, Self.patchObject(node)))
        case .delete:
            ops.append(PatchOperation(.remove, path))
        case .update:
            for (key, change) in node.attributes.sorted(by: { $0.key < $1.key }) {
                let p = path + "/" + escapeJSONPointerToken(key)
                if change.old.isNull {
                    ops.append(PatchOperation(.add, p, .value(change.new)))
                } else if change.new.isNull {
                    ops.append(PatchOperation(.remove, p))
                } else {
                    ops.append(PatchOperation(.replace, p, .value(change.new)))
                }
            }
            for (key, rel) in node.relationships.sorted(by: { $0.key < $1.key }) {
                let p = path + "/" + escapeJSONPointerToken(key)
                if let new = rel.added.first {
                    ops.append(PatchOperation(rel.removed.isEmpty ? .add : .replace, p, Self.patchReference(new)))
                } else if !rel.removed.isEmpty {
                    ops.append(PatchOperation(.remove, p))
                }
                for member in rel.members {
                    appendPatch(member, at: p + "/" + escapeJSONPointerToken(member.canonicalID), to: &ops)
                }
            }
        }
    }

    private static func patchObject(_ node: ObjectDiff) -> PatchValue {
        var object: [String: PatchValue] = [:]
        for (key, change) in node.attributes { object[key] = .value(change.new) }
        for (key, rel) in node.relationships {
            if let reference = rel.added.first {
                object[key] = patchReference(reference)
            } else if !rel.members.isEmpty {
                var members: [String: PatchValue] = [:]
                for member in rel.members where member.change == .insert { members[member.canonicalID] = patchObject(member) }
                object[key] = .object(members)
            }
        }
        return .object(object)
    }

    private static func patchReference(_ reference: ObjectReference) -> PatchValue {
        .object(["entityName": .value(DiffValue(.string(reference.entityName))), "id": .array(reference.id.map(PatchValue.value))])
    }
}
