// JSON written one way: every file and report tvimport writes as JSON goes through `JSONText`,
// byte for byte what Foundation writes with sorted keys, without its cost (docs/design.md#json).

/// JSON text, written directly into a byte buffer: the same bytes Foundation's `JSONEncoder` and
/// `JSONSerialization` write with sorted keys, without their cost (Foundation boxes every value
/// into a tree before it writes a byte; on a large import's change file that was 60 % of the run).
/// Streaming writers (change files) call the syntax functions; everything else appends a
/// `JSONValue` or an `Encodable` value, compact or pretty.
///
/// ```swift
/// var text = JSONText()
/// text.append(.object(["source": .string("uk"), "programmes": .integer(1200)]), pretty: true)
/// print(text.string)
/// ```
public struct JSONText: Sendable {
    /// The UTF-8 text written so far (a copy: `withBytes` and `count` read it in place).
    public var bytes: [UInt8] { Array(storage[..<used]) }
    // All of `storage` is room (its count is its capacity); the text is its first `used` bytes.
    // Bytes are written in place, as `XMLText` writes them: `Array.append(contentsOf:)` cost more
    // than the copy itself for the few bytes of most appends. The syntax functions below are
    // inlinable: a change file calls them millions of times, and a call across modules cost more
    // than the bytes it appended.
    @usableFromInline var storage: [UInt8] = []
    @usableFromInline var used = 0
    /// Whether `/` is written `\/`, as `JSONEncoder` does unless told `.withoutEscapingSlashes`.
    public var escapesSlashes: Bool
    /// The order of an object's members: by default `String`'s `<` (`JSONEncoder`'s
    /// `.sortedKeys`); documents that `JSONSerialization` used to write pass its order (numeric,
    /// case-insensitive, which needs Foundation) to keep their bytes.
    public var keyOrder: @Sendable (String, String) -> Bool

    /// Empty text; `escapingSlashes` writes `/` as `\/` (Foundation's default), for files that
    /// were always written so; `keyOrder` orders objects' members.
    public init(escapingSlashes: Bool = false, keyOrder: @escaping @Sendable (String, String) -> Bool = { $0 < $1 }) {
        escapesSlashes = escapingSlashes
        self.keyOrder = keyOrder
    }

    /// The text written so far, as a string.
    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    /// How many bytes are written.
    @inlinable public var count: Int { used }

    /// The last byte written, if any.
    @inlinable public var lastByte: UInt8? { used > 0 ? storage[used - 1] : nil }

