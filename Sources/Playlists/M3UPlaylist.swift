// An M3U playlist as IPTV players read it: `#EXTINF:-1 tvg-id=".." tvg-name=".." tvg-logo=".."
// group-title=".." tvg-shift="..",Title` followed by the stream's URL. Strangers write these files:
// every length is bounded, every number checked, nothing in it can stop the parse.
// No Foundation here: scripts/fuzz compiles this file alone (with Primitives) as module Playlists.

/// One `#EXTINF` entry.
public struct PlaylistEntry: Sendable, Hashable {
    /// Line of the `#EXTINF` (one-based).
    public var line: Int
    /// The text after the attributes' comma.
    public var title: String
    public var tvgID: String?
    public var tvgName: String?
    public var tvgLogo: String?
    public var groupTitle: String?
    /// `tvg-shift` (the entry's, else the `#EXTM3U` line's) in seconds.
    public var shift: Int64
    /// The stream's URL, when a line gives one.
    public var url: String?

    public init(line: Int, title: String, tvgID: String? = nil, tvgName: String? = nil, tvgLogo: String? = nil,
                groupTitle: String? = nil, shift: Int64 = 0, url: String? = nil) {
        self.line = line
        self.title = title
        self.tvgID = tvgID
        self.tvgName = tvgName
        self.tvgLogo = tvgLogo
        self.groupTitle = groupTitle
        self.shift = shift
        self.url = url
    }

    /// What a player calls the channel: `tvg-name`, else the title.
    public var name: String { tvgName ?? title }
}

/// Something odd in a playlist that did not stop reading it.
public struct PlaylistWarning: Sendable, Hashable {
    public var line: Int
    public var message: String
}

/// A playlist that cannot be used (no entries at all).
public struct PlaylistError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

public struct M3UPlaylist: Sendable {
    public var entries: [PlaylistEntry]
    public var warnings: [PlaylistWarning]

    /// The most entries one playlist may hold (the largest public lists have tens of thousands).
    public static let maxEntries = 1_000_000
    /// Longer attribute values and titles are cut: a name is never this long.
    public static let maxFieldBytes = 4096
    /// The largest `tvg-shift` taken, in hours either way.
    public static let maxShiftHours = 48

    /// Parses the bytes of an M3U file. Throws when it holds no `#EXTINF` entry.
    public init(bytes: some Collection<UInt8>, file: String) throws(PlaylistError) {
        var entries: [PlaylistEntry] = []
        var warnings: [PlaylistWarning] = []
        var pending: PlaylistEntry?
        var headerShift: Int64?
        var lineNumber = 0
        func warn(_ line: Int, _ message: String) {
            if warnings.count < 1000 { warnings.append(PlaylistWarning(line: line, message: message)) }
        }
        for rawLine in Self.lines(Array(bytes)) {
            lineNumber += 1
            var text = rawLine[...]
            if lineNumber == 1, text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
            let trimmed = Self.trimmed(text)
            if trimmed.isEmpty { continue }
            if Self.hasPrefix(trimmed, "#EXTM3U") {
                let (attributes, _) = Self.attributes(trimmed.dropFirst(7))
                if let shift = attributes["tvg-shift"] {
                    headerShift = Self.shiftSeconds(shift)
                    if headerShift == nil { warn(lineNumber, "tvg-shift '\(Self.excerpt(shift))' is not a number of hours within ±\(Self.maxShiftHours): ignored") }
                }
            } else if Self.hasPrefix(trimmed, "#EXTINF:") {
                if let pending { entries.append(pending) }
                pending = nil
                guard entries.count < Self.maxEntries else {
                    warn(lineNumber, "more than \(Self.maxEntries) entries: the rest ignored")
                    break
                }
                let (attributes, title) = Self.attributes(trimmed.dropFirst(8))
                var entry = PlaylistEntry(line: lineNumber, title: title ?? "")
                entry.tvgID = attributes["tvg-id"].flatMap(Self.nonEmpty)
                entry.tvgName = attributes["tvg-name"].flatMap(Self.nonEmpty)
                entry.tvgLogo = attributes["tvg-logo"].flatMap(Self.nonEmpty)
                entry.groupTitle = attributes["group-title"].flatMap(Self.nonEmpty)
                if let shift = attributes["tvg-shift"] {
                    if let seconds = Self.shiftSeconds(shift) {
                        entry.shift = seconds
                    } else {
                        warn(lineNumber, "tvg-shift '\(Self.excerpt(shift))' is not a number of hours within ±\(Self.maxShiftHours): ignored")
                    }
                } else if let headerShift {
                    entry.shift = headerShift
                }
                pending = entry
            } else if Self.hasPrefix(trimmed, "#EXTGRP:") {
                if pending != nil, pending!.groupTitle == nil {
                    pending!.groupTitle = Self.nonEmpty(Self.string(trimmed.dropFirst(8)))
                }
            } else if trimmed.first == UInt8(ascii: "#") {
                continue   // other directives (#EXTVLCOPT, #KODIPROP, comments)
            } else if pending != nil {
                pending!.url = Self.string(trimmed)
                entries.append(pending!)
                pending = nil
            }
        }
        if let pending { entries.append(pending) }
        guard !entries.isEmpty else { throw PlaylistError(file: file, message: "no #EXTINF entries: not an M3U playlist of channels") }
        self.entries = entries
        self.warnings = warnings
    }

