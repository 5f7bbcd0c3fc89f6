import Foundation
@testable import ICalendar
import TestSupport
import Testing

/// Byte-level views of a feed, written independently of the writer's own code.
enum Feed {
    /// Physical lines without their CRLF. Records an issue for any bare LF or CR.
    static func physicalLines(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                lines.append(current)
                current = []
                index += 2
                continue
            }
            if byte == 0x0D || byte == 0x0A {
                Issue.record("bare \(byte == 0x0D ? "CR" : "LF") at octet \(index)", sourceLocation: sourceLocation)
            }
            current.append(byte)
            index += 1
        }
        if !current.isEmpty { Issue.record("last line has no CRLF", sourceLocation: sourceLocation) }
        return lines
    }

    /// Logical content lines: each continuation line (leading space) joined to the one before,
    /// at the byte level, as RFC 5545 section 3.1 unfolds.
    static func logicalLines(_ bytes: [UInt8]) -> [String] {
        var logical: [[UInt8]] = []
        for line in physicalLines(bytes) {
            if line.first == 0x20, !logical.isEmpty {
                logical[logical.count - 1].append(contentsOf: line.dropFirst())
            } else {
                logical.append(line)
            }
        }
        return logical.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Checks the folding rules on every physical line: at most 75 octets, and valid UTF-8 on its
    /// own (a fold inside a multi-byte sequence makes both halves invalid).
    static func checkFolding(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        for (number, line) in physicalLines(bytes, sourceLocation: sourceLocation).enumerated() {
            #expect(line.count <= 75, "line \(number + 1) has \(line.count) octets", sourceLocation: sourceLocation)
            #expect(String(validatingUTF8Bytes: line) != nil, "line \(number + 1) is not valid UTF-8 on its own",
                    sourceLocation: sourceLocation)
        }
    }

    /// The value of the first logical line starting with `prefix`, as written (still escaped).
    static func value(of prefix: String, in bytes: [UInt8]) -> String? {
        logicalLines(bytes).first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}

extension String {
    /// nil unless `bytes` is valid UTF-8 (the standard initialiser repairs instead of failing).
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: self = String(scalars); return
            case .error: return nil
            }
        }
    }
}

/// Compares strings as UTF-8 bytes: `==` on String ignores NFC/NFD differences.
func sameBytes(_ a: String?, _ b: String?) -> Bool {
    a.map { Array($0.utf8) } == b.map { Array($0.utf8) }
}

/// The repository root, found from this file's path (Tests/ICalendarTests/Support.swift).
let repositoryRoot: URL = Repository.root

/// A fresh directory under the system temp directory.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("ICalendarTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs a program (TestSupport's runner).
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
    -> (status: Int32, stdout: Data, stderr: String)
{
    let result = try Subprocess.run(executable, arguments, environment: environment)
    return (result.status, result.stdout, result.stderr)
}

/// Sample data shared by the suites.
enum Samples {
    static let properties = CalendarProperties(
        productID: "-//tvimport//tvimport 0.1//EN",
        name: "Das Erste, HD; \"Test\"",
        description: "Programme of Das Erste\nfrom XMLTV",
        refreshInterval: 12 * 3600,
        color: "steelblue",
        image: "https://example.org/logos/daserste.png",
        source: "https://example.org/feeds/daserste.ics"
    )

    static func event(_ index: Int, summary: String = "News", description: String? = nil,
                      categories: [String] = [], location: String? = nil, url: String? = nil) -> CalendarEvent {
        let start: Int64 = 1_741_118_400 + Int64(index) * 1800
        return CalendarEvent(
            uid: "daserste.de-\(start)@tvimport.example",
            start: start, end: start + 1800, summary: summary, description: description,
            categories: categories, location: location, url: url,
            stamp: 1_741_000_000, sequence: index % 3)
    }

    /// Text that is hard to write correctly: every escape, folds inside multi-byte scalars,
    /// CJK, emoji (ZWJ sequences, flags, skin tones), combining characters (NFD), controls.
    /// (No value ends in whitespace: libical and ics-py drop trailing spaces, and the harness
    /// rightly warns about that consumer-side loss.)
    static let trickyEvents: [CalendarEvent] = [
        event(0, summary: String(repeating: "Größenwahn über dem Äquator – ", count: 4) + "Ende",
              description: "Folge 1: Müller, Şahin; Gäste.\nZweite Zeile\r\nDritte\rVierte",
              categories: ["Nachrichten", "Wetter, Verkehr", "Sport; live", "C:\\Programme"],
              location: "Studio 1, Köln", url: "https://example.org/sendung?id=1&x=ä"),
        event(1, summary: "Tom, Jerry; and C:\\path\\to\\file",
              description: "Backslash at end \\", categories: ["a,b,c"]),
        event(2, summary: String(repeating: "日本語のテレビ番組", count: 12),
              description: String(repeating: "中文节目介绍，包括逗号；和分号。", count: 8), categories: ["ドラマ"]),
        event(3, summary: String(repeating: "📺🎬 👨‍👩‍👧‍👦 🇩🇪🇫🇷 👍🏽 ", count: 8) + "🏁",
              description: "Emoji 😀 at the end 😀"),
        event(4, summary: String(repeating: "Cafe\u{301} Ame\u{301}lie ", count: 10) + "fin",
              description: "NFD: e\u{301}, NFC: \u{e9}; a\u{308}\u{304}"),
        event(5, summary: "Control\u{0}chars\u{7}stripped\u{1B}[0m\u{7F} here\ttab",
              description: "\u{0}\u{1}\u{2}only controls then text"),
        event(6, summary: String(repeating: "x", count: 67), location: "Bad URL is dropped",
              url: "https://example.org/has space"),
        event(7, summary: String(repeating: "ä", count: 40) + String(repeating: "€", count: 30) + String(repeating: "𝄞", count: 25)),
    ]

    /// What a correct parser must return for a TEXT value we wrote.
    static func decodedText(_ source: String) -> String {
        var out = String.UnicodeScalarView()
        var scalars = Array(source.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            switch scalar.value {
            case 0x0D:
                if scalars.first == "\n" { scalars.removeFirst() }
                out.append("\n")
            case 0x0A: out.append("\n")
            case 0x09: out.append(" ")
            case 0x00..<0x20, 0x7F: break
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
