import Foundation
import TestSupport
import Testing

let venvPython = repoRoot.appendingPathComponent(".venv/bin/python").path
var browserAvailable: Bool {
    let fm = FileManager.default
    return fm.isExecutableFile(atPath: "/usr/bin/chromium") && fm.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && fm.isExecutableFile(atPath: venvPython)
        && ((try? String(contentsOfFile: repoRoot.appendingPathComponent(".venv/.installed").path, encoding: .utf8))?.contains("selenium") ?? false)
}
var sqlite3Installed: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") }

/// The pages in a real browser: Debian's chromium, headless, driven by Selenium through
/// chromium-driver (Tests/ServeTests/browser_check.py).
@Suite(.enabled(if: binaryBuilt, "needs the built tvimport binary (swift build)"),
       .enabled(if: browserAvailable, "needs chromium, chromium-driver and Selenium in .venv (scripts/install-deps)"),
       .enabled(if: sqlite3Installed, "needs the sqlite3 shell (scripts/install-deps)"))
struct BrowserTests {
    func customName(_ box: ServeSandbox) throws -> String {
        let r = try box.run([box.path("tv.sqlite"), "SELECT coalesce(customName, '(null)') FROM Channel WHERE xmltvId = 'alpha.test'"],
                            executable: "/usr/bin/sqlite3")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func pagesRenderAndEditInChromium() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"browser-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        try FileManager.default.createDirectory(atPath: box.path("shots"), withIntermediateDirectories: true)
        let script = repoRoot.appendingPathComponent("Tests/ServeTests/browser_check.py").path
        let p = try RunningProcess(venvPython, [script, server.base, "browser-token", box.path("shots")], keepsInputOpen: true)
        func output() -> String { p.stdout }
        let deadline = Date().addingTimeInterval(180)
        p.wait(timeout: 180) { $0.stdout.contains("edited\n") }
        // The edit made in the browser is in the database.
        #expect(try customName(box) == "Browser Name")
        // The script may have ended already: `write` then fails without crashing the suite.
        if p.isRunning { p.write("\n") }
        let status = p.waitForExit(timeout: max(deadline.timeIntervalSinceNow, 0))
        let lines = output()
        #expect(status == 0, "\(lines)\n\(p.stderr)")
        #expect(lines.contains("done"))
        #expect(!lines.contains("FAIL"), "\(lines)")
        #expect(lines.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count >= 20, "\(lines)")
        // Undone in the browser, and the anonymous post changed nothing.
        #expect(try customName(box) == "(null)")
        for name in ["home", "channel", "channels", "programmes", "detail"] {
            #expect((FileManager.default.contents(atPath: box.path("shots/\(name).png"))?.count ?? 0) > 1000, "\(name).png")
        }
    }
}
