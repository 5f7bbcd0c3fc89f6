import Foundation
import Listings
import Merge
import ObjectGraph
import Testing
import XMLTVImport

/// The report's list of changes is read from the store's change stream (`MergeChangeCollector`):
/// what it says must be what the merge did, members inside their owners, and a dry run must list
/// exactly what the real run then does.
@Suite struct ReportedChangesTests {
    func importing(_ h: Harness, _ channels: [String], _ programmes: [GP], dryRun: Bool = false) throws -> SourceImportReport {
        var options = h.options(force: true)
        options.collectChanges = true
        return try importGuide(into: h.store, files: [h.dir.write(guideXML(channels: channels, programmes: programmes))],
                               options: options, dryRun: dryRun)
    }

    /// One line per change: kind, entity, owner, attributes (old → new) and members (+added −removed).
    func lines(_ report: SourceImportReport) -> [String] {
        report.changes.map { c in
            let attributes = c.attributes.map { "\($0.name): \($0.old) → \($0.new)" }.joined(separator: ", ")
            let members = c.relationships.map { r in
                "\(r.name) +\(r.added.map { $0.map(\.description).joined(separator: "/") }) −\(r.removed.map { $0.map(\.description).joined(separator: "/") })"
            }.joined(separator: ", ")
            return "\(c.kind.rawValue) \(c.entity) \(c.owner ?? "-") [\(attributes)] [\(members)]"
        }
    }

    @Test func theReportListsWhatTheMergeDidWithMembersInsideTheirOwners() throws {
        let h = try Harness()
        let news = GP(channel: "a", start: base, stop: base + hour, title: "News", categories: [("News", "en")], credits: [("presenter", "Ann")])
        let film = GP(channel: "a", start: base + hour, stop: base + 2 * hour, title: "Film", categories: [("Film", "en")])
        let late = GP(channel: "a", start: base + 2 * hour, stop: base + 3 * hour, title: "Late")
        let final = GP(channel: "a", start: base + 3 * hour, stop: base + 4 * hour, title: "Final")
        let other = GP(channel: "b", start: base, stop: base + hour, title: "Other")
        let first = try importing(h, ["a", "b"], [news, film, late, final, other])
        let firstLines = lines(first)
        #expect(firstLines.filter { $0.hasPrefix("insert Channel") }.count == 2)
        #expect(firstLines.filter { $0.hasPrefix("insert Programme") }.count == 5)
        #expect(!firstLines.contains { $0.contains(" Credit ") || $0.contains(" Category ") }, "members are listed inside their owners: \(firstLines)")
        #expect(firstLines.contains { $0.hasPrefix("insert Channel - [xmltvId: null → a") }, "\(firstLines)")
        #expect(firstLines.contains { $0.hasPrefix("insert Programme a [") && $0.contains("title: null → News")
            && $0.contains("credits +[\"presenter/Ann\"]") && $0.contains("categories +[\"News/en\"]") }, "\(firstLines)")

        // News gets a new title, Film another category, Late is gone, channel b is gone with its programme.
        var renamed = news
        renamed.title = "News at Ten"
        var recategorised = film
        recategorised.categories = [("Drama", "en")]
        let plan = try importing(h, ["a"], [renamed, recategorised, final], dryRun: true)
        let real = try importing(h, ["a"], [renamed, recategorised, final])
        #expect(lines(plan) == lines(real), "a dry run lists what the real run does")
        #expect(lines(real) == [
            "delete Channel - [xmltvId: b → null] []",
            "update Programme a [title: News → News at Ten] []",
            "update Programme a [] [categories +[\"Drama/en\"] −[\"Film/en\"]]",
            "delete Programme a [start: \(Value.date(base + 2 * hour)) → null, clumpIndex: 0 → null] []",
        ], "\(lines(real))")
        #expect(real.programmes.updated == 2 && real.programmes.deleted == 2, "b's programme is deleted with b, counted, not listed")
        #expect(real.channels.deleted == 1 && real.channels.updated == 0)

        // Nothing changed: nothing listed.
        #expect(lines(try importing(h, ["a"], [renamed, recategorised, final])).isEmpty)
    }
}
