/// The command a mistyped word most likely meant.
///
/// ```swift
/// CommandSuggestion.unknownCommandMessage("stauts", known: ["run", "status"])
/// // "unknown command 'stauts': did you mean 'status'? (commands: run, status)"
/// ```
public enum CommandSuggestion {
    /// A message for a first argument that is neither an option nor a command, nil when it is one
    /// of them. (`run` takes no arguments, so a bare word there is always a mistake.)
    /// `asked` starts the message: "unknown command" for a mistyped command, "no command" for
    /// `help WORD`.
    public static func unknownCommandMessage(_ word: String, known: [String], asked: String = "unknown command") -> String? {
        guard !word.hasPrefix("-"), !known.contains(word) else { return nil }
        let list = "(commands: \(known.joined(separator: ", ")))"
        if let best = nearest(word, in: known) { return "\(asked) '\(word)': did you mean '\(best)'? \(list)" }
        return "\(asked) '\(word)' \(list)"
    }

    /// "unknown option '--verison': did you mean --version?" when a long option of `help` (a
    /// command's help text) is within reach, nil otherwise.
    public static func unknownOptionMessage(_ option: String, help: String) -> String? {
        guard option.hasPrefix("--") else { return nil }
        let options = Set(help.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") })
            .map(String.init).filter { $0.hasPrefix("--") && $0.count > 2 })
        guard let best = nearest(option, in: options.sorted()), best != option else { return nil }
        return "unknown option '\(option)': did you mean \(best)?"
    }

    /// The closest name within two edits (or of which the word is a prefix), if any.
    public static func nearest(_ word: String, in names: [String]) -> String? {
        let lowered = word.lowercased()
        if let prefixed = names.first(where: { $0.hasPrefix(lowered) && lowered.count >= 2 }) { return prefixed }
        let scored = names.map { ($0, editDistance(lowered, $0)) }.filter { $0.1 <= max(1, min(2, word.count / 3)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Damerau-Levenshtein distance (adjacent swaps count once: "stauts" is one edit from "status").
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
