import Foundation
import TestSupport
import Testing

/// Undo on the pages says what it undoes (issue 33): an edit is undone in one click, named by its
/// object and attribute; an import (here a nightly run of the Irish Freeview guide) only after a
/// page that names its source, time and counts, and only the change that page named. The server
/// runs in this process (HummingbirdTesting's router).
@Suite(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"))
struct UndoPageTests {
    @Test func anEditIsUndoneInOneClickAndAnImportOnlyOnceConfirmed() async throws {
        let box = try ServeSandbox()
        // The grab moved two years ahead, so that it has a future.
        let guide = try String(contentsOfFile: Shared.fixture("freeview_ie_2025-10-25T1606.xml"), encoding: .utf8)
            .replacingOccurrences(of: "start=\"2025", with: "start=\"2027").replacingOccurrences(of: "stop=\"2025", with: "stop=\"2027")
        try box.write("guide.xml", guide)
        try box.write("c.json", makeConfig(box, extra: ", \"serve\": {\"token\": \"s3cret-token\"}"))
        #expect(try box.nightlyRun() == .success)
        try await inProcess(box) { client in
        func programmes() throws -> String {
            try Subprocess.run("sqlite3", [box.path("tv.sqlite"), "SELECT count(*) FROM Programme"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let stored = try programmes()
        #expect(Int(stored) ?? 0 > 1000)

        // An edit in a session: the button then names it.
        let jar = CookieJar()
        #expect(try await client.fetch("/login", form: [("token", "s3cret-token")], cookies: jar).status == 303)
        let detail = "/model/Channel/RTE2.ie"
        let page = try await client.fetch(detail, cookies: jar).text
        let csrfRange = try #require(page.range(of: "name=\"csrf\" value=\""))
        let csrf = String(page[csrfRange.upperBound...].prefix { $0 != "\"" })
        #expect(try await client.fetch(detail, form: [("csrf", csrf), ("customName", "Two")], cookies: jar).status == 303)
        #expect(try await client.fetch(detail, cookies: jar).text.contains("Undo the edit of Channel RTE2.ie (customName)"), "the button names the edit")

        // One click undoes the edit, and the page says which.
        let undone = try await client.fetch("/undo", form: [("csrf", csrf)], cookies: jar)
        #expect(undone.status == 200)
        #expect(undone.text.contains("undo of the edit of Channel RTE2.ie (customName)"), "\(undone.text)")
        #expect(!(try await client.fetch(detail, cookies: jar).text.contains(">Two<")))

        // The next undo is the night's run: first a page that names it; nothing changes yet.
        let asked = try await client.fetch("/undo", form: [("csrf", csrf)], cookies: jar)
        #expect(asked.status == 200)
        #expect(asked.text.contains("Undo the run of source g (\(stored) inserted, 0 updated, 0 deleted programmes), made "), "\(asked.text)")
        #expect(asked.text.contains("Undo this run"))
        #expect(try programmes() == stored)
        let confirmRange = try #require(asked.text.range(of: "name=\"confirm\" value=\""))
        let runID = String(asked.text[confirmRange.upperBound...].prefix { $0 != "\"" })
        // A confirmation of another change undoes nothing: the page asks again.
        let stale = try await client.fetch("/undo", form: [("csrf", csrf), ("confirm", "20000101T000000Z-001")], cookies: jar)
        #expect(stale.text.contains("Undo this run"))
        #expect(try programmes() == stored)
        // Confirmed: undone, and the feeds of the config follow.
        let confirmed = try await client.fetch("/undo", form: [("csrf", csrf), ("confirm", runID)], cookies: jar)
        #expect(confirmed.status == 200, "\(confirmed.text)")
        #expect(confirmed.text.contains("undo of the run of source g"))
        #expect(try programmes() == "0")
        let feeds = try FileManager.default.contentsOfDirectory(atPath: box.path("feeds")).filter { $0.hasSuffix(".ics") && $0 != "news.ics" }
        for feed in feeds {
            let text = try String(contentsOfFile: box.path("feeds/" + feed), encoding: .utf8)
            #expect(!text.contains("BEGIN:VEVENT"), "\(feed) still lists programmes after the undo")
        }
        }
    }
}
