import Foundation

/// Parses a config file's JSON with Foundation's parser, strictly, and says where it is wrong.
///
/// ```swift
/// let root = try ConfigJSON.parse(data, file: "/etc/tvimport/config.json")
/// // error: "/etc/tvimport/config.json:3:5: not valid JSON: ..."
/// ```
///
/// Foundation reports "around character N" and accepts trailing commas (`[1, 2,]`), which JSON
/// does not allow and other tools reading the same file would refuse: both are handled here, a
/// few lines rather than a parser of our own.
enum ConfigJSON {
    static func parse(_ data: Data, file: String) throws -> Any {
        let bytes = [UInt8](data)
        if let comma = trailingComma(in: bytes) {
            let (line, column) = position(of: comma, in: bytes)
            throw JobError(.config, "\(file):\(line):\(column): not valid JSON: a trailing comma before the closing bracket")
        }
        do {
            return try JSONSerialization.jsonObject(with: data)
        } catch {
            let description = ((error as NSError).userInfo["NSDebugDescription"] as? String) ?? "\(error)"
            guard let offset = characterOffset(in: description) else {
                let (line, column) = position(of: bytes.count, in: bytes)
                throw JobError(.config, "\(file):\(line):\(column): not valid JSON: \(description)")
            }
            let (line, column) = position(of: offset, in: bytes)
            let reason = description.replacingOccurrences(of: " around character \(offset).", with: "")
            throw JobError(.config, "\(file):\(line):\(column): not valid JSON: \(reason)")
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

    static func characterOffset(in description: String) -> Int? {
        guard let range = description.range(of: "around character ") else { return nil }
        return Int(description[range.upperBound...].prefix { $0.isNumber })
    }
}