    /// Calls `body` with the text written so far, without copying it.
    ///
    /// ```swift
    /// try text.withBytes { try file.write(contentsOf: UnsafeRawBufferPointer($0)) }
    /// ```
    @inlinable
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storage.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<used])) }
    }

    /// Empties the text, keeping its buffer (for writing one line after another).
    @inlinable public mutating func removeAll() { used = 0 }

    /// Cuts what was written after the first `count` bytes (a member that turned out empty).
    @inlinable
    public mutating func truncate(to count: Int) {
        precondition(count >= 0 && count <= used, "JSONText truncated to \(count) of \(used) bytes")
        used = count
    }

    /// Makes room for `capacity` more bytes, so that a text about to grow by that much grows once.
    public mutating func reserveCapacity(_ capacity: Int) {
        if storage.count - used <= capacity { grow(capacity) }
    }

    /// Calls `body` with room for at least `capacity` bytes at the end of the text; `body`
    /// writes there and returns how many bytes it wrote (at most `capacity`).
    @inlinable
    mutating func write(upTo capacity: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        // Room is kept above `capacity`, so that even an empty text has a buffer to point at.
        if storage.count &- used <= capacity { grow(capacity) }
        let at = used
        used = at &+ storage.withUnsafeMutableBufferPointer { body($0.baseAddress.unsafelyUnwrapped + at) }
    }

    /// Room for more than `capacity` more bytes, at least doubling the buffer.
    @usableFromInline
    mutating func grow(_ capacity: Int) {
        storage += repeatElement(0, count: max(storage.count, capacity + 1, 64))
    }

    /// Copies `count` bytes from `start` to the end of the text.
    @inlinable
    mutating func append(_ start: UnsafePointer<UInt8>, _ count: Int) {
        guard count > 0 else { return }
        write(upTo: count) { p in
            p.update(from: start, count: count)
            return count
        }
    }

    /// Appends one byte.
    @inlinable
    mutating func append(byte: UInt8) {
        write(upTo: 1) { p in
            p.pointee = byte
            return 1
        }
    }

    // MARK: Syntax, for streaming writers

    /// Appends `text` as it is (punctuation, or JSON already written).
    @inlinable
    public mutating func raw(_ text: StaticString) {
        append(text.utf8Start, text.utf8CodeUnitCount)
    }

    /// Appends JSON written elsewhere, as it is.
    @inlinable
    public mutating func append(json: [UInt8]) {
        json.withUnsafeBufferPointer { append(json: $0) }
    }

    /// Appends JSON written elsewhere, as it is.
    @inlinable
    public mutating func append(json: UnsafeBufferPointer<UInt8>) {
        if let base = json.baseAddress { append(base, json.count) }
    }

    /// Appends JSON another `JSONText` wrote, as it is.
    @inlinable
    public mutating func append(json other: JSONText) {
        other.withBytes { append(json: $0) }
    }

    /// Appends `"name":`.
    @inlinable
    public mutating func key(_ name: String) {
        append(string: name)
        raw(":")
    }

    /// Appends an object with the dictionary's members in `keyOrder` (`String` order, as
    /// `.sortedKeys`, unless told otherwise).
    public mutating func object<V>(_ dictionary: [String: V], _ value: (inout JSONText, V) -> Void) {
        raw("{")
        let order = keyOrder
        for (i, (k, v)) in dictionary.sorted(by: { order($0.key, $1.key) }).enumerated() {
            if i > 0 { raw(",") }
            key(k)
            value(&self, v)
        }
        raw("}")
    }

    /// Appends an array of the elements, each written by `element`.
    public mutating func array<S: Sequence>(_ elements: S, _ element: (inout JSONText, S.Element) -> Void) {
        raw("[")
        var first = true
        for e in elements {
            if !first { raw(",") }
            first = false
            element(&self, e)
        }
        raw("]")
    }

    /// Decimal digits, written without an intermediate `String` (change files hold millions).
    @inlinable
    public mutating func append(integer: Int64) {
        append(integer: integer, after: "")
    }

    /// `separator` (punctuation), then `integer`'s digits, in one write.
    @inlinable
    public mutating func append(integer: Int64, after separator: StaticString) {
        let lead = separator.utf8CodeUnitCount
        write(upTo: lead &+ 20) { p in
            p.update(from: separator.utf8Start, count: lead)
            if integer < 0 {
                p[lead] = UInt8(ascii: "-")
                return lead &+ 1 &+ Self.writeDigits(integer.magnitude, at: p + (lead &+ 1))
            }
            return lead &+ Self.writeDigits(integer.magnitude, at: p + lead)
        }
    }

    /// Decimal digits of an unsigned integer.
    @inlinable
    public mutating func append(unsigned: UInt64) {
        write(upTo: 20) { p in Self.writeDigits(unsigned, at: p) }
    }

    /// Writes the decimal digits of `n` at `p` (at most 20); returns how many.
    @inlinable
    static func writeDigits(_ n: UInt64, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1, rest = n
        while rest >= 10 {
            rest /= 10
            digits &+= 1
        }
        var i = digits, v = n
        repeat {
            i &-= 1
            p[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
        } while i > 0
        return digits
    }

    /// `"2026-11-22T03:00:00Z"`, the form `UTCTime.iso8601` gives, without building a `String`.
    public mutating func append(iso8601 seconds: Int64) {
        let c = UTCTime.components(seconds)
        write(upTo: 22) { p in
            func two(_ v: Int, _ at: Int) {
                p[at] = UInt8(ascii: "0") + UInt8(v / 10)
                p[at + 1] = UInt8(ascii: "0") + UInt8(v % 10)
            }
            p[0] = UInt8(ascii: "\"")
            two(c.year / 100, 1)
            two(c.year % 100, 3)
            p[5] = UInt8(ascii: "-")
            two(c.month, 6)
            p[8] = UInt8(ascii: "-")
            two(c.day, 9)
            p[11] = UInt8(ascii: "T")
            two(c.hour, 12)
            p[14] = UInt8(ascii: ":")
            two(c.minute, 15)
            p[17] = UInt8(ascii: ":")
            two(c.second, 18)
            p[20] = UInt8(ascii: "Z")
            p[21] = UInt8(ascii: "\"")
            return 22
        }
    }

    /// Swift's shortest round-trip digits, without the ".0" of whole numbers (Foundation's form).
    /// JSON has no NaN or infinity: the caller tags those (a change document writes them as text).
    public mutating func append(number: Double) {
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { append(json: $0) }
    }

    /// A JSON string: `"` and `\` escaped, control characters as \b \t \n \f \r or \u00XX, the
    /// rest as UTF-8 (`/` too, unless `escapesSlashes`).
    @inlinable
    public mutating func append(string: String) {
        append(string: string, after: "")
    }

    /// `separator` (punctuation, as `raw` writes it), then `string` as `append(string:)` writes
    /// it, in one write: a change file's rows are mostly such pairs.
    @inlinable
    public mutating func append(string: String, after separator: StaticString) {
        var s = string
        s.withUTF8 { append(stringUTF8: $0, after: separator) }
    }

    /// `append(string:)` of UTF-8 bytes.
    @inlinable
    public mutating func append(stringUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        append(stringUTF8: utf8, after: "")
    }

    @inlinable
    mutating func append(stringUTF8 utf8: UnsafeBufferPointer<UInt8>, after separator: StaticString) {
        let count = utf8.count, lead = separator.utf8CodeUnitCount
        guard let base = utf8.baseAddress, count > 0 else {
            raw(separator)
            return raw("\"\"")
        }
        let first = Self.firstToEscape(base, count, slash: escapesSlashes)
        guard first < count else {
            // Nothing to escape: the separator and quotes around one copy.
            return write(upTo: lead &+ count &+ 2) { p in
                p.update(from: separator.utf8Start, count: lead)
                p[lead] = 0x22
                (p + (lead &+ 1)).update(from: base, count: count)
                p[lead &+ count &+ 1] = 0x22
                return lead &+ count &+ 2
            }
        }
        raw(separator)
        append(byte: 0x22)
        appendEscaping(base, count, from: first, escapesSlashes ? 0x2F : 0x22)
        append(byte: 0x22)
    }

    /// The offset of the first byte of `count` at `base` that needs an escape (`count` if none),
    /// found eight bytes at a time; the last word overlaps the one before rather than going
    /// byte by byte.
    @inlinable
    static func firstToEscape(_ base: UnsafePointer<UInt8>, _ count: Int, slash: Bool) -> Int {
        var i = 0
        if count >= 8 {
            let raw = UnsafeRawPointer(base)
            // The test for `/` is left out when it is written as it is (two loops, no branch in either).
            if slash {
                while i &+ 8 <= count && !mayNeedEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), 0x2F) { i &+= 8 }
                if i &+ 8 > count {
                    if !mayNeedEscape(raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self), 0x2F) { return count }
                    i = count &- 8
                }
            } else {
                while i &+ 8 <= count && !mayNeedEscapeNoSlash(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i &+= 8 }
                if i &+ 8 > count {
                    if !mayNeedEscapeNoSlash(raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)) { return count }
                    i = count &- 8
                }
            }
        }
        let slashByte: UInt8 = slash ? 0x2F : 0x22
        while i < count && !needsEscape(base[i], slashByte) { i &+= 1 }
        return i
    }

    /// The rest of a string from `first`, the offset of its first byte that needs an escape: runs
    /// that need none copied whole, found eight bytes at a time.
    @usableFromInline
    mutating func appendEscaping(_ base: UnsafePointer<UInt8>, _ count: Int, from first: Int, _ slash: UInt8) {
        append(base, first)
        var start = first, i = first
        while i < count {
            while i + 8 <= count && !Self.mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self), slash) { i += 8 }
            let end = min(i + 8, count)
            while i < end {
                let byte = base[i]
                i += 1
                guard Self.needsEscape(byte, slash) else { continue }
                append(base + start, i - 1 - start)
                start = i
                appendEscape(byte)
            }
        }
        append(base + start, count - start)
    }

    /// Whether `byte` is a control character, `"`, `\` or `slash`.
    @inlinable
    static func needsEscape(_ byte: UInt8, _ slash: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == slash
    }

    /// Whether any of the eight bytes of `word` is a control character, `"`, `\` or `slash`
    /// (exact: no byte is missed, and none is reported that is not there).
    @inlinable
    static func mayNeedEscape(_ word: UInt64, _ slash: UInt8) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highBits: UInt64 = 0x8080_8080_8080_8080
        // A byte is zero where `(v - 1) & ~v` has its high bit; every value tested here is below
        // 0x80, so `~v`'s high bits are the word's own and the tests share them.
        let below = (word &- 0x20 &* ones) | ((word ^ (0x22 &* ones)) &- ones) | ((word ^ (0x5C &* ones)) &- ones)
            | ((word ^ (UInt64(slash) &* ones)) &- ones)
        return below & ~word & highBits != 0
    }

    /// `mayNeedEscape` without `/`.
    @inlinable
    static func mayNeedEscapeNoSlash(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highBits: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- 0x20 &* ones) | ((word ^ (0x22 &* ones)) &- ones) | ((word ^ (0x5C &* ones)) &- ones)
        return below & ~word & highBits != 0
    }

    @usableFromInline
    mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case 0x22: raw("\\\"")
        case 0x5C: raw("\\\\")
        case 0x2F: raw("\\/")
        case 0x08: raw("\\b")
        case 0x09: raw("\\t")
        case 0x0A: raw("\\n")
        case 0x0C: raw("\\f")
        case 0x0D: raw("\\r")
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("\\u00")
            append(byte: hex.utf8Start[Int(byte >> 4)])
            append(byte: hex.utf8Start[Int(byte & 0xF)])
        }
    }

    // MARK: Values

    /// Appends a value, keys sorted; `pretty` lays it out as Foundation's `.prettyPrinted` does
    /// (see `append(prettyPrinting:)`).
    public mutating func append(_ value: JSONValue, pretty: Bool = false) {
        guard pretty else { return append(value) }
        var compact = JSONText(escapingSlashes: escapesSlashes, keyOrder: keyOrder)
        compact.append(value)
        append(prettyPrinting: compact.bytes)
    }

    /// Appends an `Encodable` value as `JSONEncoder` with `.sortedKeys` writes it (dates and data
    /// as their own `Codable` forms: the types written here hold neither).
    ///
    /// ```swift
    /// var text = JSONText(escapingSlashes: true)
    /// try text.append(encoding: state)
    /// ```
    public mutating func append(encoding value: some Encodable, pretty: Bool = false) throws {
        append(try JSONValue(encoding: value), pretty: pretty)
    }

    private mutating func append(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let b): b ? raw("true") : raw("false")
        case .integer(let i): append(integer: i)
        case .unsigned(let u): append(unsigned: u)
        case .double(let d): append(number: d)
        case .string(let s): append(string: s)
        case .array(let elements): array(elements) { $0.append($1) }
        case .object(let members): object(members) { $0.append($1) }
        }
    }

    /// Appends compact JSON text (as this type writes it) laid out as Foundation's
    /// `.prettyPrinted` does: two spaces a level, `"key" : value`, an empty array or object with
    /// an empty line between its brackets.
    ///
    /// ```swift
    /// var pretty = JSONText()
    /// pretty.append(prettyPrinting: compact.bytes)
    /// ```
    public mutating func append(prettyPrinting compact: [UInt8]) {
        var level = 0, i = 0
        func newline(_ text: inout JSONText) {
            text.append(byte: 0x0A)
            for _ in 0..<level { text.raw("  ") }
        }
        reserveCapacity(compact.count + compact.count / 2)
        while i < compact.count {
            let byte = compact[i]
            switch byte {
            case UInt8(ascii: "\""):
                // A string, copied whole (an escaped quote does not end it).
                var j = i + 1
                while j < compact.count && compact[j] != UInt8(ascii: "\"") { j += compact[j] == UInt8(ascii: "\\") ? 2 : 1 }
                j = min(j + 1, compact.count)
                compact.withUnsafeBufferPointer { append(json: UnsafeBufferPointer(rebasing: $0[i..<j])) }
                i = j
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                append(byte: byte)
                if i + 1 < compact.count, compact[i + 1] == byte + 2 {   // "}" is "{" + 2, "]" is "[" + 2
                    append(byte: 0x0A)
                    newline(&self)
                    append(byte: byte + 2)
                    i += 2
                    continue
                }
                level += 1
                newline(&self)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                level -= 1
                newline(&self)
                append(byte: byte)
            case UInt8(ascii: ","):
                append(byte: byte)
                newline(&self)
            case UInt8(ascii: ":"):
                raw(" : ")
            default:
                append(byte: byte)
            }
            i += 1
        }
    }
}

