import Feeds
import Foundation
import Primitives
import TestSupport
import Testing

/// The guide's pages in a real browser on a real server (127.0.0.1): Debian's chromium, headless,
/// at 375 and 1280 px, on the Irish Freeview grab moved to today, with logos and pictures from a
/// loopback host. No page may scroll sideways, every image has alt text; the screenshots stay in
/// .build/screenshots/ (README "Serving") for a reviewer to look at.
@Suite(.enabled(if: Shared.hasFixtures, "needs ../shared/fixtures/xmltv beside the repository"),
       .enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"),
       .enabled(if: browserAvailable, "needs chromium, chromium-driver and Selenium in .venv (scripts/install-deps)"))
struct GuideBrowserTests {
    static let screenshots = repoRoot.appendingPathComponent(".build/screenshots").path

    @Test func theGuidesPagesRenderAtAPhonesWidthAndADesktops() throws {
        let images = try ImageServer()
        defer { images.stop() }
        let box = try freeviewSandbox(images: images)
        #expect(try box.run(["edit", "--config", "c.json", "Channel", "RTE2.ie", "favourite=true"]).status == 0)
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        defer { _ = server.stop() }
        let now = Int(Date().timeIntervalSince1970)
        // A programme on now with a picture, for its page.
        let programme = try sqlite(box, "SELECT c.xmltvId || '/' || p.start FROM Programme p JOIN Channel c ON c.rowid = p.channel WHERE p.start <= \(now) AND p.stop > \(now) AND p.icon IS NOT NULL AND p.desc IS NOT NULL ORDER BY c.xmltvId LIMIT 1")
        let parts = programme.split(separator: "/")
        try #require(parts.count == 2)
        let programmePath = "/programmes/\(parts[0])/\(UTCTime.compact(Int64(Int(parts[1])!)))"
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        let result = try Subprocess.run(venvPython, [
            repoRoot.appendingPathComponent("Tests/ServeTests/guide_check.py").path, server.base, "guide-token", Self.screenshots,
            "grid=/", "channel=/channels/RTE2.ie", "programme=\(programmePath)", "programmes=/model/Programme",
            "--signed-in", "edit=/model/Channel/RTE2.ie",
        ], timeout: 300)
        let lines = result.output
        #expect(result.exitStatus == 0, "\(lines)\n\(result.stderr)")
        #expect(lines.contains("done"))
        #expect(!lines.contains("FAIL"), "\(lines)")
        for name in ["grid", "channel", "programme", "programmes", "edit"] {
            for width in [375, 1280] {
                let size = (try? FileManager.default.attributesOfItem(atPath: Self.screenshots + "/\(name)-\(width).png")[.size] as? Int) ?? 0
                #expect(size > 5000, "\(name)-\(width).png")
            }
        }
    }
}
