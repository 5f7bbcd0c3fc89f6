// JSON read the way JSONText writes it: straight from the bytes, without a tree of boxed values
// in between. Foundation's JSONDecoder keeps a coding path for every value it decodes; reading a
// first import's change file through it cost more than undoing the import (issue 33).

/// A forward-only reader of JSON text: the caller walks the document, asking for the value it
/// expects next (`readObject`, `readArray`, `readString`, `readScalar`) and skipping the rest
/// (`skipValue`). Errors say where the text is wrong (`JSONReadError`: line, column, reason).
///
/// ```swift
/// let names: [String] = try JSONReader.read(Array(#"{"names": ["a", "b"]}"#.utf8)) { reader in
///     var names: [String] = []
///     try reader.readObject { reader, key in
///         guard key == "names" else { return try reader.skipValue() }
///         try reader.readArray { names.append(try $0.readString()) }
///     }
///     return names
/// }
/// ```
public struct JSONReader {
    /// The text, borrowed for the length of `read`.
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Where the next byte is read.
    public private(set) var offset = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes.assumingMemoryBound(to: UInt8.self) }

    /// Calls `body` with a reader of `bytes`, then checks that nothing but white space follows
    /// the value it read.
    public static func read<T>(_ bytes: UnsafeRawBufferPointer, _ body: (inout JSONReader) throws -> T) throws -> T {
        var reader = JSONReader(bytes)
        let result = try body(&reader)
        reader.skipWhitespace()
        if reader.offset < bytes.count { throw reader.error("text after the end of the document") }
        return result
    }

    /// `read` of an array of bytes.
    public static func read<T>(_ bytes: [UInt8], _ body: (inout JSONReader) throws -> T) throws -> T {
        try bytes.withUnsafeBytes { try read($0, body) }
    }

    /// A scalar JSON value. Numbers keep their text's form: `integer` when it is an integer that
    /// fits, `number` otherwise (the caller decides what an integral `1.0` is).
    public enum Scalar: Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
    }

    /// What the next value is, without reading it.
    public enum Kind { case object, array, string, number, bool, null }

    // MARK: Structure

    /// The kind of the next value.
    public mutating func peekKind() throws -> Kind {
        skipWhitespace()
        guard offset < bytes.count else { throw error("the document ends where a value was expected") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("unexpected character \(Self.describe(bytes[offset])) where a value was expected")
        }
    }

    /// Reads `null` if it comes next; false (nothing read) otherwise.
    public mutating func readNull() throws -> Bool {
        guard try peekKind() == .null else { return false }
        try expectWord("null")
        return true
    }

    /// Reads an object, calling `member` with each key; `member` reads (or skips) its value.
    public mutating func readObject(_ member: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        skipWhitespace()
        if peekByte() == UInt8(ascii: "}") { offset += 1; return }
        while true {
            skipWhitespace()
            guard peekByte() == UInt8(ascii: "\"") else { throw error("expected a member's name in quotes") }
            let key = try readString()
            try expect(UInt8(ascii: ":"), "':' after the name \"\(key)\"")
            try member(&self, key)
            skipWhitespace()
            switch peekByte() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"): offset += 1; return
            default: throw error("expected ',' or '}' after the member \"\(key)\"")
            }
        }
    }

    /// Reads an array, calling `element` for each element; `element` reads (or skips) it.
    public mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        skipWhitespace()
        if peekByte() == UInt8(ascii: "]") { offset += 1; return }
        while true {
            try element(&self)
            skipWhitespace()
            switch peekByte() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"): offset += 1; return
            default: throw error("expected ',' or ']' after an element")
            }
        }
    }

    /// Whether the array being read (inside `readArray`'s `element`) has another element: for
    /// arrays whose elements mean different things by position.
    public mutating func atEndOfArray() -> Bool {
        skipWhitespace()
        return peekByte() == UInt8(ascii: "]")
    }

    /// Reads (and checks) the next value, whatever it is.
    public mutating func skipValue() throws {
        switch try peekKind() {
        case .object: try readObject { reader, _ in try reader.skipValue() }
        case .array: try readArray { try $0.skipValue() }
        case .string: _ = try readString()
        default: _ = try readScalar()
        }
    }

    /// Moves back to `offset` (one `offset` read earlier), to read a value again or later.
    public mutating func seek(to offset: Int) { self.offset = offset }

    // MARK: Scalars

    /// Reads a null, boolean, number or string.
    public mutating func readScalar() throws -> Scalar {
        switch try peekKind() {
        case .null: try expectWord("null"); return .null
        case .bool:
            if bytes[offset] == UInt8(ascii: "t") { try expectWord("true"); return .bool(true) }
            try expectWord("false")
            return .bool(false)
        case .string: return .string(try readString())
        case .number: return try readNumber()
        case .object, .array: throw error("expected a null, boolean, number or string")
        }
    }

    /// Reads a string (escapes resolved; the text must be valid UTF-8).
    public mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""), "a string")
        let start = offset
        // Most strings hold no escape: made from their bytes at once.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = try string(start..<offset)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character inside a string") }
            offset += 1
        }
        var utf8 = Array(bytes[start..<offset])
        while true {
            guard offset < bytes.count else { throw error("the document ends inside a string") }
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try string(utf8, from: start)
            case UInt8(ascii: "\\"):
                try readEscape(into: &utf8)
            case 0..<0x20:
                offset -= 1
                throw error("a control character inside a string")
            default:
                utf8.append(byte)
            }
        }
    }

    // MARK: Errors

    /// An error at the current offset.
    public func error(_ reason: String) -> JSONReadError {
        error(reason, at: offset)
    }

    /// An error at `offset`, with its line and column (counted from 1, columns in bytes).
    public func error(_ reason: String, at offset: Int) -> JSONReadError {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        return JSONReadError(offset: offset, line: line, column: offset - lineStart + 1, reason: reason)
    }

    // MARK: Private

    private func peekByte() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == byte else {
            if offset >= bytes.count { throw error("the document ends where \(what) was expected") }
            throw error("expected \(what), found \(Self.describe(bytes[offset]))")
        }
        offset += 1
    }

    private mutating func expectWord(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count,
              word.withUTF8Buffer({ $0.elementsEqual(bytes[offset..<(offset + count)]) }) else {
            throw error("expected \(word)")
        }
        offset += count
    }

    /// A JSON number (RFC 8259's grammar, checked). Integers are read digit by digit (a change
    /// file holds millions); other numbers go through `Double`'s parser.
    private mutating func readNumber() throws -> Scalar {
        let start = offset
        let negative = bytes[offset] == UInt8(ascii: "-")
        if negative { offset += 1 }
        var magnitude: UInt64 = 0
        var overflow = false
        let integerStart = offset
        while offset < bytes.count, case let digit = bytes[offset] &- UInt8(ascii: "0"), digit < 10 {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            magnitude = sum
            overflow = overflow || o1 || o2
            offset += 1
        }
        if offset == integerStart { throw error("expected a digit in a number") }
        if bytes[integerStart] == UInt8(ascii: "0") && offset - integerStart > 1 { throw error("a number with a leading zero", at: integerStart) }
        var isInteger = true
        func digits(_ reader: inout JSONReader) throws {
            let first = reader.offset
            while reader.offset < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.offset]) { reader.offset += 1 }
            if reader.offset == first { throw reader.error("expected a digit in a number") }
        }
        if peekByte() == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            try digits(&self)
        }
        if peekByte() == UInt8(ascii: "e") || peekByte() == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if peekByte() == UInt8(ascii: "+") || peekByte() == UInt8(ascii: "-") { offset += 1 }
            try digits(&self)
        }
        if isInteger && !overflow {
            if !negative && magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            if negative && magnitude <= UInt64(Int64.max) + 1 { return .integer(Int64(truncatingIfNeeded: 0 &- magnitude)) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw error("a number that does not fit in a double: \(text)", at: start) }
        return .number(number)
    }

    private mutating func readEscape(into utf8: inout [UInt8]) throws {
        guard offset < bytes.count else { throw error("the document ends inside a string") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate: its low half must follow as another \u escape.
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw error("a lone surrogate in a \\u escape")
                }
                offset += 2
                let low = try readHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("a lone surrogate in a \\u escape")
            }
            utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            offset -= 1
            throw error("an unknown escape \\\(Self.describe(byte))")
        }
    }

    private mutating func readHex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error("the document ends inside a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected a hexadecimal digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private func string(_ range: Range<Int>) throws -> String {
        guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else { throw error("a string that is not valid UTF-8", at: range.lowerBound) }
        return text
    }

    private func string(_ utf8: [UInt8], from start: Int) throws -> String {
        guard let text = String(validating: utf8, as: UTF8.self) else { throw error("a string that is not valid UTF-8", at: start) }
        return text
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }
}

/// Where JSON text is wrong: its line and column (from 1; columns count bytes), its byte offset,
/// why, and, once known, the file.
public struct JSONReadError: Error, Equatable, CustomStringConvertible {
    /// The byte offset of the error.
    public var offset: Int
    /// The line, from 1.
    public var line: Int
    /// The column in bytes, from 1.
    public var column: Int
    /// What is wrong.
    public var reason: String
    /// The file read, when the caller knows it.
    public var file: String?

    /// An error at `line`, `column` (`offset`) for `reason`.
    public init(offset: Int, line: Int, column: Int, reason: String, file: String? = nil) {
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
        self.file = file
    }

    public var description: String {
        "\(file ?? "JSON text"), line \(line), column \(column): \(reason)"
    }
}
