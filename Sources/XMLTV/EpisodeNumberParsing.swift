// Parsing of the two episode-number systems whose meaning is standard enough to trust.

extension EpisodeNumber {
    /// `season[/count] . episode[/count] . part[/count]`, zero-based, any field may be empty;
    /// some feeds (freeview) write only `season.episode`.
    mutating func parseXMLTVNS() {
        let fields = raw.split(separator: ".", omittingEmptySubsequences: false)
        func parse(_ index: Int) -> (Int?, Int?) {
            guard index < fields.count else { return (nil, nil) }
            let halves = fields[index].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let number = Self.integer(halves[0]).map { $0 + 1 }
            let count = halves.count > 1 ? Self.integer(halves[1]) : nil
            return (number, count)
        }
        (season, seasonCount) = parse(0)
        (episode, episodeCount) = parse(1)
        (part, partCount) = parse(2)
    }

    /// "S04E14", "S4 E14", "S04E14P2" or "E14": already one-based.
    mutating func parseOnscreen() {
        var current: Character? = nil
        var digits = ""
        func flush() {
            guard let key = current, let value = Int(digits) else { return }
            switch key {
            case "S": season = value
            case "E": episode = value
            case "P": part = value
            default: break
            }
        }
        for c in raw.uppercased() {
            if c.isNumber, c.isASCII, current != nil {
                digits.append(c)
            } else if c == "S" || c == "E" || c == "P" {
                flush()
                current = c
                digits = ""
            } else if c != " " {
                flush()
                current = nil
                digits = ""
            }
        }
        flush()
    }

    static func integer(_ s: Substring) -> Int? {
        let trimmed = s.filter { $0 != " " && $0 != "\t" }
        guard !trimmed.isEmpty, trimmed.count <= 9 else { return nil }
        return Int(trimmed)
    }
}