/// A JSON value for `JSONText`: what reports, logs and state files are built as.
///
/// ```swift
/// let line: JSONValue = .object(["level": .string("info"), "message": .string("done"), "line": .null])
/// ```
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A signed integer.
    case integer(Int64)
    /// An unsigned integer (above `Int64.max` as well).
    case unsigned(UInt64)
    /// A number, written in Swift's shortest round-trip form (finite values only).
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; its members are written in key order.
    case object([String: JSONValue])

    /// The value `JSONEncoder` would encode `value` as (sorted keys; optional members left out
    /// when nil, as synthesized `Codable` does).
    ///
    /// ```swift
    /// let value = try JSONValue(encoding: ["uk": 3, "de": 1])
    /// ```
    public init(encoding value: some Encodable) throws {
        let encoder = ValueEncoder()
        try value.encode(to: encoder)
        self = encoder.storage.value
    }
}

// MARK: - Encodable -> JSONValue

/// A container's value while it is encoded. A nested container's box hands each new value to
/// its parent (`placed`), which puts it under its key or index.
private final class Box {
    var value: JSONValue {
        didSet { placed?(value) }
    }
    private let placed: ((JSONValue) -> Void)?
    init(_ value: JSONValue, placed: ((JSONValue) -> Void)? = nil) {
        self.value = value
        self.placed = placed
        placed?(value)
    }
}

