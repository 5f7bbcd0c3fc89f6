import Foundation
import Testing
import Primitives

/// `JSONText` is the one JSON writer: its bytes are Foundation's (`JSONSerialization` and
/// `JSONEncoder` with sorted keys, slashes escaped or not, compact or pretty), which the files
/// and reports it replaced were written with, so they keep their bytes.
@Suite struct JSONTextTests {
    static let control = String(String.UnicodeScalarView((0..<32).map { Unicode.Scalar(UInt8($0)) }))

    /// Every kind of value, nested, with empty containers and strings that need escaping.
    static let value: JSONValue = .object([
        "a/b": .string("x/y \"q\" \\ é 🎬 \u{2028}" + control),
        "null": .null, "true": .bool(true), "false": .bool(false),
        "integers": .array([.integer(0), .integer(-7), .integer(Int64.max), .integer(Int64.min), .unsigned(UInt64.max)]),
        "doubles": .array([.double(1.5), .double(2), .double(-0.0), .double(1e20), .double(1e-7), .double(0.1), .double(1.0 / 3)]),
        "empty": .array([]), "emptyObject": .object([:]),
        "nested": .array([.object(["z": .integer(1), "b": .array([.array([]), .object([:])])]), .array([.string("")])]),
        "B": .string("capital keys sort first"),
    ])

    /// `JSONSerialization`'s order of keys (what Sources/Job/Report.swift passes).
    static let serializationOrder: @Sendable (String, String) -> Bool = { a, b in
        a.compare(b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
                  locale: Locale(identifier: "")) == .orderedAscending
    }

    @Test func keysAreInJSONEncodersOrderOrTheOneGiven() throws {
        let keys = ["B", "a", "a10", "a2", "_x", "Z_", "e", "E", "é", "ß", "ss", "ab", "aB", "Ab", "a-b", "a_b", "a0", "1", "10", "2", "k/1", "k0"]
        let object = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($0.element, $0.offset) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = JSONText()
        try text.append(encoding: object)
        #expect(text.string == String(decoding: try encoder.encode(object), as: UTF8.self))
        var serialized = JSONText(keyOrder: Self.serializationOrder)
        serialized.append(try JSONValue(encoding: object))
        let expected = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(serialized.string == String(decoding: expected, as: UTF8.self))
    }

