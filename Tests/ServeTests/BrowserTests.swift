import Foundation
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
        let input = Pipe()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: venvPython)
        p.arguments = [script, server.base, "browser-token", box.path("shots")]
        let outFile = box.path("browser.out"), errFile = box.path("browser.err")
        FileManager.default.createFile(atPath: outFile, contents: nil)
        FileManager.default.createFile(atPath: errFile, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outFile))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
        p.standardInput = input
        try p.run()
        func output() -> String { (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "" }
        let deadline = Date().addingTimeInterval(180)
        while !output().contains("edited\n") && p.isRunning && Date() < deadline { usleep(100_000) }
        // The edit made in the browser is in the database.
        #expect(try customName(box) == "Browser Name")
        // The script may have ended already: a write to its closed pipe must fail, not crash the suite.
        signal(SIGPIPE, SIG_IGN)
        if p.isRunning { try? input.fileHandleForWriting.write(contentsOf: Data("\n".utf8)) }
        while p.isRunning && Date() < deadline { usleep(100_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let lines = output()
        #expect(p.terminationStatus == 0, "\(lines)\n\((try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "")")
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
