import Foundation

/// A channel name reduced to what players and people mean by it, for matching a playlist's
/// `tvg-id` and `tvg-name` to a guide's display names: case, accents, spaces and punctuation
/// ignored, a bracketed note dropped ("(1080p)", "[Geo-blocked]"), and the suffixes HD, FHD,
/// UHD and 4K ignored. A `+1` (any `+N`) is kept: "Bravo +1" is another channel than "Bravo".
///
/// ```swift
/// ChannelNameKey("RTÉ One HD (1080p)") == ChannelNameKey("rte one")   // true
/// ChannelNameKey("Bravo +1") == ChannelNameKey("Bravo")                // false
/// ```
public struct ChannelNameKey: Hashable, Sendable, CustomStringConvertible {
    public let key: String

    /// The last words a playlist's name may add to a guide's (folded): not part of the channel.
    public static let qualitySuffixes: Set<String> = ["hd", "fhd", "uhd", "4k"]

    /// `suffixes`: the last words dropped (folded), a playlist's `qualitySuffixes` unless given.
    public init(_ name: String, ignoring suffixes: Set<String> = Self.qualitySuffixes) {
        let unbracketed = Self.droppingBrackets(name)
        let folded = (unbracketed.isEmpty ? name : unbracketed)
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var tokens: [String] = []
        var current = ""
        func endToken() {
            if !current.isEmpty { tokens.append(current) }
            current = ""
        }
        for scalar in folded.unicodeScalars {
            if scalar == "+" {
                endToken()
                current = "+"
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                // "+1": the plus and the digits after it are one token; "+ABC" is "+" and "abc".
                if current == "+", !("0"..."9").contains(scalar) { endToken() }
                current.unicodeScalars.append(scalar)
            } else if current != "+" {
                endToken()
            }
        }
        endToken()
        while tokens.count > 1, let last = tokens.last, suffixes.contains(last) { tokens.removeLast() }
        key = tokens.joined()
    }

    public var description: String { key }
    public var isEmpty: Bool { key.isEmpty }

    /// The name without its bracketed notes: "(...)", "[...]" and "{...}", nested or not.
    static func droppingBrackets(_ name: String) -> String {
        var depth = 0
        var kept = ""
        for c in name {
            switch c {
            case "(", "[", "{": depth += 1
            case ")", "]", "}": depth = max(0, depth - 1)
            default: if depth == 0 { kept.append(c) }
            }
        }
        return kept
    }

    /// The edit distance to `other` (insertions, deletions, substitutions of characters), for
    /// naming the nearest display names of an entry that matches none. Long keys are cut at 64
    /// characters: enough to rank names, and the work stays small.
    public func distance(to other: ChannelNameKey) -> Int {
        let a = Array(key.unicodeScalars.prefix(64)), b = Array(other.key.unicodeScalars.prefix(64))
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &row)
        }
        return previous[b.count]
    }
}
