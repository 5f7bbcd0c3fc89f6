import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a cron or systemd run relies on: a signal stops the job between transactions with a
/// consistent database, --wait queues behind another run, logs can be JSON lines.
@Suite struct CronEtiquetteTests {
    func sqlite(_ box: Sandbox, _ sql: String) throws -> String {
        let r = try box.run([box.path("tv.sqlite"), sql], executable: "/usr/bin/sqlite3")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func sigtermStopsBetweenTransactionsAndLeavesAConsistentDatabase() throws {
        let box = try Sandbox()
        let channels = (0..<200).map { "c\($0).test" }
        try box.write("one.xml", makeGuide(channels: channels, programmes: 40))
        try box.write("two.xml", makeGuide(channels: ["other.test"], programmes: 4))
        try box.write("c.json", makeConfig(sources: [("one", box.path("one.xml")), ("two", box.path("two.xml"))],
                                           extra: #", "changeFiles": false"#))
        let process = try RunningProcess(Repository.tvimport, ["run", "--config", "c.json"], in: box.dir)
        Thread.sleep(forTimeInterval: 0.4)
        process.send(SIGTERM)
        let status = process.waitForExit()
        #expect(status == 75 || status == 0, "exit \(status)")
        #expect(try sqlite(box, "PRAGMA integrity_check") == "ok")
        // Either source is all there or not there at all.
        let one = Int(try sqlite(box, "SELECT COUNT(*) FROM Programme WHERE source = 'one'")) ?? -1
        let two = Int(try sqlite(box, "SELECT COUNT(*) FROM Programme WHERE source = 'two'")) ?? -1
        #expect(one == 0 || one == 8000, "source one has \(one) programmes")
        #expect(two == 0 || two == 4, "source two has \(two) programmes")
        if status == 75 { #expect(two == 0, "the second source started after the signal") }
    }

    @Test func waitQueuesBehindAnotherRun() throws {
        let box = try Sandbox()
        try box.write("g.xml", makeGuide())
        try box.write("c.json", makeConfig(sources: [("g", box.path("g.xml"))]))
        let fd = open(box.path("tv.sqlite.lock"), O_CREAT | O_RDWR, 0o644)
        #expect(flock(fd, LOCK_EX) == 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { flock(fd, LOCK_UN); close(fd) }
        let started = Date()
        let r = try box.run(["run", "--config", "c.json", "--wait", "--quiet"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(Date().timeIntervalSince(started) >= 0.9)
    }

    @Test func jsonLogsAreOneObjectPerLine() throws {
        let box = try Sandbox()
        try box.write("bad.xml", "<tv><programme start=\"2030\" channel=\"x\"><title>unclosed</programme></tv>")
        try box.write("c.json", makeConfig(sources: [("bad", box.path("bad.xml"))]))
        let r = try box.run(["run", "--config", "c.json", "--log-format", "json"])
        #expect(r.status == 65)
        let lines = r.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] as? String == "error")
            #expect((object?["message"] as? String)?.contains("bad") == true)
        }
    }
}
