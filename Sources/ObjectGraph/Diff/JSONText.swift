import Foundation
import Primitives

/// Change documents as JSON text, written directly: the same bytes `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]`, without its cost. Foundation's encoder boxes every
/// value of every object into a tree before it writes a byte; on a large import's change file
/// that was 60 % of the whole run. Reading still goes through `Codable` (`ChangeDocument`).
public struct JSONText {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Cuts what was written after the first `count` bytes.
    mutating func truncate(to count: Int) { bytes.removeLast(bytes.count - count) }

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

    // MARK: JSON syntax

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func key(_ name: String) {
        append(string: name)
        raw(":")
    }

    /// Members in `String` order, as `.sortedKeys` writes them.
    mutating func object<V>(_ dictionary: [String: V], _ value: (inout JSONText, V) -> Void) {
        raw("{")
        for (i, (k, v)) in dictionary.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { raw(",") }
            key(k)
            value(&self, v)
        }
        raw("}")
    }

    mutating func array<S: Sequence>(_ elements: S, _ element: (inout JSONText, S.Element) -> Void) {
        raw("[")
        var first = true
        for e in elements {
            if !first { raw(",") }
            first = false
            element(&self, e)
        }
        raw("]")
    }

    /// Years 0 to 9999: what `DiffValue.iso8601` writes as text.
    static let firstISO8601Second = UTCTime.seconds(year: 0, month: 1, day: 1)
    static let endISO8601Second = UTCTime.seconds(year: 10000, month: 1, day: 1)

    /// Decimal digits, written without an intermediate `String` (change files hold millions).
    mutating func append(integer: Int64) {
        if integer < 0 {
            if integer == .min { bytes.append(contentsOf: String(integer).utf8); return }
            bytes.append(UInt8(ascii: "-"))
        }
        var n = integer.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
                count += 1
            } while n > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// `"2026-11-22T03:00:00Z"`, the form `UTCTime.iso8601` gives, without building a `String`.
    mutating func append(iso8601 seconds: Int64) {
        let c = UTCTime.components(seconds)
        func two(_ v: Int, _ bytes: inout [UInt8]) {
            bytes.append(UInt8(ascii: "0") + UInt8(v / 10))
            bytes.append(UInt8(ascii: "0") + UInt8(v % 10))
        }
        bytes.append(UInt8(ascii: "\""))
        two(c.year / 100, &bytes)
        two(c.year % 100, &bytes)
        bytes.append(UInt8(ascii: "-"))
        two(c.month, &bytes)
        bytes.append(UInt8(ascii: "-"))
        two(c.day, &bytes)
        bytes.append(UInt8(ascii: "T"))
        two(c.hour, &bytes)
        bytes.append(UInt8(ascii: ":"))
        two(c.minute, &bytes)
        bytes.append(UInt8(ascii: ":"))
        two(c.second, &bytes)
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(UInt8(ascii: "\""))
    }

    /// Swift's shortest round-trip digits, without the ".0" of whole numbers (JSONEncoder's form).
    private mutating func append(number: Double) {
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A JSON string: `"` and `\` escaped, control characters as \b \t \n \f \r or \u00XX, the
    /// rest (slashes included) as UTF-8.
    mutating func append(string: String) {
        raw("\"")
        var s = string
        s.withUTF8 { utf8 in
            var start = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x08: raw("\\b")
                case 0x09: raw("\\t")
                case 0x0A: raw("\\n")
                case 0x0C: raw("\\f")
                case 0x0D: raw("\\r")
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        raw("\"")
    }
}