    /// The same value as Foundation's objects.
    static func foundation(_ value: JSONValue) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let b): b
        case .integer(let i): i
        case .unsigned(let u): u
        case .double(let d): d
        case .string(let s): s
        case .array(let a): a.map(foundation)
        case .object(let o): o.mapValues(foundation)
        }
    }

    @Test(arguments: [false, true], [false, true]) func valuesAreWrittenAsJSONSerializationWritesThem(pretty: Bool, escapingSlashes: Bool) throws {
        var options: JSONSerialization.WritingOptions = [.sortedKeys]
        if pretty { options.insert(.prettyPrinted) }
        if !escapingSlashes { options.insert(.withoutEscapingSlashes) }
        let expected = try JSONSerialization.data(withJSONObject: Self.foundation(Self.value), options: options)
        var text = JSONText(escapingSlashes: escapingSlashes, keyOrder: Self.serializationOrder)
        text.append(Self.value, pretty: pretty)
        #expect(text.string == String(decoding: expected, as: UTF8.self))
    }

    struct Inner: Codable { var name: String; var size: Int64; var ratio: Double; var note: String? }
    struct Outer: Codable {
        var title = "a/b \"c\""
        var inners = [Inner(name: "x", size: 3, ratio: 0.25, note: nil), Inner(name: "y/z", size: -1, ratio: 2, note: "n")]
        var byName = ["b": Inner(name: "b", size: 1, ratio: 1e-9, note: ""), "a": Inner(name: "a", size: 0, ratio: 7.5, note: nil)]
        var grid: [[Int]] = [[1, 2], [], [3]]
        var flags: [String: Bool] = [:]
        var missing: Int? = nil
        var present: Int? = 4
        var unsigned: UInt64 = .max
    }

    @Test(arguments: [false, true], [false, true]) func encodableValuesAreWrittenAsJSONEncoderWritesThem(pretty: Bool, escapingSlashes: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
        if !escapingSlashes { encoder.outputFormatting.insert(.withoutEscapingSlashes) }
        for value in [Outer(), Outer(inners: [], byName: [:], grid: [], flags: ["on": true], present: nil)] {
            var text = JSONText(escapingSlashes: escapingSlashes)
            try text.append(encoding: value, pretty: pretty)
            #expect(text.string == String(decoding: try encoder.encode(value), as: UTF8.self))
        }
        var dictionary = JSONText(escapingSlashes: escapingSlashes)
        try dictionary.append(encoding: ["k/1": [1.5, 2], "k0": []], pretty: pretty)
        #expect(dictionary.string == String(decoding: try encoder.encode(["k/1": [1.5, 2], "k0": []]), as: UTF8.self))
    }

    /// Strings are scanned eight bytes at a time: every byte that needs an escape is escaped
    /// wherever it falls in a word, and runs between them are copied whole, as Foundation does.
    @Test(arguments: [false, true]) func stringsAreEscapedWhereverTheEscapesFall(escapingSlashes: Bool) throws {
        let pieces = ["a", "é", "🎬", "\"", "\\", "/", "\n", "\u{1}", "\u{1F}", " ", "~", "\u{7F}", "x y z"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for length in 0..<40 {
            var string = ""
            for _ in 0..<length {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                string += pieces[Int(state >> 33) % pieces.count]
            }
            for prefix in ["", "abcdefg", String(repeating: "p", count: 8)] {
                var text = JSONText(escapingSlashes: escapingSlashes)
                text.append(string: prefix + string)
                let options: JSONSerialization.WritingOptions = escapingSlashes ? [.fragmentsAllowed] : [.fragmentsAllowed, .withoutEscapingSlashes]
                let expected = try JSONSerialization.data(withJSONObject: prefix + string, options: options)
                #expect(text.string == String(decoding: expected, as: UTF8.self), "\(prefix + string)")
            }
        }
    }

    /// Integers are written digit by digit into the buffer: every length, both signs, the ends.
    @Test func integersAreWrittenAsSwiftWritesThem() {
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
        }
        var text = JSONText(), expected = ""
        for v in values {
            text.append(integer: v)
            text.raw(",")
            text.append(unsigned: UInt64(bitPattern: v))
            text.raw(" ")
            expected += "\(v),\(UInt64(bitPattern: v)) "
        }
        #expect(text.string == expected)
    }

    /// Bytes are written in place into a buffer that grows: text written in pieces of every
    /// size, past many growths, cut back and written again, reads back whole.
    @Test func textGrowsCutsBackAndAppendsOtherText() {
        var text = JSONText(), expected: [UInt8] = []
        var state: UInt64 = 7
        for round in 0..<400 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let piece = String(repeating: "x\u{e9}", count: Int(state >> 54))   // up to 1023 "xé"
            text.append(string: piece)
            text.raw("[,]")
            expected += Array("\"\(piece)\"[,]".utf8)
            if round % 7 == 0 {
                let cut = Int(state >> 40) % (expected.count + 1)
                text.truncate(to: cut)
                expected.removeLast(expected.count - cut)
            }
        }
        #expect(text.count == expected.count)
        #expect(text.bytes == expected)
        #expect(text.withBytes { Array($0) } == expected)
        var copy = text   // a copy is a value: writing to one leaves the other as it was
        copy.raw("!")
        var whole = JSONText()
        whole.append(json: text)
        whole.append(json: [0x31])
        #expect(whole.bytes == expected + [0x31])
        #expect(text.bytes == expected)
        #expect(copy.bytes == expected + Array("!".utf8))
        text.removeAll()
        #expect(text.string.isEmpty)
        text.append(string: "")
        #expect(text.string == "\"\"")
    }

    /// A row's pieces written together (a separator and a value) are the pieces written one
    /// by one.
    @Test func piecesWrittenTogetherAreThePiecesOneByOne() {
        var together = JSONText(), apart = JSONText()
        for (i, s) in ["", "a", "a/b\"c", String(repeating: "é", count: 9), "\u{1}x"].enumerated() {
            together.append(string: s, after: ",")
            apart.raw(",")
            apart.append(string: s)
            together.append(integer: Int64(i) - 2, after: "{\"date\":")
            apart.raw("{\"date\":")
            apart.append(integer: Int64(i) - 2)
        }
        together.append(integer: .min, after: ",")
        apart.raw(",")
        apart.append(integer: .min)
        #expect(together.string == apart.string)
        #expect(together.string.hasSuffix(",-9223372036854775808"))
    }

    @Test func aNumberJSONCannotHoldIsAnError() {
        struct Odd: Encodable { var value = Double.nan }
        var text = JSONText()
        #expect(throws: EncodingError.self) { try text.append(encoding: Odd()) }
    }

    /// Pretty printing lays out what `JSONText` wrote compact, strings untouched.
    @Test func prettyPrintingLeavesStringsAlone() {
        var compact = JSONText()
        compact.append(.object(["k": .string("{[,:]} \\\" \\\\")]))
        var pretty = JSONText()
        pretty.append(prettyPrinting: compact.bytes)
        #expect(pretty.string == "{\n  \"k\" : \"{[,:]} \\\\\\\" \\\\\\\\\"\n}")
    }
}
