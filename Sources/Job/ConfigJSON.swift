import Foundation
import Primitives

/// Parses a config file's JSON with `JSONReader` (Primitives), strictly, into the values
/// `ConfigReader` walks (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull`), and says where
/// it is wrong.
///
/// ```swift
/// let root = try ConfigJSON.parse(data, file: "/etc/tvimport/config.json")
/// // error: "/etc/tvimport/config.json:3:5: not valid JSON: ..."
/// ```
///
/// Two mistakes people make get a message of their own: a trailing comma (`[1, 2,]`), and a
/// missing comma between two values (the reader would only say that it expected a comma).
enum ConfigJSON {
    static func parse(_ data: Data, file: String) throws -> Any {
        let bytes = [UInt8](data)
        if let comma = trailingComma(in: bytes) {
            let (line, column) = position(of: comma, in: bytes)
            throw JobError(.config, "\(file):\(line):\(column): not valid JSON: a trailing comma before the closing bracket")
        }
        do {
            return try JSONReader.read(bytes) { reader in try value(&reader) }
        } catch {
            if let (token, previous, closer) = missingComma(in: bytes) {
                let (line, column) = position(of: token, in: bytes)
                let (endLine, endColumn) = position(of: previous - 1, in: bytes)
                throw JobError(.config, "\(file):\(line):\(column): not valid JSON: expected a comma or a closing \(closer) after the previous value (which ends at \(endLine):\(endColumn))")
            }
            let failure = error as? JSONReadError
            let (line, column) = position(of: failure?.offset ?? bytes.count, in: bytes)
            throw JobError(.config, "\(file):\(line):\(column): not valid JSON: \(failure?.reason ?? "\(error)")")
        }
    }

    /// The next value as Foundation's types: numbers and booleans as `NSNumber` (a boolean's is
    /// Foundation's boolean, which `ConfigReader.isBoolean` tells apart).
    private static func value(_ reader: inout JSONReader) throws -> Any {
        switch try reader.peekKind() {
        case .object:
            var object: [String: Any] = [:]
            try reader.readObject { reader, key in object[key] = try value(&reader) }
            return object
        case .array:
            var array: [Any] = []
            try reader.readArray { array.append(try value(&$0)) }
            return array
        case .string, .number, .bool, .null:
            switch try reader.readScalar() {
            case .null: return NSNull()
            case .bool(let flag): return NSNumber(value: flag)
            case .integer(let integer): return NSNumber(value: integer)
            case .number(let number): return NSNumber(value: number)
            case .string(let string): return string
            }
        }
    }

    /// The byte offset of a comma followed (after whitespace) by `]` or `}`, outside strings.
    static func trailingComma(in bytes: [UInt8]) -> Int? {
        var inString = false, escaped = false, lastComma: Int?
        for (i, b) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
                continue
            }
            switch b {
            case 0x22: inString = true; lastComma = nil
            case 0x2C: lastComma = i
            case 0x5D, 0x7D: if let c = lastComma { return c }
            case 0x20, 0x09, 0x0A, 0x0D: break
            default: lastComma = nil
            }
        }
        return nil
    }

    /// The offset of a value that follows the previous value with no comma between them (a parser
    /// says only what it expected), the offset just after that previous value, and the closer the
    /// enclosing object or array would also accept ("brace '}'" or "bracket ']'").
    static func missingComma(in bytes: [UInt8]) -> (token: Int, previousEnd: Int, closer: String)? {
        var inString = false, escaped = false, inBare = false
        var valueEnd: Int?  // just after the last complete value, until a comma or colon
        var containers: [UInt8] = []
        func isBare(_ b: UInt8) -> Bool {
            (0x30...0x39).contains(b) || (0x61...0x7A).contains(b) || (0x41...0x5A).contains(b) || b == 0x2B || b == 0x2D || b == 0x2E
        }
        for (i, b) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false; valueEnd = i + 1 }
                continue
            }
            if inBare {
                if isBare(b) { continue }
                inBare = false
                valueEnd = i
            }
            let startsValue = b == 0x22 || b == 0x7B || b == 0x5B || isBare(b)
            if startsValue, let end = valueEnd, let open = containers.last {
                return (i, end, open == 0x7B ? "brace '}'" : "bracket ']'")
            }
            switch b {
            case 0x22: inString = true
            case 0x7B, 0x5B: containers.append(b)
            case 0x7D, 0x5D: _ = containers.popLast(); valueEnd = i + 1
            case 0x2C, 0x3A: valueEnd = nil
            case 0x20, 0x09, 0x0A, 0x0D: break
            default: if isBare(b) { inBare = true }
            }
        }
        return nil
    }

    /// One-based line and column (in characters) of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        let column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return (line, column)
    }

    /// A parsed value (what `parse` returns) written back as JSON by `JSONText`, in the bytes
    /// `JSONSerialization` wrote with `.sortedKeys` (the form the database remembers the config's
    /// modules in); nil for anything JSON cannot hold.
    static func text(of value: Any) -> [UInt8]? {
        guard let value = jsonValue(value) else { return nil }
        var text = JSONText(escapingSlashes: true, keyOrder: JSONText.serializationOrder)
        text.append(value)
        return text.bytes
    }

    private static func jsonValue(_ value: Any) -> JSONValue? {
        switch value {
        case let string as String:
            return .string(string)
        case let number as NSNumber:
            if ConfigReader.isBoolean(number) { return .bool(number.boolValue) }
            switch String(cString: number.objCType) {
            case "d", "f": return .double(number.doubleValue)
            case "Q", "L", "I", "S", "C": return .unsigned(number.uint64Value)
            default: return .integer(number.int64Value)
            }
        case let array as [Any]:
            var elements: [JSONValue] = []
            for element in array {
                guard let element = jsonValue(element) else { return nil }
                elements.append(element)
            }
            return .array(elements)
        case let object as [String: Any]:
            var members: [String: JSONValue] = [:]
            for (key, member) in object {
                guard let member = jsonValue(member) else { return nil }
                members[key] = member
            }
            return .object(members)
        case is NSNull:
            return .null
        default:
            return nil
        }
    }
}
