import Foundation
import Primitives

/// An attribute value or identifier component as it travels in a change document.
///
/// JSON keeps the common types native (`null`, strings, integers, booleans) and tags the ones JSON
/// cannot tell apart: `{"double": 1.5}`, `{"date": "2026-11-22T03:00:00Z"}`, `{"data": "<base64>"}`.
/// Values are compared exactly like `Value` (strings by UTF-8 bytes). When a document is applied,
/// each value is coerced to the attribute type the model declares, so a hand-written `1` for a
/// double attribute still works.
///
/// ```swift
/// let change = AttributeChange(old: DiffValue(.string("BBC 1")), new: DiffValue(.string("BBC One")))
/// ```
public struct DiffValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The value it carries.
    public var value: Value

    /// Wraps a value for a change document.
    public init(_ value: Value) { self.value = value }

    /// The absent value (JSON `null`).
    public static let null = DiffValue(.null)
    /// True when it carries `.null`.
    public var isNull: Bool { value.isNull }
    public var description: String { value.description }

    private enum Tag: String, CodingKey, CaseIterable { case double, date, data }

    /// Whether an object of these member names is a tagged value (`{"date": 1796083200}`): one
    /// member, named by its tag. A compact row tells its relationships from its values by this.
    static func isTaggedValue(memberNames: some Collection<String>) -> Bool {
        memberNames.count == 1 && memberNames.allSatisfy { Tag(rawValue: $0) != nil }
    }

    /// Whether `name` is one of the tags (a relationship so named could be taken for a value).
    static func isTag(_ name: String) -> Bool { Tag(rawValue: name) != nil }

    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { value = .null; return }
        if let b = try? single.decode(Bool.self) { value = .bool(b); return }
        if let i = try? single.decode(Int64.self) { value = .integer(i); return }
        if let s = try? single.decode(String.self) { value = .string(s); return }
        if let d = try? single.decode(Double.self) { value = .double(d); return }
        let tagged = try decoder.container(keyedBy: Tag.self)
        if tagged.contains(.double) {
            if let d = try? tagged.decode(Double.self, forKey: .double) { value = .double(d); return }
            switch try tagged.decode(String.self, forKey: .double) {
            case "nan": value = .double(.nan)
            case "inf": value = .double(.infinity)
            case "-inf": value = .double(-.infinity)
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .double, in: tagged, debugDescription: "not a double: \(other)")
            }
            return
        }
        if tagged.contains(.date) {
            if let seconds = try? tagged.decode(Int64.self, forKey: .date) { value = .date(seconds); return }
            let text = try tagged.decode(String.self, forKey: .date)
            guard let seconds = UTCTime.parseISO8601(text) else {
                throw DecodingError.dataCorruptedError(forKey: .date, in: tagged,
                                                       debugDescription: "expected YYYY-MM-DDTHH:MM:SSZ, got '\(text)'")
            }
            value = .date(seconds)
            return
        }
        if tagged.contains(.data) {
            let text = try tagged.decode(String.self, forKey: .data)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: .data, in: tagged, debugDescription: "not base64")
            }
            value = .data([UInt8](data))
            return
        }
        throw DecodingError.dataCorruptedError(in: single, debugDescription: "expected a value: null, string, integer, boolean, or {double|date|data: ...}")
    }

    public func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var c = encoder.singleValueContainer(); try c.encodeNil()
        case .string(let s):
            var c = encoder.singleValueContainer(); try c.encode(s)
        case .integer(let i):
            var c = encoder.singleValueContainer(); try c.encode(i)
        case .bool(let b):
            var c = encoder.singleValueContainer(); try c.encode(b)
        case .double(let d):
            var c = encoder.container(keyedBy: Tag.self)
            if d.isNaN { try c.encode("nan", forKey: .double) }
            else if d.isInfinite { try c.encode(d > 0 ? "inf" : "-inf", forKey: .double) }
            else { try c.encode(d, forKey: .double) }
        case .date(let s):
            var c = encoder.container(keyedBy: Tag.self)
            if let text = Self.iso8601(s) { try c.encode(text, forKey: .date) } else { try c.encode(s, forKey: .date) }
        case .data(let d):
            var c = encoder.container(keyedBy: Tag.self)
            try c.encode(Data(d).base64EncodedString(), forKey: .data)
        }
    }

    /// A date as `YYYY-MM-DDTHH:MM:SSZ` when its year has four digits; nil otherwise (then it is
    /// written as seconds).
    static func iso8601(_ seconds: Int64) -> String? {
        guard seconds >= UTCTime.seconds(year: 0, month: 1, day: 1), seconds < UTCTime.seconds(year: 10000, month: 1, day: 1) else { return nil }
        return UTCTime.iso8601(seconds)
    }

    /// The value as an attribute of `type` holds it (JSON loses the difference between an integer
    /// and a whole double, a bool written as 0/1, a date written as seconds).
    public func coerced(to type: AttributeType) -> Value {
        switch (value, type) {
        case let (.integer(i), .double): .double(Double(i))
        case let (.integer(i), .bool): .bool(i != 0)
        case let (.integer(i), .date): .date(i)
        case let (.bool(b), .integer): .integer(b ? 1 : 0)
        case let (.double(d), .integer) where d == d.rounded() && abs(d) < 9.2e18: .integer(Int64(d))
        case let (.date(s), .integer): .integer(s)
        case let (.string(s), .date): UTCTime.parseISO8601(s).map(Value.date) ?? value
        default: value
        }
    }

    /// Text of one identifier component in a canonical id: `%` and `,` are percent-escaped so that
    /// components joined by `,` stay unambiguous; null is `%00`.
    var canonicalText: String {
        switch value {
        case .null: return "%00"
        case .string(let s):
            var out = ""
            for c in s.unicodeScalars {
                switch c {
                case "%": out += "%25"
                case ",": out += "%2C"
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        case .data(let d): return d.map(Hex.byte).joined()
        default: return value.description
        }
    }
}

/// One component of an object's identifier: an identifier attribute's value, with to-one keys
/// rendered through the related object's own identifier (so never a row id).
public typealias IdentifierComponent = DiffValue

/// The canonical text of an identifier: components joined by `,` (see `DiffValue.canonicalText`).
public func canonicalIdentifier(_ id: [IdentifierComponent]) -> String {
    id.map(\.canonicalText).joined(separator: ",")
}

/// Lexicographic order of identifiers by `Value.compare` (SQLite's ORDER BY order).
func compareIdentifiers(_ a: [DiffValue], _ b: [DiffValue]) -> Int {
    for (x, y) in zip(a, b) {
        let c = Value.compare(x.value, y.value)
        if c != 0 { return c }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
