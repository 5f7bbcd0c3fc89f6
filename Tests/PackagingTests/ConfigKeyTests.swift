import Foundation
import Testing

/// The README's config table and Schedules/config.example.json follow the parser: every key that
/// an `allowed:` list of the config reader knows (Sources/Job) is in the table, a top-level key in
/// exactly one row, and used by the example, but for a source's `command` and `timeoutSeconds`,
/// which the README names as left out (issue 39: `xmltv` was listed three times, `channels`,
/// `serve` and `changes` were missing from the example).
@Suite struct ConfigKeyTests {
    /// The keys of each `allowed: [...]` list in a Swift file, in the order they appear.
    func allowedLists(_ path: String) throws -> [[String]] {
        let text = try repoFile(path)
        var lists: [[String]] = []
        var rest = text[...]
        while let start = rest.range(of: "allowed: [") {
            let tail = rest[start.upperBound...]
            guard let end = tail.firstIndex(of: "]") else { break }
            let body = tail[..<end]
            lists.append(body.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
            rest = tail[end...]
        }
        return lists
    }

    /// The rows of the table under "## Configuration": first cell, whole row.
    func tableRows() throws -> [(keys: [String], row: String)] {
        let readme = try repoFile("README.md")
        let section = try #require(readme.components(separatedBy: "\n## Configuration\n").dropFirst().first)
        let lines = section.components(separatedBy: "\n").drop { !$0.hasPrefix("| key |") }.dropFirst(2).prefix { $0.hasPrefix("|") }
        return lines.map { line in
            let first = line.split(separator: "|", omittingEmptySubsequences: true).first.map(String.init) ?? ""
            let keys = first.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
                .map { $0.element.replacingOccurrences(of: "[]", with: "") }
            return (keys, line)
        }
    }

    /// Every key used anywhere in a JSON document.
    func keys(of value: Any) -> Set<String> {
        if let d = value as? [String: Any] { return d.reduce(into: Set(d.keys)) { $0.formUnion(keys(of: $1.value)) } }
        if let a = value as? [Any] { return a.reduce(into: Set()) { $0.formUnion(keys(of: $1)) } }
        return []
    }

    @Test func everyKeyThatTheParserKnowsIsDocumentedOnceAndInTheExample() throws {
        let lists = try allowedLists("Sources/Job/JobConfig.swift") + allowedLists("Sources/Job/ChannelAliasConfig.swift")
            + allowedLists("Sources/Job/PublishCommand.swift")
        let topLevel = try #require(lists.first { $0.contains("database") && $0.contains("sources") })
        #expect(topLevel.contains("xmltv") && topLevel.contains("serve"), "\(topLevel)")
        let nested = Set(lists.flatMap { $0 }).subtracting(topLevel)
        #expect(nested.contains("aliases") && nested.contains("bucket") && nested.contains("deleteRule"), "\(nested)")

        let rows = try tableRows()
        #expect(rows.count >= 10, "no config table found in README.md")
        let headed = rows.flatMap(\.keys)
        for key in topLevel {
            #expect(headed.filter { $0 == key }.count == 1, "README's config table heads \(headed.filter { $0 == key }.count) rows with `\(key)`")
        }
        for key in headed { #expect(topLevel.contains(key), "README's config table has a row for `\(key)`, which the parser refuses") }
        let table = rows.map(\.row).joined(separator: "\n")
        for key in nested { #expect(table.contains("`\(key)`") || table.contains("`\(key)[]`"), "README's config table does not mention `\(key)`") }

        let example = try JSONSerialization.jsonObject(with: Data(repoFile("Schedules/config.example.json").utf8))
        let used = keys(of: example)
        let leftOut: Set = ["command", "timeoutSeconds"]
        for key in Set(topLevel).union(nested).subtracting(leftOut) {
            #expect(used.contains(key), "Schedules/config.example.json does not use `\(key)`")
        }
        let readme = try repoFile("README.md")
        #expect(readme.contains("uses every key below but a source's `command` and\n`timeoutSeconds`"), "the README says what the example leaves out")
    }
}