/// Encodes into a `JSONValue`: the one `Encoder` JSONText needs for the `Codable` state files.
private final class ValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any] = [:]
    let storage: Box

    init(codingPath: [any CodingKey] = [], storage: Box = Box(.null)) {
        self.codingPath = codingPath
        self.storage = storage
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = storage.value {} else { storage.value = .object([:]) }
        return KeyedEncodingContainer(KeyedValueContainer<Key>(box: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = storage.value {} else { storage.value = .array([]) }
        return UnkeyedValueContainer(box: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(box: storage, codingPath: codingPath)
    }

    /// A value of a nested `Encodable`: scalars directly, the rest through a nested encoder.
    static func encode(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONValue {
        switch value {
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as UInt64: return .unsigned(v)
        case let v as Double: return try double(v, codingPath)
        default:
            let encoder = ValueEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            return encoder.storage.value
        }
    }

    static func double(_ v: Double, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard v.isFinite else {
            throw EncodingError.invalidValue(v, .init(codingPath: codingPath, debugDescription: "JSON has no \(v)"))
        }
        return .double(v)
    }
}

private struct KeyedValueContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: Box
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) {
        guard case .object(var members) = box.value else { return }
        box.value = .null   // no second reference while it changes: no copy of the members
        members[key.stringValue] = value
        box.value = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try ValueEncoder.double(value, codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try ValueEncoder.double(Double(value), codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.unsigned(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try ValueEncoder.encode(value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = Box(.object([:])) { [self] in set($0, key) }
        return KeyedEncodingContainer(KeyedValueContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = Box(.array([])) { [self] in set($0, key) }
        return UnkeyedValueContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ValueEncoder(codingPath: codingPath + [key]) }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedValueContainer: UnkeyedEncodingContainer {
    let box: Box
    let codingPath: [any CodingKey]
    var count: Int {
        if case .array(let elements) = box.value { elements.count } else { 0 }
    }

    private func append(_ value: JSONValue) {
        guard case .array(var elements) = box.value else { return }
        box.value = .null
        elements.append(value)
        box.value = .array(elements)
    }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try ValueEncoder.double(value, codingPath + [IndexKey(count)])) }
    mutating func encode(_ value: Float) throws { append(try ValueEncoder.double(Double(value), codingPath + [IndexKey(count)])) }
    mutating func encode(_ value: Int) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { append(.unsigned(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try ValueEncoder.encode(value, codingPath: codingPath + [IndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let index = count, path = codingPath + [IndexKey(count)]
        append(.null)
        let nested = Box(.object([:])) { [self] in replace(index, $0) }
        return KeyedEncodingContainer(KeyedValueContainer<NestedKey>(box: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = count, path = codingPath + [IndexKey(count)]
        append(.null)
        let nested = Box(.array([])) { [self] in replace(index, $0) }
        return UnkeyedValueContainer(box: nested, codingPath: path)
    }

    private func replace(_ index: Int, _ value: JSONValue) {
        guard case .array(var elements) = box.value, index < elements.count else { return }
        box.value = .null
        elements[index] = value
        box.value = .array(elements)
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(codingPath: codingPath) }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let box: Box
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.value = .null }
    mutating func encode(_ value: Bool) throws { box.value = .bool(value) }
    mutating func encode(_ value: String) throws { box.value = .string(value) }
    mutating func encode(_ value: Double) throws { box.value = try ValueEncoder.double(value, codingPath) }
    mutating func encode(_ value: Float) throws { box.value = try ValueEncoder.double(Double(value), codingPath) }
    mutating func encode(_ value: Int) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int8) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int16) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int32) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int64) throws { box.value = .integer(value) }
    mutating func encode(_ value: UInt) throws { box.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { box.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { box.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { box.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { box.value = .unsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        box.value = try ValueEncoder.encode(value, codingPath: codingPath)
    }
}
