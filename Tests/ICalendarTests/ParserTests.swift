import Foundation
import ICalendar
import TestSupport
import Testing

/// The shared validator harness next to the repository, when its install.sh has run.
private enum Harness {
    static let directory = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/ical-validate")
    static let script = directory.appendingPathComponent("validate_ics.sh").path

    /// The harness's venv: $ICAL_VENV, the one scripts/validate-feeds makes, or install.sh's default.
    static let venv: String? = {
        let candidates: [String?] = [ProcessInfo.processInfo.environment["ICAL_VENV"],
                                     repositoryRoot.appendingPathComponent(".build/ical-validate-venv").path,
                                     directory.appendingPathComponent(".venv").path]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0 + "/bin/python") }
    }()

    static var isInstalled: Bool { venv != nil && FileManager.default.isExecutableFile(atPath: script) }
}

@Suite("Independent parsers read back what was written")
struct ParserTests {

    /// The tricky events plus a bulk of ordinary ones. A literal backslash before an "n" has a
    /// feed of its own: ics-py 0.7.3 decodes the correct `\\n` as a backslash and a newline.
    private static let feeds: [(name: String, events: [CalendarEvent])] = [
        ("tricky.ics", Samples.trickyEvents),
        ("literal-backslash-n.ics", [Samples.event(1, summary: "Not a newline: C:\\new\\notes \\n",
                                                   description: "C:\\new")]),
        ("bulk.ics", (0..<300).map { index in
            Samples.event(index + 100, summary: "Folge \(index): Über, unter; \\ x\(String(repeating: "é", count: index % 50))",
                          description: index % 2 == 0 ? nil : "Beschreibung\n" + String(repeating: "日本 ", count: index % 40),
                          categories: index % 3 == 0 ? [] : ["Serie", "Krimi, Thriller"],
                          location: index % 5 == 0 ? "Köln" : nil)
        }),
    ]

    private static func writeFeeds(to directory: URL) throws -> [String: [CalendarEvent]] {
        var written: [String: [CalendarEvent]] = [:]
        for feed in feeds {
            let path = directory.appendingPathComponent(feed.name).path
            try Data(ICalendarWriter.write(Samples.properties, events: feed.events)).write(to: URL(fileURLWithPath: path))
            written[path] = feed.events
        }
        return written
    }

    private static func iso(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    @Test("icalendar and ical decode every event exactly (byte-equal text, UTC times, categories)",
          .enabled(if: FeedParsers.isInstalled, "needs the venv with icalendar and ical: run scripts/install-deps"))
    func pythonParsers() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let written = try Self.writeFeeds(to: directory)

        let output = try FeedParsers.parse(written.keys.sorted())

        for (path, events) in written {
            for library in ["icalendar", "ical"] {
                let parsed = try #require(output.files[path]?[library], "\(library) gave nothing for \(path)")
                if let error = parsed.error {
                    Issue.record("\(library) \(output.versions[library] ?? "?") rejected \(path): \(error)")
                    continue
                }
                let decoded = parsed.events ?? []
                try #require(decoded.count == events.count, "\(library): \(decoded.count) events, wrote \(events.count)")
                for (source, got) in zip(events, decoded) {
                    compare(source, got, library: library)
                }
            }
        }
    }

    private func compare(_ source: CalendarEvent, _ got: ParseOutput.Event, library: String) {
        let context = "\(library), \(source.uid)"
        #expect(got.uid == source.uid, "\(context)")
        #expect(got.dtstart == Self.iso(source.start), "\(context)")
        #expect(got.dtend == Self.iso(source.end), "\(context)")
        #expect(sameBytes(got.summary, Samples.decodedText(source.summary)),
                "\(context): summary \(got.summary.debugDescription)")
        #expect(sameBytes(got.description, source.description.map(Samples.decodedText)),
                "\(context): description \(String(describing: got.description).debugDescription)")
        #expect(sameBytes(got.location, source.location.map(Samples.decodedText)), "\(context): location")
        #expect(got.sequence == source.sequence, "\(context)")

        let expectedURL = source.url.flatMap { url -> String? in
            url.contains(" ") ? nil : url.replacingOccurrences(of: "ä", with: "%C3%A4")
        }
        #expect(got.url == expectedURL, "\(context): url \(String(describing: got.url))")

        let expectedCategories = source.categories.map(Samples.decodedText).filter { !$0.isEmpty }
        if library == "ical" && expectedCategories.contains(where: { $0.contains(",") }) {
            // ical 14.3.1 splits CATEGORIES at escaped commas too ("a\,b" -> ["a\\", "b"]); the
            // file is right (raw checks and icalendar agree), so only the comma-free items are checked.
            let commaFree = expectedCategories.filter { !$0.contains(",") }
            #expect(commaFree.allSatisfy(got.categories.contains), "\(context): categories \(got.categories)")
        } else {
            #expect(got.categories.map { Array($0.utf8) } == expectedCategories.map { Array($0.utf8) },
                    "\(context): categories \(got.categories)")
        }
    }

    @Test("The shared validator harness (raw checks + 7 parsers) accepts a generated feed",
          .enabled(if: Harness.isInstalled,
                   "../shared/ical-validate is not installed: run scripts/validate-feeds once (it runs install.sh)"))
    func validatorHarness() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try Self.writeFeeds(to: directory).keys.sorted()
        let result = try run("/bin/bash", [Harness.script] + paths, environment: ["ICAL_VENV": Harness.venv ?? ""])
        let report = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "validate_ics.sh rejected a feed:\n\(report)")
        // Warnings are consumer-side data loss; the only one expected is ics-py's `\\n` bug.
        let knownQuirk = /^literal-backslash-n\.ics +ics +WARN/
        let warnings = report.split(separator: "\n").filter { $0.contains(" WARN") && $0.firstMatch(of: knownQuirk) == nil }
        #expect(warnings.isEmpty, "validate_ics.sh warned:\n\(warnings.joined(separator: "\n"))")
    }
}
