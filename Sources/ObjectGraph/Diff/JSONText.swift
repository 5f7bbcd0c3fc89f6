import Foundation
import Primitives

/// Change documents as JSON text (`JSONText`, the one JSON writer, is in Primitives): the same
/// bytes `JSONEncoder` writes with `[.sortedKeys, .withoutEscapingSlashes]` for the `Codable`
/// types of a change document. Reading still goes through `Codable` (`ChangeDocument`).
///
/// ```swift
/// var text = JSONText()
/// text.appendDocumentHead(model: store.fingerprint)
/// text.append(diff, compact: true)
/// ```
extension JSONText {
    /// `compact` leaves out a null side of an attribute's change (an insert's old values, a
    /// delete's new ones): `AttributeChange` reads an absent side as null.
    public mutating func append(_ diff: ObjectDiff, compact: Bool = false) {
        // Keys in sorted order: attributes, change, entityName, id, relationships.
        raw("{")
        if !diff.attributes.isEmpty {
            key("attributes")
            object(diff.attributes) { text, change in
                text.raw("{")
                let writesNew = !compact || !change.new.isNull, writesOld = !compact || !change.old.isNull
                if writesNew {
                    text.key("new")
                    text.append(change.new)
                }
                if writesOld {
                    if writesNew { text.raw(",") }
                    text.key("old")
                    text.append(change.old)
                }
                text.raw("}")
            }
            raw(",")
        }
        key("change")
        append(string: diff.change.rawValue)
        raw(",")
        key("entityName")
        append(string: diff.entityName)
        raw(",")
        key("id")
        array(diff.id) { $0.append($1) }
        if !diff.relationships.isEmpty {
            raw(",")
            key("relationships")
            object(diff.relationships) { text, relationship in text.append(relationship, compact: compact) }
        }
        raw("}")
    }

    /// `{"model":"FINGERPRINT","changes":[`: a document written node by node, closed with `]}`.
    public mutating func appendDocumentHead(model: String) {
        raw("{")
        key("model")
        append(string: model)
        raw(",")
        key("changes")
        raw("[")
    }

    /// Appends an RFC 6902 operation: `{"op":"replace","path":"/Channel/bbc1/displayName","value":"BBC One"}`.
    public mutating func append(_ operation: PatchOperation) {
        raw("{")
        key("op")
        append(string: operation.op.rawValue)
        raw(",")
        key("path")
        append(string: operation.path)
        if let value = operation.value {
            raw(",")
            key("value")
            append(value)
        }
        raw("}")
    }

    mutating func append(_ relationship: RelationshipDiff, compact: Bool = false) {
        raw("{")
        var first = true
        func separate(_ text: inout JSONText) {
            if !first { text.raw(",") }
            first = false
        }
        if !relationship.added.isEmpty {
            separate(&self)
            key("added")
            array(relationship.added) { $0.append($1) }
        }
        if !relationship.members.isEmpty {
            separate(&self)
            key("members")
            array(relationship.members) { $0.append($1, compact: compact) }
        }
        if !relationship.removed.isEmpty {
            separate(&self)
            key("removed")
            array(relationship.removed) { $0.append($1) }
        }
        raw("}")
    }

    mutating func append(_ reference: ObjectReference) {
        raw("{")
        key("entityName")
        append(string: reference.entityName)
        raw(",")
        key("id")
        array(reference.id) { $0.append($1) }
        raw("}")
    }

    mutating func append(_ value: PatchValue) {
        switch value {
        case .value(let v): append(v)
        case .array(let a): array(a) { $0.append($1) }
        case .object(let o): object(o) { $0.append($1) }
        }
    }

    /// `DiffValue`'s encoding: JSON's own types where they are unambiguous, tagged otherwise.
    mutating func append(_ value: DiffValue) {
        switch value.value {
        case .null: raw("null")
        case .string(let s): append(string: s)
        case .integer(let i): append(integer: i)
        case .bool(let b): raw(b ? "true" : "false")
        case .double(let d):
            raw("{")
            key("double")
            if d.isNaN { append(string: "nan") }
            else if d.isInfinite { append(string: d > 0 ? "inf" : "-inf") }
            else { append(number: d) }
            raw("}")
        case .date(let s):
            raw("{")
            key("date")
            if s >= Self.firstISO8601Second && s < Self.endISO8601Second { append(iso8601: s) } else { append(integer: s) }
            raw("}")
        case .data(let d):
            raw("{")
            key("data")
            append(string: Data(d).base64EncodedString())
            raw("}")
        }
    }

    /// Years 0 to 9999: what `DiffValue.iso8601` writes as text.
    static let firstISO8601Second = UTCTime.seconds(year: 0, month: 1, day: 1)
    static let endISO8601Second = UTCTime.seconds(year: 10000, month: 1, day: 1)
}