    // MARK: Pieces

    /// The lines of the text, cut at LF (a CR before it, or a lone CR, also ends a line).
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0A || bytes[i] == 0x0D {
                lines.append(bytes[start..<i])
                if bytes[i] == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count { lines.append(bytes[start...]) }
        return lines
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    static func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = s
        while let f = s.first, isSpace(f) { s = s.dropFirst() }
        while let l = s.last, isSpace(l) { s = s.dropLast() }
        return s
    }

    static func hasPrefix(_ s: ArraySlice<UInt8>, _ prefix: StaticString) -> Bool {
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard s.count >= p.count else { return false }
        // Directives are upper case; some writers do not care.
        return zip(s, p).allSatisfy { a, b in a == b || (a >= 0x61 && a <= 0x7A && a - 0x20 == b) }
    }

    /// Text of at most `maxFieldBytes` bytes (cut at a character boundary), trimmed.
    static func string(_ s: ArraySlice<UInt8>) -> String {
        var s = trimmed(s)
        if s.count > maxFieldBytes {
            var end = s.startIndex + maxFieldBytes
            while end > s.startIndex, s[end] & 0xC0 == 0x80 { end -= 1 }
            s = s[s.startIndex..<end]
        }
        return String(decoding: s, as: UTF8.self)
    }

    static func nonEmpty(_ s: String) -> String? { s.isEmpty ? nil : s }

    static func excerpt(_ s: String) -> String { s.utf8.count <= 40 ? s : String(decoding: s.utf8.prefix(37), as: UTF8.self) + "..." }

    /// The `key="value"` pairs after `#EXTINF:` (its duration skipped) or `#EXTM3U`, and the title
    /// after the first comma outside quotes (nil when there is none). Keys are lower-cased; the
    /// first of a key wins. Values may be double- or single-quoted, or bare up to a space or comma.
    static func attributes(_ s: ArraySlice<UInt8>) -> (attributes: [String: String], title: String?) {
        var attributes: [String: String] = [:]
        var i = s.startIndex
        let end = s.endIndex
        // The duration: a number, up to a space or comma.
        while i < end, !isSpace(s[i]), s[i] != UInt8(ascii: ",") { i += 1 }
        while i < end {
            while i < end, isSpace(s[i]) { i += 1 }
            guard i < end else { break }
            if s[i] == UInt8(ascii: ",") { return (attributes, string(s[(i + 1)...])) }
            let keyStart = i
            while i < end, s[i] != UInt8(ascii: "="), !isSpace(s[i]), s[i] != UInt8(ascii: ",") { i += 1 }
            let key = String(decoding: s[keyStart..<i].prefix(64), as: UTF8.self).lowercased()
            guard i < end, s[i] == UInt8(ascii: "=") else { continue }   // a bare word: skipped
            i += 1
            var value: ArraySlice<UInt8>
            if i < end, s[i] == UInt8(ascii: "\"") || s[i] == UInt8(ascii: "'") {
                let quote = s[i]
                i += 1
                let valueStart = i
                while i < end, s[i] != quote { i += 1 }
                value = s[valueStart..<i]
                if i < end { i += 1 }
            } else {
                let valueStart = i
                while i < end, !isSpace(s[i]), s[i] != UInt8(ascii: ",") { i += 1 }
                value = s[valueStart..<i]
            }
            if attributes[key] == nil { attributes[key] = string(value) }
        }
        return (attributes, nil)
    }

    /// `tvg-shift` hours ("1", "-2", "+0.5", "1,5") as seconds; nil when it is not such a number
    /// or lies beyond `maxShiftHours`. At most four decimals count (a second is 0.0003 h).
    public static func shiftSeconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var whole: Int64 = 0, fraction: Int64 = 0, fractionDigits = 0, digits = 0, inFraction = false
        for b in bytes {
            if b == UInt8(ascii: ".") || b == UInt8(ascii: ",") {
                if inFraction { return nil }
                inFraction = true
            } else if b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") {
                let d = Int64(b - UInt8(ascii: "0"))
                digits += 1
                if inFraction {
                    if fractionDigits < 4 { fraction = fraction * 10 + d; fractionDigits += 1 }
                } else {
                    guard whole <= Int64(maxShiftHours) else { return nil }
                    whole = whole * 10 + d
                }
            } else {
                return nil
            }
        }
        guard digits > 0, whole <= Int64(maxShiftHours) else { return nil }
        while fractionDigits < 4 { fraction *= 10; fractionDigits += 1 }
        // whole ≤ 48 and fraction < 10⁴: far inside Int64, and exact in seconds to the rounding.
        let seconds = whole * 3600 + (fraction * 3600 + 5000) / 10_000
        guard seconds <= Int64(maxShiftHours) * 3600 else { return nil }
        return negative ? -seconds : seconds
    }
}
