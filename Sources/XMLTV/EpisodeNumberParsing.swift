// Parsing of the two episode-number systems whose meaning is standard enough to trust.
// Works on UTF-8 bytes: it runs for most programmes of a guide.

extension EpisodeNumber {
    /// `season[/count] . episode[/count] . part[/count]`, zero-based, any field may be empty;
    /// some feeds (freeview) write only `season.episode`.
    mutating func parseXMLTVNS() {
        // Three fields kept in locals, not arrays: this runs for most programmes of a guide.
        var numbers: (Int?, Int?, Int?) = (nil, nil, nil)
        var counts: (Int?, Int?, Int?) = (nil, nil, nil)
        var field = 0, inCount = false
        var value = 0, digits = 0, valid = true
        func finish() {
            guard field < 3 else { return }
            let parsed: Int? = valid && digits > 0 ? value : nil
            if inCount {
                switch field {
                case 0: counts.0 = parsed
                case 1: counts.1 = parsed
                default: counts.2 = parsed
                }
            } else {
                let number = parsed.map { $0 + 1 }
                switch field {
                case 0: numbers.0 = number
                case 1: numbers.1 = number
                default: numbers.2 = number
                }
            }
            value = 0; digits = 0; valid = true
        }
        for c in raw.utf8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits < 9 { value = value * 10 + Int(c - 48); digits += 1 } else { valid = false }
            case UInt8(ascii: " "), 9:
                continue
            case UInt8(ascii: "/"):
                finish()
                inCount = true
            case UInt8(ascii: "."):
                finish()
                field += 1
                inCount = false
            default:
                valid = false
            }
        }
        finish()
        (season, seasonCount) = (numbers.0, counts.0)
        (episode, episodeCount) = (numbers.1, counts.1)
        (part, partCount) = (numbers.2, counts.2)
    }

    /// "S04E14", "S4 E14", "S04E14P2" or "E14": already one-based.
    mutating func parseOnscreen() {
        var key: UInt8 = 0
        var value = 0, digits = 0
        func flush() {
            if digits > 0 {
                switch key {
                case UInt8(ascii: "S"): season = value
                case UInt8(ascii: "E"): episode = value
                case UInt8(ascii: "P"): part = value
                default: break
                }
            }
            value = 0; digits = 0
        }
        for c in raw.utf8 {
            let upper = c >= 97 && c <= 122 ? c - 32 : c
            if c >= 48 && c <= 57, key != 0 {
                if digits < 9 { value = value * 10 + Int(c - 48); digits += 1 }
            } else if upper == UInt8(ascii: "S") || upper == UInt8(ascii: "E") || upper == UInt8(ascii: "P") {
                flush()
                key = upper
            } else if c != 32 {
                flush()
                key = 0
            }
        }
        flush()
    }
}
